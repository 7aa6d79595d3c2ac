// Acceptance of booked nodes (issue 16, scheduler/acceptance.h): a node that fails its checks,
// turns unfit or stays silent past the start loses its hold to a free node (its own domain first,
// the reservation's topology kept, free in the book for the whole window), or keeps it with the
// failure recorded; the events go through the journal's codec and a snapshot unchanged.
#include "scheduler/acceptance.h"

#include <gtest/gtest.h>

#include "state/event_codec.h"
#include "state/snapshot.h"

namespace allot {
namespace {

constexpr int64_t kH = 3600 * 1000;
constexpr int64_t kLead = 10 * 60 * 1000;

// n0, n2 and n3 in rack r1, n1 in r2; 8 H100s each, registered by agents and ready.
class AcceptanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* racks[] = {"r1", "r2", "r1", "r1"};
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(Apply(NodeRegistered{NodeSpec{"n" + std::to_string(i), "z", racks[i], "", 64000, 1 << 19, "H100-80GB", 8}}).ok());
      ASSERT_TRUE(Apply(NodeConditionChanged{N(i), NodeCondition::kReady}).ok());
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
  // Plans at `now` and applies what it plans; returns the plan.
  std::vector<EventBody> Settle(int64_t now, const std::vector<AcceptanceAnswer>& answers = {}) {
    std::vector<EventBody> plan = PlanAcceptance(state_, now, kLead, answers);
    for (const EventBody& e : plan) EXPECT_TRUE(Apply(e, now).ok());
    return plan;
  }
  ReservationSpec Spec(const std::string& name, const std::string& tenant, int gpus, int nodes, Window w,
                       Topology topology = Topology::kNone) {
    ReservationSpec s;
    s.name = name;
    s.tenant = state_.tenants().Find(tenant);
    s.gpu_resource = state_.resource_names().Find("gpu/H100-80GB");
    s.gpus = gpus;
    s.nodes = nodes;
    s.topology = topology;
    s.windows = {w};
    return s;
  }
  static NodeId N(int i) { return NodeId(static_cast<uint32_t>(i)); }
  static AcceptanceAnswer Failed(int reservation, int node, std::string why) {
    return {ReservationId(static_cast<uint32_t>(reservation)), 0, N(node), false, std::move(why)};
  }
  // Node i registered again by its agent with `labels`, and ready.
  void Relabel(int i, NodeLabels labels) {
    NodeSpec spec = state_.fleet().SpecOf(N(i), state_.resource_names());
    spec.labels = std::move(labels);
    ASSERT_TRUE(Apply(NodeRegistered{spec}).ok());
    ASSERT_TRUE(Apply(NodeConditionChanged{N(i), NodeCondition::kReady}).ok());
  }
  // Settles at `now`, where the one event planned keeps a failed hold for want of a node;
  // returns the failure recorded.
  std::string KeptFailure(int64_t now) {
    auto plan = Settle(now);
    EXPECT_EQ(plan.size(), 1u);
    const auto* kept = plan.empty() ? nullptr : std::get_if<ReservationNodeAccepted>(&plan[0]);
    EXPECT_NE(kept, nullptr);
    if (kept == nullptr) return "";
    EXPECT_FALSE(kept->passed);
    return kept->why;
  }
  // No GPU is booked twice at any instant of `w`.
  void ExpectConflictFree(Window w) {
    for (int i = 0; i < 4; ++i) EXPECT_LE(state_.book().BookedOn(N(i), w), 8) << "n" << i;
  }

  ClusterState state_;
  std::vector<Event> events_;
};

TEST_F(AcceptanceTest, AFailedNodeIsReplacedByAFreeNodeOfItsRackBeforeALowerIdElsewhere) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 4, 0, w), {{{N(0), 4}}}}).ok());
  // n2, in n0's rack, is booked whole by b for part of the window: not free for all of it.
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 8, 0, {3 * kH, 5 * kH}), {{{N(2), 8}}}}).ok());
  EXPECT_TRUE(PlanAcceptance(state_, 2 * kH - kLead - 1, kLead, {Failed(0, 0, "cmd:false: exited with code 1")}).empty())
      << "before the lead time nothing is asked or judged";
  EXPECT_TRUE(AcceptanceAsked(state_.reservations()[0], 0, N(0), 2 * kH - kLead, kLead));
  auto plan = Settle(2 * kH - 5 * 60 * 1000, {Failed(0, 0, "cmd:false: exited with code 1")});
  ASSERT_EQ(plan.size(), 1u);
  // Same rack first (n3 over n1, which has the lower id), and n2 is not free for the whole window.
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(0), N(3),
                                                   "failed its acceptance checks: cmd:false: exited with code 1"}));
  const CapacityReservation& r = state_.reservations()[0];
  EXPECT_EQ(r.holds[0], (std::vector<NodeHold>{{N(3), 4}}));
  EXPECT_EQ(state_.book().BookedOn(N(3), w), 4);
  EXPECT_EQ(state_.book().BookedOn(N(0), w), 0) << "the failed node's hold is freed";
  ASSERT_EQ(r.acceptance.size(), 1u);
  EXPECT_EQ(r.acceptance[0].state, AcceptanceState::kReplaced);
  EXPECT_EQ(r.acceptance[0].replaced_by, N(3));
  EXPECT_TRUE(AcceptanceAsked(r, 0, N(3), 2 * kH - 60000, kLead)) << "the new node runs acceptance in turn";
  EXPECT_FALSE(AcceptanceAsked(r, 0, N(0), 2 * kH - 60000, kLead));
  // n3 passes: settled, asked no more.
  plan = Settle(2 * kH - 60000, {{ReservationId(0), 0, N(3), true, ""}});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], EventBody(ReservationNodeAccepted{ReservationId(0), 0, N(3), true, ""}));
  EXPECT_FALSE(AcceptanceAsked(state_.reservations()[0], 0, N(3), 2 * kH - 60000, kLead));
  EXPECT_TRUE(Settle(2 * kH).empty()) << "passed before the start: nothing to do at it";
  ExpectConflictFree(w);
}

TEST_F(AcceptanceTest, ANodeSilentAtTheStartOrUnfitBeforeItIsReplacedAndNeverTakenBack) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 0, 2, w), {{{N(0), 8}, {N(2), 8}}}}).ok());
  ASSERT_TRUE(Apply(NodeConditionChanged{N(2), NodeCondition::kCordoned}).ok());
  auto plan = Settle(2 * kH - kLead);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(2), N(3), "node is cordoned"}));
  EXPECT_TRUE(Settle(2 * kH - 1).empty()) << "pending until the start";
  // At the start n0 and n3 have not answered: n0 goes to n1 (the only free node left), and n3
  // finds no node at all (n0 and n2 failed here and are never taken back).
  ASSERT_TRUE(Apply(NodeConditionChanged{N(2), NodeCondition::kReady}).ok());
  plan = Settle(2 * kH);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(0), N(1), "gave no answer by the window's start"}));
  EXPECT_EQ(plan[1], EventBody(ReservationNodeAccepted{
                         ReservationId(0), 0, N(3), false,
                         "gave no answer by the window's start; not replaced: no other ready node of 8 H100-80GB GPUs is "
                         "wholly free from 1970-01-01T02:00:00Z to 1970-01-01T04:00:00Z"}));
  EXPECT_EQ(state_.reservations()[0].holds[0], (std::vector<NodeHold>{{N(1), 8}, {N(3), 8}}));
  // n1 joined after the start: it is judged by its answer, with no deadline.
  EXPECT_TRUE(Settle(2 * kH + kLead).empty());
  ExpectConflictFree(w);
}

TEST_F(AcceptanceTest, WithNothingFreeTheHoldStaysAndTheFailureSaysWhy) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 0, 4, w), {{{N(0), 8}, {N(1), 8}, {N(2), 8}, {N(3), 8}}}}).ok());
  auto plan = Settle(2 * kH - kLead, {Failed(0, 1, "nvml.ecc: GPU 3: 2 uncorrected ECC error(s)")});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], EventBody(ReservationNodeAccepted{
                         ReservationId(0), 0, N(1), false,
                         "failed its acceptance checks: nvml.ecc: GPU 3: 2 uncorrected ECC error(s); not replaced: no "
                         "other ready node of 8 H100-80GB GPUs is wholly free from 1970-01-01T02:00:00Z to "
                         "1970-01-01T04:00:00Z"}));
  const CapacityReservation& r = state_.reservations()[0];
  EXPECT_EQ(r.holds[0].size(), 4u) << "the hold is kept";
  ASSERT_NE(r.AcceptanceOf(0, N(1)), nullptr);
  EXPECT_EQ(r.AcceptanceOf(0, N(1))->state, AcceptanceState::kFailed);
  EXPECT_TRUE(Settle(2 * kH - kLead + 1000, {Failed(0, 1, "again")}).size() == 0u) << "recorded once";
}

// A failed node kept for want of a free one is replaced once a node frees before the window
// opens; after it opens, it is kept (the reservation's jobs may run on it).
TEST_F(AcceptanceTest, AFailedNodeKeptForWantOfCapacityIsReplacedWhenANodeFreesBeforeTheStart) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 0, 3, w), {{{N(0), 8}, {N(1), 8}, {N(2), 8}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 0, 1, {0, 3 * kH}), {{{N(3), 8}}}}).ok());
  // b's n3 passes its own acceptance (b's window is open); a's n1 fails and nothing is free.
  const AcceptanceAnswer b_passes{ReservationId(1), 0, N(3), true, ""};
  auto plan = Settle(2 * kH - kLead, {Failed(0, 1, "cmd:dcgmi diag -r 3: exited with code 1"), b_passes});
  ASSERT_EQ(plan.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<ReservationNodeAccepted>(plan[0])) << "n3 is b's: nothing free";
  EXPECT_FALSE(std::get<ReservationNodeAccepted>(plan[0]).passed);
  EXPECT_TRUE(Settle(2 * kH - kLead + 1000).empty()) << "still nothing free: nothing new";
  ASSERT_TRUE(Apply(ReservationCancelled{ReservationId(1)}, 2 * kH - kLead + 2000).ok());
  plan = Settle(2 * kH - kLead + 3000);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(1), N(3),
                                                   "failed its acceptance checks: cmd:dcgmi diag -r 3: exited with code 1"}));
  EXPECT_EQ(state_.reservations()[0].holds[0], (std::vector<NodeHold>{{N(0), 8}, {N(3), 8}, {N(2), 8}}));
  ExpectConflictFree(w);
}

TEST_F(AcceptanceTest, AFailedNodeIsKeptOnceTheWindowHasOpened) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 0, 3, w), {{{N(0), 8}, {N(1), 8}, {N(2), 8}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 0, 1, {0, 3 * kH}), {{{N(3), 8}}}}).ok());
  ASSERT_EQ(Settle(2 * kH - kLead, {Failed(0, 1, "cmd:false: exited with code 1"), {ReservationId(1), 0, N(3), true, ""}}).size(), 2u)
      << "a's n1 failed with nothing free; b's n3 passed";
  // The others pass; at the start nothing is free; then b is cancelled inside the window.
  Settle(2 * kH - kLead + 1000, {{ReservationId(0), 0, N(0), true, ""}, {ReservationId(0), 0, N(2), true, ""}});
  ASSERT_TRUE(Apply(ReservationCancelled{ReservationId(1)}, 2 * kH + 1000).ok());
  EXPECT_TRUE(Settle(2 * kH + 2000).empty()) << "open: the failed node keeps its hold";
  EXPECT_EQ(state_.reservations()[0].holds[0][1].node, N(1));
}

TEST_F(AcceptanceTest, ATopologyKeepsTheReplacementInTheOtherHoldsRack) {
  const Window w{2 * kH, 4 * kH};
  // 16 GPUs within a rack: n0 and n2 (r1). n3, the rest of r1, is booked; n1 (r2) is free.
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 16, 0, w, Topology::kRack), {{{N(0), 8}, {N(2), 8}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 2, 0, w), {{{N(3), 2}}}}).ok());
  auto plan = Settle(2 * kH - kLead, {Failed(0, 2, "cmd:nccl-test: exited with code 3")});
  ASSERT_EQ(plan.size(), 1u);
  const auto* failed = std::get_if<ReservationNodeAccepted>(&plan[0]);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->node, N(2));
  EXPECT_NE(failed->why.find("no other ready node has 8 GPUs of H100-80GB free from 1970-01-01T02:00:00Z to "
                             "1970-01-01T04:00:00Z in rack 'z/r1'"),
            std::string::npos)
      << failed->why;
  // With b cancelled, n3 is free in the rack and takes the hold of the next failure.
  ASSERT_TRUE(Apply(ReservationCancelled{ReservationId(1)}).ok());
  plan = Settle(2 * kH - kLead + 1000, {Failed(0, 0, "cmd:nccl-test: exited with code 3")});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(std::get<ReservationHoldMoved>(plan[0]).to, N(3));
  ExpectConflictFree(w);
}

// A node re-registered with labels that no longer satisfy the reservation's `require` (its driver
// rolled back) fails acceptance, and the replacement must satisfy it: n2, of n0's rack and lower
// id than n3, is passed over for its old driver.
TEST_F(AcceptanceTest, ANodeWhoseLabelsNoLongerSatisfyTheRequirementIsReplacedByOneThatDoes) {
  auto label = [&](int i, const std::string& driver) { Relabel(i, {{"driver", driver}}); };
  for (int i = 0; i < 4; ++i) label(i, i == 2 ? "535.104.05" : "550.54.15");
  const Window w{2 * kH, 4 * kH};
  ReservationSpec spec = Spec("a", "org/a", 4, 0, w);
  auto req = ParseRequirementList("require", "driver>=550");
  ASSERT_TRUE(req) << req.error().message();
  spec.require = *req;
  ASSERT_TRUE(Apply(ReservationBooked{spec, {{{N(0), 4}}}}).ok());
  label(0, "535.104.05");
  auto plan = Settle(2 * kH - 5 * 60 * 1000);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(0), N(3),
                                                   "its labels (driver=535.104.05) no longer satisfy require driver>=550"}));
  // With no node left that satisfies it, the failure names the requirement.
  label(1, "535.104.05");
  label(3, "535.104.05");
  const std::string why = KeptFailure(2 * kH - 4 * 60 * 1000);
  EXPECT_NE(why.find("that satisfies require driver>=550"), std::string::npos) << why;
}

// An untrusted tenant's hold on a node whose agent re-registered unable to confine tasks in every
// way (isolation=partial) fails acceptance like an unmet requirement, and the replacement must
// confine: n2, of n0's rack and lower id than n3, is passed over for being partial too. A trusted
// tenant's hold on a partial node stays.
TEST_F(AcceptanceTest, AnUntrustedTenantsHoldOnANodeWhoseIsolationIsPartialIsReplacedByOneThatConfines) {
  auto label = [&](int i, const std::string& isolation) { Relabel(i, {{"isolation", isolation}}); };
  for (int i = 0; i < 4; ++i) label(i, i == 2 ? "partial" : "full");
  TenantSpec u;
  u.path = "org/u";
  u.trust = Trust::kUntrusted;
  ASSERT_TRUE(Apply(TenantUpserted{u}).ok());
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("u", "org/u", 4, 0, w), {{{N(0), 4}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("t", "org/a", 4, 0, w), {{{N(2), 4}}}}).ok());
  label(0, "partial");
  auto plan = Settle(2 * kH - 5 * 60 * 1000);
  ASSERT_EQ(plan.size(), 1u) << "the trusted tenant's hold on n2 stays";
  EXPECT_EQ(plan[0], EventBody(ReservationHoldMoved{ReservationId(0), 0, N(0), N(3),
                                                   "its agent cannot confine tasks in every way (isolation=partial) and "
                                                   "the tenant is untrusted"}));
  // With no confining node left, the failure says so.
  label(1, "partial");
  label(3, "partial");
  const std::string why = KeptFailure(2 * kH - 4 * 60 * 1000);
  EXPECT_NE(why.find("whose agent confines tasks in every way (the tenant is untrusted)"), std::string::npos) << why;
}

TEST_F(AcceptanceTest, AMoveTheBookRefusesChangesNothing) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 4, 0, w), {{{N(0), 4}}}}).ok());
  ASSERT_TRUE(Apply(ReservationBooked{Spec("b", "org/b", 6, 0, {3 * kH, 5 * kH}), {{{N(1), 6}}}}).ok());
  Status s = Apply(ReservationHoldMoved{ReservationId(0), 0, N(0), N(1), "x"});
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.message();
  EXPECT_EQ(state_.reservations()[0].holds[0], (std::vector<NodeHold>{{N(0), 4}}));
  EXPECT_EQ(state_.book().BookedOn(N(0), w), 4) << "the old hold is booked back";
  EXPECT_TRUE(state_.reservations()[0].acceptance.empty());
  EXPECT_EQ(Apply(ReservationHoldMoved{ReservationId(0), 0, N(2), N(3), "x"}).message(),
            "reservation 'a' windows[0]: node 'n2' holds nothing there");
}

TEST_F(AcceptanceTest, TheJournalAndASnapshotCarryTheMovesAndTheRecords) {
  const Window w{2 * kH, 4 * kH};
  ASSERT_TRUE(Apply(ReservationBooked{Spec("a", "org/a", 0, 2, w), {{{N(0), 8}, {N(1), 8}}}}).ok());
  Settle(2 * kH - kLead, {Failed(0, 0, "cmd:false: exited with code 1"), {ReservationId(0), 0, N(1), true, ""}});
  ASSERT_EQ(state_.reservations()[0].acceptance.size(), 2u);
  ClusterState replayed;
  for (const Event& e : events_) {
    auto decoded = DecodeEvent(EncodeEvent(e));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
    EXPECT_EQ(*decoded, e);
    ASSERT_TRUE(replayed.apply(*decoded).ok());
  }
  EXPECT_EQ(replayed.reservations(), state_.reservations());
  ClusterState restored;
  Status r = RestoreSnapshot(EncodeSnapshot(state_), restored);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(restored.reservations(), state_.reservations());
  EXPECT_EQ(restored.book().bookings(), state_.book().bookings());
}

}  // namespace
}  // namespace allot
