// Jobs in reservations (issue 16): placed only on their reservation's holds and only in its
// windows, ahead of the queue; lent work reclaimed for them, guaranteed or not; never a victim of
// the queue's preemption; stopped when their window ends or their reservation is cancelled.
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;
using testing::PendingReasonOf;

constexpr int64_t kH = 3600 * 1000;

class ReservedJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("h100-", 2, "z", "r", 64, 512, testing::kH100, 8);
    c_.Tenant("org");
    c_.Tenant("org/a");
    c_.Tenant("org/b", {{"gpu/" + std::string(testing::kH100), "8"}});
  }
  // Books `gpus` on node `node` for org/a over [start, end).
  void Book(const std::string& name, int node, int gpus, int64_t start, int64_t end) {
    ReservationSpec s;
    s.name = name;
    s.tenant = c_.state.tenants().Find("org/a");
    s.gpu_resource = c_.Res("gpu/" + std::string(testing::kH100));
    s.gpus = gpus;
    s.windows = {{start, end}};
    c_.Apply(ReservationBooked{s, {{{NodeId(static_cast<uint32_t>(node)), gpus}}}});
  }
  const PlannedPlacement* PlacementOf(const Plan& plan, const std::string& job) {
    for (const PlannedPlacement& p : plan.placements) {
      if (p.job == c_.Id(job)) return &p;
    }
    return nullptr;
  }

  Cluster c_;
};

TEST_F(ReservedJobsTest, AJobWaitsForItsWindowThenGoesOnlyOnItsHoldsAndNoFurther) {
  Book("r", 1, 4, kH, 2 * kH);
  c_.Submit(JobBuilder("x").Tenant("org/a").Gpus(4).Duration(kH).Reservation("r"));
  c_.Submit(JobBuilder("y").Tenant("org/a").Gpus(1).Duration(kH).Reservation("r").At(1));
  Plan early = c_.RunPass(0);
  EXPECT_EQ(PendingReasonOf(early, c_.Id("x")), "waiting for reservation 'r': its window opens at t=3600s");
  EXPECT_TRUE(early.placements.empty());

  Plan open = c_.RunPass(kH);
  const PlannedPlacement* x = PlacementOf(open, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->admission, AdmissionClass::kReserved);
  EXPECT_EQ(c_.state.fleet().node(x->tasks[0].node).name, "h100-1") << "on its hold, though h100-0 is as free";
  EXPECT_EQ(PendingReasonOf(open, c_.Id("y")),
            "reservation 'r': its 0 GPUs not used by its running jobs cannot hold the job");
}

TEST_F(ReservedJobsTest, LentWorkIsReclaimedAtTheWindowGuaranteedOrNotAndTheReservedJobIsNeverAVictim) {
  Book("r", 0, 8, kH, 3 * kH);
  // b's guaranteed job fills h100-0 before the window (lent); a's job waits for the window.
  c_.Submit(JobBuilder("lent").Tenant("org/b").Gpus(8).Duration(10 * kH).Grace(30000));
  c_.Submit(JobBuilder("other").Tenant("org/b").Gpus(8).Duration(10 * kH).At(1));
  c_.Submit(JobBuilder("mine").Tenant("org/a").Gpus(8).Duration(kH).Reservation("r").At(2));
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("lent"), JobState::kRunning);
  ASSERT_EQ(c_.job("lent").admission, AdmissionClass::kGuaranteed);

  Plan open = c_.RunPass(kH);
  ASSERT_EQ(open.preemptions.size(), 1u);
  EXPECT_EQ(open.preemptions[0].kind, PreemptKind::kReservation);
  EXPECT_EQ(open.preemptions[0].victim, c_.Id("lent")) << "the job on the hold's node, not the one beside it";
  EXPECT_EQ(open.preemptions[0].deadline_ms, kH + 30000);
  EXPECT_NE(PendingReasonOf(open, c_.Id("mine")).find("on the lent capacity of reservation 'r' to exit"), std::string::npos);

  c_.Stop("lent", kH + 30000);
  Plan freed = c_.RunPass(kH + 30000);
  ASSERT_NE(PlacementOf(freed, "mine"), nullptr);
  EXPECT_EQ(c_.StateOf("mine"), JobState::kRunning);

  // b's guaranteed job, requeued, reclaims b's burstable job beside it, never the reserved one.
  ASSERT_EQ(freed.preemptions.size(), 1u);
  EXPECT_EQ(freed.preemptions[0].victim, c_.Id("other"));
  EXPECT_EQ(freed.preemptions[0].kind, PreemptKind::kReclaim);
  Plan after = c_.RunPass(kH + 60000);
  for (const PlannedPreemption& p : after.preemptions) EXPECT_NE(p.victim, c_.Id("mine"));
  EXPECT_EQ(c_.StateOf("mine"), JobState::kRunning);
}

TEST_F(ReservedJobsTest, AJobStopsWhenItsWindowEndsOrItsReservationIsCancelled) {
  Book("r", 0, 4, kH, 2 * kH);
  Book("s", 1, 4, kH, 5 * kH);
  c_.Submit(JobBuilder("in-r").Tenant("org/a").Gpus(4).Duration(10 * kH).Reservation("r").Grace(5000));
  c_.Submit(JobBuilder("in-s").Tenant("org/a").Gpus(4).Duration(10 * kH).Reservation("s").Grace(7000));
  c_.RunPass(kH);
  ASSERT_EQ(c_.Running(), (std::vector<std::string>{"in-r", "in-s"}));

  Plan ended = c_.RunPass(2 * kH);
  ASSERT_EQ(ended.preemptions.size(), 1u);
  EXPECT_EQ(ended.preemptions[0].victim, c_.Id("in-r"));
  EXPECT_EQ(ended.preemptions[0].kind, PreemptKind::kWindowEnd);
  EXPECT_EQ(ended.preemptions[0].deadline_ms, 2 * kH + 5000);
  c_.Stop("in-r", 2 * kH + 5000);
  Plan gone = c_.RunPass(2 * kH + 5000);
  ASSERT_EQ(gone.rejections.size(), 1u);
  EXPECT_EQ(gone.rejections[0].reason, "reservation 'r' has no window left; its last ended at t=7200s");

  c_.Apply(ReservationCancelled{c_.state.FindReservation(c_.state.tenants().Find("org/a"), "s")}, 3 * kH);
  Plan cancelled = c_.RunPass(3 * kH);
  ASSERT_EQ(cancelled.preemptions.size(), 1u);
  EXPECT_EQ(cancelled.preemptions[0].victim, c_.Id("in-s"));
  EXPECT_EQ(cancelled.preemptions[0].kind, PreemptKind::kWindowEnd);
}

TEST_F(ReservedJobsTest, AJobNamingNoConfirmedReservationOrAskingMoreThanItHoldsIsRejectedWithTheReason) {
  Book("r", 0, 4, kH, 2 * kH);
  c_.Submit(JobBuilder("unknown").Tenant("org/a").Gpus(1).Duration(kH).Reservation("nope"));
  c_.Submit(JobBuilder("foreign").Tenant("org/b").Gpus(1).Duration(kH).Reservation("r"));
  c_.Submit(JobBuilder("wide").Tenant("org/a").Gpus(2).Duration(kH).Reservation("r"));
  c_.Apply(JobSubmitted{[&] {
    JobSpec s = JobBuilder("three").Tenant("org/a").Gpus(2).Duration(kH).Reservation("r").Build(c_.state);
    s.groups[0].count = 3;
    return s;
  }()});
  Plan plan = c_.RunPass(kH);
  std::map<std::string, std::string> why;
  for (const PlannedRejection& r : plan.rejections) why[c_.state.job(r.job).spec.name] = r.reason;
  EXPECT_EQ(why["unknown"], "reservation: 'nope' is not a confirmed reservation of tenant 'org/a'; expected the name of one (allot reservations)");
  EXPECT_EQ(why["foreign"], "reservation: 'r' is not a confirmed reservation of tenant 'org/b'; expected the name of one (allot reservations)");
  EXPECT_EQ(why["three"], "reservation: 'r' holds 4 GPUs of H100-80GB; the job asks 6, expected at most 4");
  EXPECT_EQ(why.count("wide"), 0u) << "2 of 4 fit";
}

TEST_F(ReservedJobsTest, ASnapshotKeepsAJobInItsReservation) {
  Book("r", 0, 4, kH, 2 * kH);
  c_.Submit(JobBuilder("x").Tenant("org/a").Gpus(4).Duration(10 * kH).Reservation("r"));
  c_.RunPass(kH);
  ClusterState restored;
  ASSERT_TRUE(RestoreSnapshot(EncodeSnapshot(c_.state), restored).ok());
  EXPECT_EQ(restored.reserved_running(), c_.state.reserved_running());
  EXPECT_EQ(restored.job(c_.Id("x")).spec.reservation, "r");
  // And the restored state stops it at the window's end as the original does.
  Plan plan = PlanPass(restored, 2 * kH, c_.config);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].kind, PreemptKind::kWindowEnd);
}

// An untrusted tenant's job runs only where the node's agent confines tasks in every way: its
// reservation's hold on a node that turned isolation=partial after booking holds nothing for it,
// and its reason names that hold. A trusted tenant's job uses such a hold.
TEST(ReservedJobsUntrustedTest, AHoldOnANodeWhoseIsolationIsPartialIsNotUsedForAnUntrustedTenant) {
  for (const bool untrusted : {true, false}) {
    SCOPED_TRACE(untrusted ? "untrusted" : "trusted");
    Cluster c;
    c.AddNodes("partial-", 1, "z", "r", 64, 512, testing::kH100, 8, "", NodeLabels{{"isolation", "partial"}});
    c.AddNodes("full-", 1, "z", "r", 64, 512, testing::kH100, 8, "", NodeLabels{{"isolation", "full"}});
    TenantSpec u = testing::MakeTenantSpec(c.state.resource_names(), "u", {}, {}, kMilli);
    if (untrusted) u.trust = Trust::kUntrusted;
    c.Apply(TenantUpserted{u});
    ReservationSpec s;
    s.name = "r";
    s.tenant = c.state.tenants().Find("u");
    s.gpu_resource = c.Res("gpu/" + std::string(testing::kH100));
    s.gpus = 8;
    s.windows = {{0, 2 * kH}};
    c.Apply(ReservationBooked{s, {{{NodeId(0), 4}, {NodeId(1), 4}}}});
    // Both holds leave 4 GPUs: the first (partial-0) would be taken first.
    c.Submit(JobBuilder("x").Tenant("u").Gpus(4).Duration(kH).Reservation("r"));
    JobId y = c.Submit(JobBuilder("y").Tenant("u").Gpus(4).Duration(kH).Reservation("r").At(1));
    Plan plan = c.RunPass(1);
    ASSERT_EQ(c.StateOf("x"), JobState::kRunning);
    if (!untrusted) {
      EXPECT_EQ(c.state.fleet().node(c.job("x").placement[0].node).name, "partial-0");
      EXPECT_EQ(c.StateOf("y"), JobState::kRunning);
      continue;
    }
    EXPECT_EQ(c.state.fleet().node(c.job("x").placement[0].node).name, "full-1");
    EXPECT_EQ(c.StateOf("y"), JobState::kPending);
    EXPECT_EQ(PendingReasonOf(plan, y),
              "reservation 'r': its 4 GPUs not used by its running jobs cannot hold the job; its tenant is untrusted: its "
              "hold on node 'partial-0' may not be used (the agent cannot confine tasks in every way: isolation=partial)");
  }
}

}  // namespace
}  // namespace allot
