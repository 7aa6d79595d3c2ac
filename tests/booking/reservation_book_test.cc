// The reservation book: where a booking fits, why not, the earliest start, and — against a
// brute-force oracle over every instant — that a million random books, cancels and extensions
// never double-book a GPU and never refuse what fits.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "booking/reservation_book.h"

namespace allot {
namespace {

constexpr int64_t kH = 3600 * 1000;

class ReservationBookTest : public ::testing::Test {
 protected:
  NodeId Add(const std::string& name, int gpus, const std::string& rack = "r1", const std::string& model = "H100-80GB",
             Sharing sharing = Sharing::kExclusive) {
    NodeSpec s;
    s.name = name;
    s.rack = rack;
    s.cpu = 64000;
    s.memory = 512 * 1024;
    s.gpu_model = model;
    s.gpu_count = gpus;
    s.sharing = sharing;
    auto id = fleet_.AddNode(s, names_);
    EXPECT_TRUE(id.has_value()) << id.error().message();
    return *id;
  }
  ResourceId H100() { return names_.Find("gpu/H100-80GB"); }
  CapacityAsk Gpus(int n, std::optional<DomainKind> within = std::nullopt) { return {H100(), n, 0, within}; }

  Fleet fleet_;
  ResourceNames names_;
  ReservationBook book_;
};

TEST_F(ReservationBookTest, ABookingTakesTheNodeThatCoversItMostTightlyAndFewestNodes) {
  NodeId a = Add("a", 8), b = Add("b", 4), c = Add("c", 8);
  auto fit = book_.Find(fleet_, names_, Gpus(4), {0, kH});
  ASSERT_TRUE(fit.ok()) << fit.shortfall->reason;
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{b, 4}}));
  fit = book_.Find(fleet_, names_, Gpus(12), {0, kH});
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{a, 8}, {b, 4}})) << "the freest first, then what covers the rest";
  (void)c;
}

// An untrusted tenant's ask (confined_only) is offered only nodes whose agent confines tasks in
// every way: not those labelled isolation=partial; an unlabelled node (no agent) is offered.
TEST_F(ReservationBookTest, AnUntrustedTenantsAskIsNotOfferedNodesWhoseIsolationIsPartial) {
  NodeId a = Add("a", 8), b = Add("b", 8), c = Add("c", 8);
  fleet_.SetLabels(a, {{"isolation", "partial"}});
  fleet_.SetLabels(b, {{"isolation", "full"}});
  CapacityAsk confined = Gpus(8);
  confined.confined_only = true;
  auto fit = book_.Find(fleet_, names_, Gpus(8), {0, kH});
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{a, 8}})) << "the lowest id for a trusted ask";
  fit = book_.Find(fleet_, names_, confined, {0, kH});
  ASSERT_TRUE(fit.ok()) << fit.shortfall->reason;
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{b, 8}}));
  confined.gpus = 24;
  EXPECT_FALSE(book_.Find(fleet_, names_, confined, {0, kH}).ok()) << "only b and c: 16 GPUs";
  // The earliest start looks at the same nodes: with b and c booked for the first hour, not a.
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, kH}, {{b, 8}, {c, 8}}).ok());
  confined.gpus = 8;
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, confined, 0, kH, 10 * kH), std::optional<int64_t>(kH));
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(8), 0, kH, 10 * kH), std::optional<int64_t>(0));
}

TEST_F(ReservationBookTest, OverlappingWindowsShareANodeOnlyUpToItsGpus) {
  NodeId a = Add("a", 8);
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, 2 * kH}, {{a, 6}}).ok());
  EXPECT_EQ(book_.BookedOn(a, {kH, 3 * kH}), 6);
  EXPECT_EQ(book_.BookedOn(a, {2 * kH, 3 * kH}), 0) << "windows are half-open";
  auto fit = book_.Find(fleet_, names_, Gpus(4), {kH, 3 * kH});
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.shortfall->reason,
            "only 2 of 4 GPUs of H100-80GB are free for the whole window (ready, whole-GPU nodes less other bookings)");
  EXPECT_EQ(fit.shortfall->colliding, (std::vector<BookingId>{BookingId(1)}));
  Status s = book_.Book(fleet_, BookingId(2), {kH, 3 * kH}, {{a, 4}});
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "node 'a' has 2 GPUs not booked for the whole window; 4 asked");
  EXPECT_EQ(book_.bookings().size(), 1u) << "a refused booking changes nothing";
  EXPECT_TRUE(book_.Book(fleet_, BookingId(2), {2 * kH, 3 * kH}, {{a, 8}}).ok()) << "back to back";
}

TEST_F(ReservationBookTest, ATopologyAskStaysInOneDomainAndSaysWhichCameClosest) {
  NodeId a = Add("a", 8, "r1"), b = Add("b", 8, "r2"), c = Add("c", 8, "r2");
  auto fit = book_.Find(fleet_, names_, Gpus(16, DomainKind::kRack), {0, kH});
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{b, 8}, {c, 8}}));
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, kH}, {{c, 1}}).ok());
  fit = book_.Find(fleet_, names_, Gpus(16, DomainKind::kRack), {0, kH});
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.shortfall->reason,
            "no single rack has 16 GPUs of H100-80GB free for the whole window; the most is 15 (rack 'default/r2')");
  EXPECT_TRUE(book_.Find(fleet_, names_, Gpus(16), {0, kH}).ok()) << "without a topology, three nodes do";
  (void)a;
}

TEST_F(ReservationBookTest, WholeNodesAreNodesWithNothingBookedAndOnlyReadyWholeGpuNodesAreOffered) {
  NodeId a = Add("a", 8), b = Add("b", 8);
  Add("m", 8, "r1", "H100-80GB", Sharing::kMig);
  Add("x", 8, "r1", "A100-80GB");
  NodeId d = Add("d", 8);
  fleet_.SetCondition(d, NodeCondition::kCordoned);
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, kH}, {{a, 1}}).ok());
  CapacityAsk nodes{H100(), 0, 2, std::nullopt};
  auto fit = book_.Find(fleet_, names_, nodes, {0, kH});
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.shortfall->reason, "only 1 of 2 whole nodes of H100-80GB are free for the whole window (ready, whole-GPU "
                                   "nodes less other bookings)");
  nodes.nodes = 1;
  fit = book_.Find(fleet_, names_, nodes, {0, kH});
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit.holds, (std::vector<NodeHold>{{b, 8}}));
}

TEST_F(ReservationBookTest, TheEarliestStartIsWhenEnoughBookingsHaveEnded) {
  NodeId a = Add("a", 8), b = Add("b", 8);
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, 5 * kH}, {{a, 8}}).ok());
  ASSERT_TRUE(book_.Book(fleet_, BookingId(2), {0, 3 * kH}, {{b, 4}}).ok());
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(4), 0, kH, 100 * kH), 0);
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(8), 0, kH, 100 * kH), 3 * kH);
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(12), 0, kH, 100 * kH), 5 * kH);
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(17), 0, kH, 100 * kH), std::nullopt) << "never: 16 GPUs in all";
  EXPECT_EQ(book_.EarliestStart(fleet_, names_, Gpus(12), 0, kH, 4 * kH), std::nullopt) << "past the horizon";
}

TEST_F(ReservationBookTest, ExtendingNeedsItsHoldsFreeShorteningAndCancellingAlwaysWork) {
  NodeId a = Add("a", 8);
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, kH}, {{a, 6}}).ok());
  ASSERT_TRUE(book_.Book(fleet_, BookingId(2), {2 * kH, 3 * kH}, {{a, 4}}).ok());
  EXPECT_TRUE(book_.SetEnd(fleet_, BookingId(1), 2 * kH).ok());
  Status s = book_.SetEnd(fleet_, BookingId(1), 3 * kH);
  EXPECT_EQ(s.message(), "node 'a' has 4 GPUs not booked for the whole window; 6 asked");
  EXPECT_EQ(book_.Get(BookingId(1))->window.end_ms, 2 * kH) << "a refused extension changes nothing";
  EXPECT_FALSE(book_.SetEnd(fleet_, BookingId(1), 0).ok());
  book_.Cancel(BookingId(2));
  EXPECT_TRUE(book_.SetEnd(fleet_, BookingId(1), 3 * kH).ok());
  EXPECT_EQ(book_.BookedOn(a, {0, 10 * kH}), 6);
}

TEST_F(ReservationBookTest, BadHoldsAreRefusedNamingWhatIsWrong) {
  NodeId a = Add("a", 8);
  NodeId m = Add("m", 8, "r1", "H100-80GB", Sharing::kMig);
  EXPECT_EQ(book_.Book(fleet_, BookingId(1), {kH, kH}, {{a, 1}}).message(),
            "window: ends at or before it starts; expected an end after the start");
  EXPECT_EQ(book_.Book(fleet_, BookingId(1), {0, kH}, {{a, 9}}).message(),
            "holds: 9 GPUs on node 'a'; expected 1 to its 8 whole GPUs");
  EXPECT_EQ(book_.Book(fleet_, BookingId(1), {0, kH}, {{m, 1}}).message(),
            "holds: 1 GPUs on node 'm'; expected 1 to its 8 whole GPUs");
  EXPECT_EQ(book_.Book(fleet_, BookingId(1), {0, kH}, {{a, 1}, {a, 1}}).message(),
            "holds: node 'a' twice; expected each node once");
  ASSERT_TRUE(book_.Book(fleet_, BookingId(1), {0, kH}, {{a, 1}}).ok());
  EXPECT_FALSE(book_.Book(fleet_, BookingId(1), {2 * kH, 3 * kH}, {{a, 1}}).ok()) << "an id books once";
}

// The earliest start, whose search skips stretches of time by a bound kept per time bucket,
// against the plain search: every whole step from `from` on, tried in order with Find. Random
// books and overlays (running jobs) on a small fleet, asks by GPU, by rack and by whole node.
TEST_F(ReservationBookTest, TheEarliestStartAgreesWithTryingEveryStepInOrder) {
  const int kNodes = 5, kSteps = 60;
  for (int i = 0; i < kNodes; ++i) Add("n" + std::to_string(i), i < 2 ? 8 : 4, i % 2 ? "r2" : "r1");
  std::mt19937_64 rng(16);
  int found = 0, none = 0;
  for (int round = 0; round < 300; ++round) {
    ReservationBook book;
    ReservationBook::BusyByNode jobs;
    uint32_t next = 0;
    for (int b = 0; b < 12; ++b) {
      int64_t start = static_cast<int64_t>(rng() % (kSteps - 1));
      Window w{start * kH, (start + 1 + static_cast<int64_t>(rng() % 12)) * kH};
      auto fit = book.Find(fleet_, names_, Gpus(1 + static_cast<int>(rng() % 8)), w);
      if (fit.ok()) {
        ASSERT_TRUE(book.Book(fleet_, BookingId(next++), w, fit.holds).ok());
      }
    }
    for (int j = 0; j < 8; ++j) {
      jobs.Add(NodeId(static_cast<uint32_t>(rng() % kNodes)),
               {{0, (1 + static_cast<int64_t>(rng() % 20)) * kH}, 1 + static_cast<int32_t>(rng() % 3), BookingId(1000 + j)});
    }
    jobs.Seal(kNodes);
    for (int q = 0; q < 20; ++q) {
      int kind = static_cast<int>(rng() % 3);
      CapacityAsk ask = kind == 0   ? Gpus(1 + static_cast<int>(rng() % 32))
                        : kind == 1 ? Gpus(1 + static_cast<int>(rng() % 10), DomainKind::kRack)
                                    : CapacityAsk{H100(), 0, 1 + static_cast<int>(rng() % 3), std::nullopt};
      int64_t from = static_cast<int64_t>(rng() % 20) * kH + (rng() % 2 ? 0 : kH / 2);
      int64_t duration = (1 + static_cast<int64_t>(rng() % 10)) * kH;
      int64_t horizon = from + 40 * kH;
      std::optional<int64_t> plain;
      // Starts change feasibility only at `from` and at ends, which fall on whole or half hours.
      for (int64_t t = from; t <= horizon && !plain; t += kH / 2) {
        if (book.Find(fleet_, names_, ask, {t, t + duration}, BookingId(), &jobs).ok()) plain = t;
      }
      auto fast = book.EarliestStart(fleet_, names_, ask, from, duration, horizon, &jobs);
      ASSERT_EQ(fast, plain) << "round " << round << " query " << q << " from " << from << " duration " << duration;
      (fast ? found : none)++;
    }
  }
  EXPECT_GT(found, 1000);
  EXPECT_GT(none, 100) << "some asks never fit: the test covers both answers";
}

// A million random operations on a small fleet, each checked against the oracle: a grid of booked
// GPUs per node and time step. No instant ever holds more than a node's GPUs; an ask without a
// topology that the grid says fits is never refused; a refused extension or booking changes
// nothing.
TEST_F(ReservationBookTest, AMillionRandomOperationsNeverDoubleBookAndNeverRefuseWhatFits) {
  const int kNodes = 4, kSteps = 48;
  std::vector<NodeId> nodes;
  for (int i = 0; i < kNodes; ++i) nodes.push_back(Add("n" + std::to_string(i), i < 2 ? 8 : 4, i % 2 ? "r2" : "r1"));
  std::vector<std::vector<int>> grid(kNodes, std::vector<int>(kSteps, 0));
  std::mt19937_64 rng(20261125);
  auto step = [](int64_t t) { return static_cast<int>(t / kH); };
  auto mark = [&](const ReservationBook::Booking& b, int sign) {
    for (const NodeHold& h : b.holds) {
      for (int t = step(b.window.start_ms); t < step(b.window.end_ms); ++t) grid[h.node.value()][t] += sign * h.gpus;
    }
  };
  uint32_t next = 0;
  int64_t booked = 0, refused = 0, extended = 0, cancelled = 0;
  for (int op = 0; op < 1000000; ++op) {
    int kind = static_cast<int>(rng() % 10);
    if (kind < 6 || book_.bookings().empty()) {
      int64_t start = static_cast<int64_t>(rng() % (kSteps - 1));
      int64_t len = 1 + static_cast<int64_t>(rng() % std::min<int64_t>(8, kSteps - start));
      Window w{start * kH, (start + len) * kH};
      bool topo = rng() % 4 == 0;
      CapacityAsk ask = Gpus(1 + static_cast<int>(rng() % 12), topo ? std::optional(DomainKind::kRack) : std::nullopt);
      // The oracle: each node's GPUs free at every step of the window.
      int64_t free_total = 0;
      for (int n = 0; n < kNodes; ++n) {
        int most = 0;
        for (int t = static_cast<int>(start); t < start + len; ++t) most = std::max(most, grid[n][t]);
        free_total += fleet_.node(nodes[n]).gpu_count - most;
      }
      auto fit = book_.Find(fleet_, names_, ask, w);
      if (!topo) {
        ASSERT_EQ(fit.ok(), free_total >= ask.gpus) << "op " << op;
      }
      if (!fit.ok()) {
        ++refused;
        continue;
      }
      BookingId id(next++);
      ASSERT_TRUE(book_.Book(fleet_, id, w, fit.holds).ok()) << "op " << op;
      mark(*book_.Get(id), +1);
      ++booked;
    } else {
      auto it = book_.bookings().begin();
      std::advance(it, static_cast<long>(rng() % book_.bookings().size()));
      BookingId id = it->first;
      ReservationBook::Booking before = it->second;
      if (kind < 8) {
        mark(before, -1);
        book_.Cancel(id);
        ++cancelled;
      } else {
        int64_t end = std::min<int64_t>(kSteps, step(before.window.end_ms) + 1 + static_cast<int64_t>(rng() % 4)) * kH;
        mark(before, -1);
        bool fits = true;
        for (const NodeHold& h : before.holds) {
          for (int t = step(before.window.start_ms); t < step(end); ++t) {
            fits &= grid[h.node.value()][t] + h.gpus <= fleet_.node(h.node).gpu_count;
          }
        }
        Status s = book_.SetEnd(fleet_, id, end);
        ASSERT_EQ(s.ok(), fits) << "op " << op << ": " << s.message();
        mark(*book_.Get(id), +1);
        extended += s.ok();
      }
    }
    if (op % 1000 == 0) {
      for (int n = 0; n < kNodes; ++n) {
        for (int t = 0; t < kSteps; ++t) ASSERT_LE(grid[n][t], fleet_.node(nodes[n]).gpu_count) << "op " << op;
      }
    }
    // Keep the book from filling up for good: clear it now and then.
    if (book_.bookings().size() > 40) {
      while (!book_.bookings().empty()) {
        mark(book_.bookings().begin()->second, -1);
        book_.Cancel(book_.bookings().begin()->first);
      }
    }
  }
  for (int n = 0; n < kNodes; ++n) {
    for (int t = 0; t < kSteps; ++t) {
      ASSERT_GE(grid[n][t], 0);
      ASSERT_LE(grid[n][t], fleet_.node(nodes[n]).gpu_count);
      int32_t booked_at = book_.BookedOn(nodes[n], {t * kH, (t + 1) * kH});
      ASSERT_EQ(booked_at, grid[n][t]) << "the book and the oracle agree at node " << n << " step " << t;
    }
  }
  std::cout << "booked " << booked << ", refused " << refused << ", extended " << extended << ", cancelled " << cancelled
            << "\n";
  EXPECT_GT(booked, 100000);
  EXPECT_GT(refused, 10000);
  EXPECT_GT(extended, 10000);
  EXPECT_GT(cancelled, 10000);
}

}  // namespace
}  // namespace allot
