// Reservations in the state (issue 16): booked with planned holds, refused whole when a hold
// would book a GPU twice, cancelled, a window's end moved; through the journal's codec and a
// snapshot unchanged; a tenant with reservations to come is not removed.
#include <gtest/gtest.h>

#include "state/cluster_state.h"
#include "state/event_codec.h"
#include "state/snapshot.h"

namespace allot {
namespace {

constexpr int64_t kH = 3600 * 1000;

class ReservationStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(Apply(NodeAdded{NodeSpec{"n" + std::to_string(i), "z", "r", "", 64000, 1 << 19, "H100-80GB", 8}}).ok());
    }
    for (const char* path : {"org", "org/a", "org/b"}) {
      TenantSpec t;
      t.path = path;
      ASSERT_TRUE(Apply(TenantUpserted{t}).ok());
    }
  }
  Status Apply(EventBody body, int64_t at = 0) {
    Event e{at, std::move(body)};
    Status s = state_.apply(e);
    if (s.ok()) events_.push_back(e);
    return s;
  }
  ReservationSpec Spec(const std::string& name, const std::string& tenant, int gpus, std::vector<Window> windows) {
    ReservationSpec s;
    s.name = name;
    s.tenant = state_.tenants().Find(tenant);
    s.gpu_resource = state_.resource_names().Find("gpu/H100-80GB");
    s.gpus = gpus;
    s.windows = std::move(windows);
    return s;
  }
  NodeId N(int i) { return NodeId(static_cast<uint32_t>(i)); }

  ClusterState state_;
  std::vector<Event> events_;
};

TEST_F(ReservationStateTest, ABookingHoldsItsNodesAndACollidingOneIsRefusedWhole) {
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 12, {{0, 2 * kH}, {24 * kH, 26 * kH}}),
                                      {{{N(0), 8}, {N(1), 4}}, {{N(0), 8}, {N(1), 4}}}})
                  .ok());
  EXPECT_EQ(state_.book().BookedOn(N(1), {kH, 2 * kH}), 4);
  ASSERT_EQ(state_.reservations().size(), 1u);
  EXPECT_EQ(state_.FindReservation(state_.tenants().Find("org/a"), "a"), ReservationId(0));
  // Its first window fits beside a; its second takes 6 of node 1, where a holds 4 of 8.
  Status s = Apply(ReservationBooked{Spec("b", "org/b", 6, {{2 * kH, 3 * kH}, {25 * kH, 27 * kH}}), {{{N(1), 6}}, {{N(1), 6}}}});
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "reservation 'b' windows[1]: node 'n1' has 4 GPUs not booked for the whole window; 6 asked");
  EXPECT_EQ(state_.reservations().size(), 1u);
  EXPECT_EQ(state_.book().BookedOn(N(1), {2 * kH, 3 * kH}), 0) << "the first window was undone";
  // Holds that do not add up, or span two racks for a rack reservation, are refused too.
  s = Apply(ReservationBooked{Spec("c", "org/b", 6, {{5 * kH, 6 * kH}}), {{{N(1), 5}}}});
  EXPECT_EQ(s.message(), "reservation 'c' windows[0]: the holds give 5 GPUs; expected 6");
  s = Apply(ReservationBooked{Spec("a", "org/a", 1, {{5 * kH, 6 * kH}}), {{{N(1), 1}}}});
  EXPECT_EQ(s.code(), Code::kConflict) << s.message();
  EXPECT_TRUE(Apply(ReservationBooked{Spec("a", "org/b", 1, {{5 * kH, 6 * kH}}), {{{N(1), 1}}}}).ok())
      << "another tenant may use the same name";
}

TEST_F(ReservationStateTest, CancelFreesEveryWindowAndEndsMoveOnlyWhereFree) {
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 8, {{0, 2 * kH}}), {{{N(0), 8}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 8, {{3 * kH, 4 * kH}}), {{{N(0), 8}}}}).ok());
  EXPECT_TRUE(Apply(ReservationEndSet{ReservationId(0), 0, 3 * kH}).ok());
  Status s = Apply(ReservationEndSet{ReservationId(0), 0, 4 * kH});
  EXPECT_EQ(s.message(), "reservation 'a' windows[0]: node 'n0' has 0 GPUs not booked for the whole window; 8 asked");
  EXPECT_EQ(state_.reservations()[0].spec.windows[0].end_ms, 3 * kH);
  EXPECT_EQ(Apply(ReservationEndSet{ReservationId(0), 1, 4 * kH}).message(), "reservation 'a' windows[1]: no such window; it has 1");
  ASSERT_TRUE(Apply(ReservationCancelled{ReservationId(1)}, 7).ok());
  EXPECT_EQ(state_.reservations()[1].state, ReservationState::kCancelled);
  EXPECT_EQ(state_.reservations()[1].cancelled_ms, 7);
  EXPECT_FALSE(state_.FindReservation(state_.tenants().Find("org/b"), "b").valid());
  EXPECT_EQ(Apply(ReservationCancelled{ReservationId(1)}).code(), Code::kFailedPrecondition);
  EXPECT_TRUE(Apply(ReservationEndSet{ReservationId(0), 0, 4 * kH}).ok()) << "free once b is cancelled";
}

TEST_F(ReservationStateTest, TheJournalAndASnapshotCarryReservationsAndTheBookIsRebuilt) {
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 12, {{0, 2 * kH}, {24 * kH, 26 * kH}}),
                                      {{{N(0), 8}, {N(1), 4}}, {{N(0), 8}, {N(1), 4}}}})
                  .ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 4, {{kH, 3 * kH}}), {{{N(1), 4}}}}).ok());
  ASSERT_TRUE(Apply(ReservationEndSet{ReservationId(1), 0, 4 * kH}).ok());
  ASSERT_TRUE(Apply(ReservationCancelled{ReservationId(0)}, 9).ok());
  // Every event through the codec, replayed into a fresh state.
  ClusterState replayed;
  for (const Event& e : events_) {
    auto decoded = DecodeEvent(EncodeEvent(e));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
    EXPECT_EQ(*decoded, e);
    ASSERT_TRUE(replayed.apply(*decoded).ok());
  }
  EXPECT_EQ(replayed.reservations(), state_.reservations());
  EXPECT_EQ(replayed.book().bookings(), state_.book().bookings());
  // A snapshot restores the same reservations and rebuilds the same book and names.
  ClusterState restored;
  Status r = RestoreSnapshot(EncodeSnapshot(state_), restored);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(restored.reservations(), state_.reservations());
  EXPECT_EQ(restored.book().bookings(), state_.book().bookings());
  EXPECT_EQ(restored.FindReservation(restored.tenants().Find("org/b"), "b"), ReservationId(1));
  EXPECT_FALSE(restored.FindReservation(restored.tenants().Find("org/a"), "a").valid()) << "cancelled";
  EXPECT_EQ(restored.book().BookedOn(N(1), {3 * kH, 4 * kH}), 4);
}

TEST_F(ReservationStateTest, AShrinkCutsEveryWindowNotOverBillsTheOpenOneItsFormerSizeUntilThenAndSurvivesASnapshot) {
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 12, {{0, 2 * kH}, {24 * kH, 26 * kH}, {48 * kH, 50 * kH}}),
                                      {{{N(0), 8}, {N(1), 4}}, {{N(0), 8}, {N(1), 4}}, {{N(0), 8}, {N(1), 4}}}})
                  .ok());
  EXPECT_EQ(Apply(ReservationShrunk{ReservationId(0), 12}, 25 * kH).message(),
            "reservation 'a': 12 GPUs; expected from 1 to 11 (it holds 12; to grow it, book another)");
  EXPECT_EQ(Apply(ReservationShrunk{ReservationId(0), 0}, 25 * kH).code(), Code::kInvalidArgument);
  EXPECT_EQ(Apply(ReservationShrunk{ReservationId(0), 6}, 51 * kH).message(), "reservation 'a': every window is over");
  // An hour into the second window: it and the third are cut from their last hold back; the
  // first, over, keeps what it held.
  ASSERT_TRUE(Apply(ReservationShrunk{ReservationId(0), 6}, 25 * kH).ok());
  const CapacityReservation& r = state_.reservations()[0];
  EXPECT_EQ(r.spec.gpus, 6);
  EXPECT_EQ(r.holds[0], (std::vector<NodeHold>{{N(0), 8}, {N(1), 4}}));
  EXPECT_EQ(r.holds[1], (std::vector<NodeHold>{{N(0), 6}}));
  EXPECT_EQ(r.holds[2], (std::vector<NodeHold>{{N(0), 6}}));
  EXPECT_EQ(r.CountOf(0), 12);
  EXPECT_EQ(r.CountOf(1), 6);
  EXPECT_EQ(r.CountOf(2), 6);
  EXPECT_EQ(state_.book().BookedOn(N(1), {48 * kH, 49 * kH}), 0) << "the cut is free in the book";
  EXPECT_EQ(state_.book().BookedOn(N(0), {48 * kH, 49 * kH}), 6);
  EXPECT_EQ(state_.book().BookedOn(N(1), {kH, 2 * kH}), 4) << "a window over is not rewritten";
  // Billed: 12 × 2 h, then the open window 12 GPUs for its first hour and 6 after, then 6 × 2 h.
  EXPECT_EQ(r.BookedUnitMs(0, 100 * kH), static_cast<__int128>(24 + 12 + 6 + 12) * kGpuUnit * kH);
  EXPECT_EQ(r.BookedUnitMs(24 * kH, 25 * kH), static_cast<__int128>(12) * kGpuUnit * kH);
  // Again, before the third window opens: nothing open, so nothing billed at the former size.
  ASSERT_TRUE(Apply(ReservationShrunk{ReservationId(0), 2}, 30 * kH).ok());
  EXPECT_EQ(state_.reservations()[0].CountOf(1), 6);
  EXPECT_EQ(state_.reservations()[0].holds[2], (std::vector<NodeHold>{{N(0), 2}}));
  EXPECT_EQ(state_.reservations()[0].BookedUnitMs(48 * kH, 50 * kH), static_cast<__int128>(4) * kGpuUnit * kH);
  // Through the journal and a snapshot, unchanged (a snapshot checks each window's holds against
  // what that window was booked with).
  ClusterState replayed;
  for (const Event& e : events_) {
    auto decoded = DecodeEvent(EncodeEvent(e));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
    ASSERT_TRUE(replayed.apply(*decoded).ok());
  }
  EXPECT_EQ(replayed.reservations(), state_.reservations());
  ClusterState restored;
  Status rs = RestoreSnapshot(EncodeSnapshot(state_), restored);
  ASSERT_TRUE(rs.ok()) << rs.message();
  EXPECT_EQ(restored.reservations(), state_.reservations());
  EXPECT_EQ(restored.book().bookings(), state_.book().bookings());
}

TEST_F(ReservationStateTest, ATenantWithAReservationStillToComeIsNotRemoved) {
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/b", 1, {{0, 2 * kH}}), {{{N(0), 1}}}}).ok());
  Status s = Apply(TenantRemoved{"org/b"}, kH);
  EXPECT_EQ(s.message(), "tenant 'org/b' has 1 reservation(s) still to come: cancel them first");
  EXPECT_TRUE(Apply(TenantRemoved{"org/b"}, 2 * kH).ok()) << "once its last window is over";
}

// Until max_reserved lands, a tenant and each tenant above it may have at most their max of the
// model booked at once.
TEST_F(ReservationStateTest, BookingsStayWithinTheTenantsMaxAndItsParentsAtEveryWindow) {
  const ResourceId h100 = state_.resource_names().Find("gpu/H100-80GB");
  TenantSpec lab;
  lab.path = "lab";
  lab.max[h100] = 10 * kGpuUnit;
  ASSERT_TRUE(Apply(TenantUpserted{lab}).ok());
  TenantSpec x;
  x.path = "lab/x";
  x.max[h100] = 8 * kGpuUnit;
  ASSERT_TRUE(Apply(TenantUpserted{x}).ok());
  TenantSpec y;
  y.path = "lab/y";
  ASSERT_TRUE(Apply(TenantUpserted{y}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "lab/x", 6, {{0, 2 * kH}}), {{{N(0), 6}}}}).ok());
  Status s = Apply(ReservationBooked{Spec("b", "lab/x", 4, {{kH, 3 * kH}}), {{{N(1), 4}}}});
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "reservation 'b' windows[0]: tenant 'lab/x' may have at most its max of 8 GPUs of H100-80GB "
                         "booked at once; 6 are booked then and 4 asked");
  EXPECT_TRUE(Apply(ReservationBooked{Spec("b", "lab/x", 4, {{2 * kH, 3 * kH}}), {{{N(1), 4}}}}).ok()) << "after a ends";
  // lab/y has no max of its own, but lab's 10 holds over both.
  s = Apply(ReservationBooked{Spec("c", "lab/y", 6, {{0, kH}}), {{{N(1), 6}}}});
  EXPECT_EQ(s.message(), "reservation 'c' windows[0]: tenant 'lab' may have at most its max of 10 GPUs of H100-80GB "
                         "booked at once; 6 are booked then and 6 asked");
  EXPECT_TRUE(Apply(ReservationBooked{Spec("c", "lab/y", 4, {{0, kH}}), {{{N(1), 4}}}}).ok());
  // An extension into b's window would put lab/x at 10.
  s = Apply(ReservationEndSet{state_.FindReservation(state_.tenants().Find("lab/x"), "a"), 0, 3 * kH});
  EXPECT_NE(s.message().find("tenant 'lab/x' may have at most its max of 8"), std::string::npos) << s.message();
  EXPECT_EQ(state_.reservations()[0].spec.windows[0].end_ms, 2 * kH);
  EXPECT_TRUE(Apply(ReservationBooked{Spec("d", "org/a", 16, {{5 * kH, 6 * kH}}), {{{N(0), 8}, {N(1), 8}}}}).ok())
      << "no max: no cap";
}

TEST_F(ReservationStateTest, ABadSpecIsRefusedNamingTheField) {
  ReservationSpec s = Spec("a", "org/a", 1, {{2 * kH, kH}});
  EXPECT_EQ(Apply(ReservationBooked{s, {{{N(0), 1}}}}).message(),
            "reservation 'a' windows[0]: [7200000, 3600000) ms; expected a start from 0 and a later end");
  s = Spec("a", "org/a", 1, {{0, 2 * kH}, {kH, 3 * kH}});
  EXPECT_EQ(Apply(ReservationBooked{s, {{{N(0), 1}}, {{N(0), 1}}}}).message(),
            "reservation 'a' windows[1]: starts before the window before it ends; expected windows in time order, apart");
  s = Spec("a", "org/a", 0, {{0, kH}});
  EXPECT_NE(Apply(ReservationBooked{s, {{}}}).message().find("expected either GPUs or whole nodes"), std::string::npos);
  s = Spec("a/b", "org/a", 1, {{0, kH}});
  EXPECT_NE(Apply(ReservationBooked{s, {{{N(0), 1}}}}).message().find("reservation name"), std::string::npos);
  EXPECT_TRUE(state_.reservations().empty());
}

}  // namespace
}  // namespace allot
