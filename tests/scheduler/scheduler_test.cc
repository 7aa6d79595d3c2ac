#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/calendar.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;
using testing::kH100;
using testing::PendingReasonOf;

// Everything a plan decided, one line per decision, for exact comparison and readable diffs.
std::string Describe(const ClusterState& s, const Plan& plan) {
  std::ostringstream out;
  out << "now=" << plan.now_ms << "\n";
  for (const auto& r : plan.rejections) out << "reject " << s.job(r.job).spec.name << ": " << r.reason << "\n";
  for (const auto& p : plan.preemptions) {
    out << "preempt " << s.job(p.victim).spec.name << " for " << s.job(p.preemptor).spec.name << " ("
        << PreemptKindName(p.kind) << ") until " << p.deadline_ms << "\n";
  }
  for (const auto& p : plan.placements) {
    out << "place " << s.job(p.job).spec.name << " " << AdmissionClassName(p.admission) << ":";
    for (const TaskPlacement& t : p.tasks) {
      out << " " << s.fleet().node(t.node).name << "/" << std::hex << t.gpu_mask << std::dec << "/" << t.cpu << "/"
          << t.memory;
    }
    out << "\n";
  }
  for (const auto& p : plan.pending) out << "pending " << s.job(p.job).spec.name << ": " << plan.Why(p) << "\n";
  return out.str();
}

TEST(SchedulerTest, SharesOneNodeByDominantResourceFairness) {
  // The DRF paper's example: 9 CPUs and 18 GiB. a's tasks take ⟨1 CPU, 4Gi⟩ (memory-dominant,
  // 2/9 each); b's take ⟨3 CPU, 1Gi⟩ (CPU-dominant, 1/3 each).
  //   a: 2/9 → b: 1/3 → a: 4/9 → b: 2/3 → a: 6/9 = 2/3
  //   used: CPU 3×1 + 2×3 = 9 of 9, memory 3×4 + 2×1 = 14 of 18 → nothing else fits.
  Cluster c;
  c.AddNodes("cpu-", 1, "z", "r", 9, 18, "", 0);
  c.Tenant("a");
  c.Tenant("b");
  for (int i = 0; i < 10; ++i) c.Submit(JobBuilder("a" + std::to_string(i)).Tenant("a").Cpus(1).MemGi(4));
  for (int i = 0; i < 10; ++i) c.Submit(JobBuilder("b" + std::to_string(i)).Tenant("b").Cpus(3).MemGi(1));
  Plan plan = c.RunPass(0);
  EXPECT_EQ(c.Running("a"), (std::vector<std::string>{"a0", "a1", "a2"}));
  EXPECT_EQ(c.Running("b"), (std::vector<std::string>{"b0", "b1"}));
  EXPECT_EQ(plan.pending.size(), 15u) << "every waiting job gets a reason";
  EXPECT_EQ(PendingReasonOf(plan, c.Id("a3")), "needs 1 CPUs and 4Gi across 1 task(s); no schedulable node has room");
}

TEST(SchedulerTest, AWaitOnAWallClockDeadlineNamesItInRfc3339) {
  // allotd's passes run on the wall clock: the grace deadline reads as a time, not as epoch
  // seconds ("t=1795521630s"); a simulation's clock from 0 keeps "t=130s" (below).
  const int64_t t0 = 1795521600000;  // 2026-11-24T12:00:00Z
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads");
  c.Submit(JobBuilder("borrow").Tenant("ads").Gpus(8).At(t0).Grace(30000));
  c.RunPass(t0);
  c.Submit(JobBuilder("train").Tenant("research").Gpus(8).At(t0 + 100000));
  Plan plan = c.RunPass(t0 + 100000);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("train")), "waiting for 1 victim to exit, grace until 2026-11-24T12:02:10Z");
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
}

TEST(SchedulerTest, ReclaimsGuaranteeFromBorrowerByPreemptingItsBurstableJob) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads");
  // ads has no guarantee: it borrows the idle node.
  c.Submit(JobBuilder("borrow").Tenant("ads").Gpus(8).At(0).Grace(30000));
  c.RunPass(0);
  ASSERT_EQ(c.StateOf("borrow"), JobState::kRunning);
  EXPECT_EQ(c.job("borrow").admission, AdmissionClass::kBurstable);

  // research claims its guarantee at t=100s: borrow gets the grace period, until 100 + 30 s.
  c.Submit(JobBuilder("train").Tenant("research").Gpus(8).At(100000));
  Plan plan = c.RunPass(100000);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("borrow"));
  EXPECT_EQ(plan.preemptions[0].preemptor, c.Id("train"));
  EXPECT_EQ(plan.preemptions[0].kind, PreemptKind::kReclaim);
  EXPECT_EQ(plan.preemptions[0].deadline_ms, 130000);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("train")), "waiting for 1 victim to exit, grace until t=130s");
  EXPECT_EQ(c.StateOf("borrow"), JobState::kPreempting);

  // While the victim exits, later passes wait for it rather than choosing more victims.
  plan = c.RunPass(110000);
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_EQ(PendingReasonOf(plan, c.Id("train")), "waiting for 1 victim to exit, grace until t=130s");

  // Once it exits, the guaranteed job runs and the borrower waits.
  c.Stop("borrow", 120000);
  plan = c.RunPass(120000);
  EXPECT_EQ(c.StateOf("train"), JobState::kRunning);
  EXPECT_EQ(c.job("train").admission, AdmissionClass::kGuaranteed);
  EXPECT_EQ(c.StateOf("borrow"), JobState::kPending);
  EXPECT_TRUE(plan.preemptions.empty()) << "a guaranteed job is never reclaimed";
}

TEST(SchedulerTest, ReclaimTakesTheFewestVictimsAndLosesTheLeastWork) {
  // ads runs "old" (since t=0) and "new" (since t=60s), 4 GPUs each. research needs 4 of its
  // guarantee at t=120s: one victim suffices, and "new" has lost 60 s of work against 120 s.
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads");
  c.Submit(JobBuilder("old").Tenant("ads").Gpus(4).At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("new").Tenant("ads").Gpus(4).At(60000));
  c.RunPass(60000);
  c.Submit(JobBuilder("train").Tenant("research").Gpus(4).At(120000));
  Plan plan = c.RunPass(120000);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("new"));
  EXPECT_EQ(c.StateOf("old"), JobState::kRunning);
}

TEST(SchedulerTest, GuaranteedJobsArePlacedBeforeBurstableOnesInTheSamePass) {
  // Both arrive before a pass; ads' job is older, but research's is within its guarantee.
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads");
  c.Submit(JobBuilder("borrow").Tenant("ads").Gpus(8).At(0));
  c.Submit(JobBuilder("train").Tenant("research").Gpus(8).At(1000));
  Plan plan = c.RunPass(2000);
  EXPECT_EQ(c.Running(), (std::vector<std::string>{"train"}));
  EXPECT_TRUE(plan.preemptions.empty());
}

TEST(SchedulerTest, AJobPastTheGuaranteeInTheSamePassRunsAsBurstable) {
  // Both of research's jobs look guaranteed at triage (0 + 8 <= 8); once r1 is placed,
  // r2 would make 16 > 8, so it competes again among the burstable and runs as such.
  Cluster c;
  c.AddNodes("h100-", 2, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Submit(JobBuilder("r1").Tenant("research").Gpus(8).At(0));
  c.Submit(JobBuilder("r2").Tenant("research").Gpus(8).At(1));
  c.RunPass(0);
  EXPECT_EQ(c.job("r1").admission, AdmissionClass::kGuaranteed);
  EXPECT_EQ(c.job("r2").admission, AdmissionClass::kBurstable);
}

TEST(SchedulerTest, NeverEvictsAnotherTenantsGuaranteedJob) {
  // Guarantees oversubscribe the node (8 + 8 on 8 GPUs): the second guaranteed job waits.
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads", {{"gpu/H100-80GB", "8"}});
  c.Submit(JobBuilder("first").Tenant("ads").Gpus(8).At(0));
  c.RunPass(0);
  ASSERT_EQ(c.job("first").admission, AdmissionClass::kGuaranteed);
  c.Submit(JobBuilder("second").Tenant("research").Gpus(8).At(1000));
  Plan plan = c.RunPass(1000);
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_EQ(c.StateOf("second"), JobState::kPending);
  EXPECT_NE(PendingReasonOf(plan, c.Id("second")).find("needs 8 gpu/H100-80GB GPUs"), std::string::npos);
}

TEST(SchedulerTest, ABlockedBigJobDoesNotBlockSmallerJobsBehindIt) {
  // 4 of 8 GPUs are busy. "big" (8, older) cannot fit; "small" (2, newer) can and does.
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Submit(JobBuilder("busy").Tenant("t").Gpus(4).At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("big").Tenant("t").Gpus(8).At(1000));
  c.Submit(JobBuilder("small").Tenant("t").Gpus(2).At(2000));
  Plan plan = c.RunPass(3000);
  EXPECT_EQ(c.StateOf("small"), JobState::kRunning);
  EXPECT_EQ(c.StateOf("big"), JobState::kPending);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("big")), "needs 8 gpu/H100-80GB GPUs; 4 free in the fleet");
}

std::string NodeOf(const Cluster& c, const std::string& job) {
  return c.state.fleet().node(c.job(job).placement.at(0).node).name;
}

// Three nodes of 8 GPUs at 5 s; h100-0 and h100-1 each have 4 GPUs busy until 100 s (q, s),
// h100-2 all 8 (p); team has nothing yet.
Cluster HalfOfTwoNodesFreeUntil100s() {
  Cluster c;
  c.AddNodes("h100-", 3, "z", "r", 64, 512, kH100, 8);
  c.Tenant("other");
  c.Tenant("team");
  c.Submit(JobBuilder("q").Tenant("other").Gpus(4).TimeLimit(100'000).At(0));
  c.Submit(JobBuilder("filler").Tenant("other").Gpus(4).At(0));
  c.Submit(JobBuilder("s").Tenant("other").Gpus(4).TimeLimit(100'000).At(0));
  c.Submit(JobBuilder("p").Tenant("other").Gpus(8).TimeLimit(100'000).At(0));
  c.RunPass(0);
  EXPECT_EQ(NodeOf(c, "q"), "h100-0");
  EXPECT_EQ(NodeOf(c, "filler"), "h100-0");
  EXPECT_EQ(NodeOf(c, "s"), "h100-1");
  EXPECT_EQ(NodeOf(c, "p"), "h100-2");
  c.Finish("filler", 5'000);
  return c;
}

TEST(SchedulerTest, ABackfilledJobStillRunningAtTheReservationsStartCountsForTheNextCheck) {
  // "big" (two whole nodes, first in the queue) waits: reserved at 100 s on h100-0 and h100-1.
  // "j1" (4 GPUs, long) fits now on h100-0 and still lets big start at 100 s (on h100-1 and
  // h100-2): placed. "j3" (4 GPUs, long) fits now on h100-1, but with j1 there too big would
  // find one free node at 100 s: it waits. A check that forgot j1 would place j3.
  Cluster c = HalfOfTwoNodesFreeUntil100s();
  c.Submit(JobBuilder("big").Tenant("team").Gpus(8).Tasks(2).Priority(kPriorityHigh).TimeLimit(50'000).At(10'000));
  c.Submit(JobBuilder("j1").Tenant("team").Gpus(4).TimeLimit(1'000'000).At(10'000));
  c.Submit(JobBuilder("j3").Tenant("team").Gpus(4).TimeLimit(1'000'000).At(10'000));
  Plan plan = c.RunPass(10'000);
  ASSERT_TRUE(plan.reservation.has_value());
  EXPECT_EQ(plan.reservation->job, c.Id("big"));
  EXPECT_EQ(plan.reservation->start_ms, 100'000);
  EXPECT_EQ(c.StateOf("j1"), JobState::kRunning);
  EXPECT_EQ(NodeOf(c, "j1"), "h100-0");
  EXPECT_EQ(c.StateOf("j3"), JobState::kPending);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("j3")).rfind("backfill: would delay big", 0), 0u) << PendingReasonOf(plan, c.Id("j3"));
}

TEST(SchedulerTest, AJobOfTheShapeThatWouldDelayTheReservationIsCheckedAgainWhenItEndsFirstOrTheFleetChanged) {
  // As above: big is reserved at 100 s on h100-0 and h100-1, j1 is placed on h100-0 and j3
  // (4 GPUs, long) would delay big. The pass remembers that j3's shape lands where it delays big
  // while the view stays as it was; j4 and j5 are of the same shape and group, behind j3:
  // j4 ends by 100 s, so it is placed (on h100-1) all the same; after that placement j5
  // (long) finds no room at all, which is its reason, not j3's.
  Cluster c = HalfOfTwoNodesFreeUntil100s();
  c.Submit(JobBuilder("big").Tenant("team").Gpus(8).Tasks(2).Priority(kPriorityHigh).TimeLimit(50'000).At(10'000));
  c.Submit(JobBuilder("j1").Tenant("team").Gpus(4).TimeLimit(1'000'000).At(10'000));
  c.Submit(JobBuilder("j3").Tenant("team").Gpus(4).TimeLimit(1'000'000).At(10'000));
  c.Submit(JobBuilder("j4").Tenant("team").Gpus(4).TimeLimit(50'000).At(10'000));
  c.Submit(JobBuilder("j5").Tenant("team").Gpus(4).TimeLimit(1'000'000).At(10'000));
  Plan plan = c.RunPass(10'000);
  ASSERT_TRUE(plan.reservation.has_value());
  ASSERT_EQ(plan.reservation->start_ms, 100'000);
  ASSERT_EQ(c.StateOf("j1"), JobState::kRunning);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("j3")).rfind("backfill: would delay big", 0), 0u) << PendingReasonOf(plan, c.Id("j3"));
  EXPECT_EQ(c.StateOf("j4"), JobState::kRunning) << PendingReasonOf(plan, c.Id("j4"));
  EXPECT_EQ(NodeOf(c, "j4"), "h100-1");
  EXPECT_EQ(c.StateOf("j5"), JobState::kPending);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("j5")), "needs 4 gpu/H100-80GB GPUs; 0 free in the fleet");
}

TEST(SchedulerTest, RejectsAJobThatCanNeverFitWithTheReason) {
  Cluster c;
  c.AddNodes("h100-", 4, "z", "r", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Submit(JobBuilder("huge").Tenant("t").Gpus(8).Tasks(2).Topology(Topology::kNvlink));
  Plan plan = c.RunPass(0);
  ASSERT_EQ(plan.rejections.size(), 1u);
  EXPECT_EQ(plan.rejections[0].reason, "needs 16 gpu/H100-80GB GPUs in one NVLink domain; the largest has 8");
  EXPECT_EQ(c.StateOf("huge"), JobState::kRejected);
  EXPECT_EQ(c.job("huge").reason, plan.rejections[0].reason);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("huge")), "") << "a rejected job is not also pending";
}

TEST(SchedulerTest, HigherPriorityPreemptsLowerPriorityWithinTheTenant) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Submit(JobBuilder("low").Tenant("t").Gpus(8).Priority(kPriorityLow).At(0).Grace(5000));
  c.RunPass(0);
  c.Submit(JobBuilder("high").Tenant("t").Gpus(8).Priority(kPriorityHigh).At(1000));
  Plan plan = c.RunPass(1000);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("low"));
  EXPECT_EQ(plan.preemptions[0].kind, PreemptKind::kPriority);
  EXPECT_EQ(plan.preemptions[0].deadline_ms, 6000);  // 1 s + 5 s grace
  EXPECT_EQ(PendingReasonOf(plan, c.Id("high")), "waiting for 1 victim to exit, grace until t=6s");
  c.Stop("low", 4000);
  c.RunPass(4000);
  EXPECT_EQ(c.StateOf("high"), JobState::kRunning);
  EXPECT_EQ(c.StateOf("low"), JobState::kPending);
}

TEST(SchedulerTest, ARackGangTakesItsTenantsLowerPriorityJobsInOneRack) {
  // Two racks of two 8-GPU nodes. Rack r1 holds t's low-priority jobs, rack r2 other's
  // normal ones (t may not take those). t's high-priority rack gang (2 x 8) frees rack r1.
  Cluster c;
  c.AddNodes("r1n", 2, "z", "r1", 64, 512, kH100, 8);
  c.AddNodes("r2n", 2, "z", "r2", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Tenant("other");
  c.Submit(JobBuilder("low0").Tenant("t").Gpus(8).Priority(kPriorityLow).At(0));
  c.Submit(JobBuilder("low1").Tenant("t").Gpus(8).Priority(kPriorityLow).At(0));
  c.Submit(JobBuilder("o0").Tenant("other").Gpus(8).At(0));
  c.Submit(JobBuilder("o1").Tenant("other").Gpus(8).At(0));
  c.RunPass(0);
  ASSERT_EQ(c.Running().size(), 4u);
  ASSERT_EQ(c.state.fleet().node(c.job("low0").placement.at(0).node).rack, c.state.fleet().node(c.job("low1").placement.at(0).node).rack);
  c.Submit(JobBuilder("gang").Tenant("t").Gpus(8).Tasks(2).Topology(Topology::kRack).Priority(kPriorityHigh).At(1000));
  Plan plan = c.RunPass(1000);
  ASSERT_EQ(plan.preemptions.size(), 2u) << Describe(c.state, plan);
  std::vector<std::string> victims;
  for (const PlannedPreemption& p : plan.preemptions) {
    EXPECT_EQ(p.kind, PreemptKind::kPriority);
    victims.push_back(c.state.job(p.victim).spec.name);
  }
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<std::string>{"low0", "low1"}));
}

TEST(SchedulerTest, AJobIsNotPreemptedTwiceWithinTheCooldown) {
  // Default cooldown 10 min. low is preempted at 1 s, runs again from 5 s; high2 at 6 s must wait
  // until 1 s + 600 s has passed before low can be preempted a second time.
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Submit(JobBuilder("low").Tenant("t").Gpus(8).Priority(kPriorityLow).At(0).Grace(1000));
  c.RunPass(0);
  c.Submit(JobBuilder("high1").Tenant("t").Gpus(8).Priority(kPriorityHigh).At(1000));
  ASSERT_EQ(c.RunPass(1000).preemptions.size(), 1u);
  c.Stop("low", 2000);
  c.RunPass(2000);
  c.Finish("high1", 5000);
  c.RunPass(5000);
  ASSERT_EQ(c.StateOf("low"), JobState::kRunning);
  c.Submit(JobBuilder("high2").Tenant("t").Gpus(8).Priority(kPriorityHigh).At(6000));
  Plan within = c.RunPass(6000);
  EXPECT_TRUE(within.preemptions.empty());
  EXPECT_EQ(PendingReasonOf(within, c.Id("high2")), "needs 8 gpu/H100-80GB GPUs; 0 free in the fleet");
  EXPECT_TRUE(c.RunPass(600999).preemptions.empty());
  Plan after = c.RunPass(601000);
  ASSERT_EQ(after.preemptions.size(), 1u);
  EXPECT_EQ(after.preemptions[0].victim, c.Id("low"));
}

TEST(SchedulerTest, PriorityDoesNotPreemptAnotherTenantsJob) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("a");
  c.Tenant("b");
  c.Submit(JobBuilder("low").Tenant("a").Gpus(8).Priority(kPriorityLow).At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("high").Tenant("b").Gpus(8).Priority(kPriorityHigh).At(1000));
  Plan plan = c.RunPass(1000);
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_EQ(c.StateOf("low"), JobState::kRunning);
  EXPECT_EQ(c.StateOf("high"), JobState::kPending);
}

TEST(SchedulerTest, AJobAtItsTenantsMaxWaitsWithTheQuotaReason) {
  // research may use 8 GPUs at most; two nodes are free, but the second job would make 16.
  Cluster c;
  c.AddNodes("h100-", 2, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {}, {{"gpu/H100-80GB", "8"}});
  c.Submit(JobBuilder("r1").Tenant("research").Gpus(8).At(0));
  c.Submit(JobBuilder("r2").Tenant("research").Gpus(8).At(1));
  Plan plan = c.RunPass(0);
  EXPECT_EQ(c.Running(), (std::vector<std::string>{"r1"}));
  EXPECT_EQ(PendingReasonOf(plan, c.Id("r2")), "tenant research at max for gpu/H100-80GB: 8 of 8 in use, job asks 8");
  EXPECT_TRUE(plan.preemptions.empty());
}

TEST(SchedulerTest, AParentsMaxCapsItsChildrenTogether) {
  // org max 8: org/x runs 4; org/y asks 8 (its own max unset) and hits org's ceiling.
  Cluster c;
  c.AddNodes("h100-", 2, "z", "r", 64, 512, kH100, 8);
  c.Tenant("org", {}, {{"gpu/H100-80GB", "8"}});
  c.Tenant("org/x");
  c.Tenant("org/y");
  c.Submit(JobBuilder("x1").Tenant("org/x").Gpus(4).At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("y1").Tenant("org/y").Gpus(8).At(1000));
  Plan plan = c.RunPass(1000);
  EXPECT_EQ(PendingReasonOf(plan, c.Id("y1")), "tenant org at max for gpu/H100-80GB: 4 of 8 in use, job asks 8");
}

Cluster BusyCluster() {
  Cluster c;
  c.AddNodes("h100-", 4, "z1", "r1", 64, 512, kH100, 8);
  c.AddNodes("h100-", 4, "z1", "r2", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "32"}});
  c.Tenant("research/nlp", {{"gpu/H100-80GB", "16"}});
  c.Tenant("research/vision");
  c.Tenant("ads", {}, {{"gpu/H100-80GB", "48"}});
  const char* tenants[] = {"research/nlp", "research/vision", "ads"};
  const Topology topologies[] = {Topology::kNone, Topology::kNvlink, Topology::kRack};
  for (int i = 0; i < 30; ++i) {
    c.Submit(JobBuilder("j" + std::to_string(i))
                 .Tenant(tenants[i % 3])
                 .Gpus(1 + (i * 7) % 8)
                 .Tasks(1 + i % 3)
                 .Topology(topologies[(i / 3) % 3])
                 .Priority(i % 4 == 0 ? kPriorityHigh : kPriorityNormal)
                 .At(i * 10));
  }
  return c;
}

TEST(SchedulerTest, SameInputsGiveTheSamePlanByteForByte) {
  Cluster first = BusyCluster();
  Cluster second = BusyCluster();
  std::string a = Describe(first.state, PlanPass(first.state, 5000, first.config));
  std::string b = Describe(second.state, PlanPass(second.state, 5000, second.config));
  std::string again = Describe(first.state, PlanPass(first.state, 5000, first.config));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, again) << "planning does not change the state it reads";
  EXPECT_NE(a.find("place "), std::string::npos) << a;
  EXPECT_NE(a.find("pending "), std::string::npos) << a;
}

TEST(SchedulerTest, EveryPendingJobGetsExactlyOneDecisionOrReason) {
  Cluster c = BusyCluster();
  size_t pending = c.state.pending().size();
  Plan plan = c.RunPass(5000);
  EXPECT_EQ(plan.placements.size() + plan.rejections.size() + plan.pending.size(), pending);
  std::set<JobId> seen;
  for (const auto& p : plan.placements) EXPECT_TRUE(seen.insert(p.job).second);
  for (const auto& r : plan.rejections) EXPECT_TRUE(seen.insert(r.job).second);
  for (const auto& p : plan.pending) {
    EXPECT_TRUE(seen.insert(p.job).second) << "two reasons for " << c.state.job(p.job).spec.name;
    EXPECT_FALSE(plan.Why(p).empty());
  }
}

TEST(SchedulerTest, VerifyPlanCatchesAGuaranteedJobEvictedByAnotherTenant) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("research", {{"gpu/H100-80GB", "8"}});
  c.Tenant("ads");
  c.Submit(JobBuilder("guaranteed").Tenant("research").Gpus(8).At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("intruder").Tenant("ads").Gpus(8).At(1000));
  Plan bad;
  bad.now_ms = 1000;
  bad.preemptions.push_back({c.Id("guaranteed"), c.Id("intruder"), PreemptKind::kReclaim, 31000});
  Status s = VerifyPlan(c.state, bad);
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("guaranteed job guaranteed evicted by another tenant's intruder"), std::string::npos)
      << s.ToString();
}

TEST(SchedulerTest, VerifyPlanCatchesAJobBothPlacedAndPreempted) {
  Cluster c;
  c.AddNodes("h100-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("t");
  c.Submit(JobBuilder("a").Tenant("t").Gpus(8));
  c.RunPass(0);
  Plan bad;
  bad.placements.push_back({c.Id("a"), AdmissionClass::kBurstable, {}});
  bad.preemptions.push_back({c.Id("a"), c.Id("a"), PreemptKind::kPriority, 0});
  EXPECT_NE(VerifyPlan(c.state, bad).message().find("both placed and preempted"), std::string::npos);
  EXPECT_TRUE(VerifyPlan(c.state, Plan{}).ok());
}

}  // namespace
}  // namespace allot
