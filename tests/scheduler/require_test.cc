// A job's `require` (fleet/labels.h) in the pass: its tasks go only to nodes whose labels
// satisfy it, preemption frees only such nodes for it, and a job no node satisfies says so.
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;
using testing::kH100;
using testing::PendingReasonOf;

const NodeLabels kOld = {{"driver", "535.104.05"}, {"interconnect", "pcie"}};
const NodeLabels kNew = {{"driver", "550.54.15"}, {"interconnect", "nvlink"}};

// old-0, old-1 (driver 535, PCIe), then new-2, new-3 (driver 550, NVLink); 8 H100s each.
Cluster TwoOldTwoNew() {
  Cluster c;
  c.AddNodes("old-", 2, "z", "r", 64, 512, kH100, 8, "", kOld);
  c.AddNodes("new-", 2, "z", "r", 64, 512, kH100, 8, "", kNew);
  c.Tenant("a");
  return c;
}

std::vector<std::string> NodesOf(const Cluster& c, const std::string& job) {
  std::vector<std::string> out;
  for (const TaskPlacement& p : c.job(job).placement) out.push_back(c.state.fleet().node(p.node).name);
  return out;
}

TEST(RequireTest, AJobLandsOnlyOnNodesThatSatisfyItsRequirement) {
  Cluster c = TwoOldTwoNew();
  // Best fit alone would take old-0 and old-1 (the lowest ids); the requirement leaves only
  // new-2 and new-3. Queue order: gang, one, any (same tenant, same time: by id).
  c.Submit(JobBuilder("gang").Tenant("a").Gpus(8).Tasks(2).Require("driver>=550,interconnect=nvlink"));
  JobId one = c.Submit(JobBuilder("one").Tenant("a").Gpus(4).Require("driver>=550"));
  c.Submit(JobBuilder("any").Tenant("a").Gpus(8));
  Plan plan = c.RunPass(0);
  EXPECT_EQ(NodesOf(c, "gang"), (std::vector<std::string>{"new-2", "new-3"}));
  EXPECT_EQ(NodesOf(c, "any"), (std::vector<std::string>{"old-0"}));
  EXPECT_EQ(c.StateOf("one"), JobState::kPending) << "old-1 is free, but its driver is 535";
  EXPECT_EQ(PendingReasonOf(plan, one),
            "needs 4 gpu/H100-80GB GPUs among the 2 nodes that satisfy require driver>=550; 0 free there");
}

// A node whose agent cannot confine tasks in every way (isolation=partial: no device cgroup, no
// limits, …; seen on a real GPU host) takes no untrusted tenant's job, and the job says why.
// Trusted tenants still use it; a fleet without such a node schedules as before.
TEST(RequireTest, AnUntrustedTenantsJobIsKeptOffNodesWhoseIsolationIsPartial) {
  Cluster c;
  c.AddNodes("partial-", 1, "z", "r", 64, 512, kH100, 8, "", NodeLabels{{"isolation", "partial"}});
  c.AddNodes("full-", 1, "z", "r", 64, 512, kH100, 8, "", NodeLabels{{"isolation", "full"}});
  TenantSpec u = testing::MakeTenantSpec(c.state.resource_names(), "u", {}, {}, kMilli);
  u.trust = Trust::kUntrusted;
  c.Apply(TenantUpserted{u});
  c.Tenant("t");
  // Best fit by id would put the first on partial-0.
  c.Submit(JobBuilder("u1").Tenant("u").Gpus(8));
  JobId u2 = c.Submit(JobBuilder("u2").Tenant("u").Gpus(8));
  c.Submit(JobBuilder("t1").Tenant("t").Gpus(8));
  Plan plan = c.RunPass(0);
  EXPECT_EQ(NodesOf(c, "u1"), (std::vector<std::string>{"full-1"}));
  EXPECT_EQ(c.StateOf("u2"), JobState::kPending) << "partial-0 is free, but its agent cannot confine tasks";
  EXPECT_NE(PendingReasonOf(plan, u2).find("its tenant is untrusted: kept off the 1 node whose agent cannot confine "
                                           "tasks in every way (isolation=partial)"),
            std::string::npos)
      << PendingReasonOf(plan, u2);
  EXPECT_EQ(NodesOf(c, "t1"), (std::vector<std::string>{"partial-0"})) << "a trusted tenant's job may use it";
}

// An untrusted tenant's job already on a node that cannot confine tasks in every way (its tenant
// made untrusted after it started, or the node turned partial under it) is moved: signalled with
// its grace (kind isolation), then placed only where tasks are confined. A trusted tenant's job
// on such a node stays, and a fleet without one moves nothing.
TEST(RequireTest, AnUntrustedTenantsRunningJobIsMovedOffANodeWhoseIsolationIsPartial) {
  Cluster c;
  c.AddNodes("partial-", 2, "z", "r", 64, 512, kH100, 8, "", NodeLabels{{"isolation", "partial"}});
  c.AddNodes("full-", 1, "z", "r", 64, 512, kH100, 8, "", NodeLabels{{"isolation", "full"}});
  TenantSpec u = testing::MakeTenantSpec(c.state.resource_names(), "u", {}, {}, kMilli);
  c.Apply(TenantUpserted{u});
  c.Tenant("t");
  c.Submit(JobBuilder("u1").Tenant("u").Gpus(8).Grace(30000));
  c.Submit(JobBuilder("t1").Tenant("t").Gpus(8));
  c.RunPass(0);
  ASSERT_EQ(NodesOf(c, "u1"), (std::vector<std::string>{"partial-0"}));
  ASSERT_EQ(NodesOf(c, "t1"), (std::vector<std::string>{"partial-1"}));
  EXPECT_TRUE(c.RunPass(500).preemptions.empty()) << "a trusted tenant may run there";
  u.trust = Trust::kUntrusted;
  c.Apply(TenantUpserted{u}, 1000);
  Plan plan = c.RunPass(1000);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("u1"));
  EXPECT_EQ(plan.preemptions[0].kind, PreemptKind::kIsolation);
  EXPECT_EQ(plan.preemptions[0].deadline_ms, 31000);
  EXPECT_EQ(c.StateOf("t1"), JobState::kRunning);
  EXPECT_TRUE(c.RunPass(2000).preemptions.empty()) << "signalled once";
  c.Stop("u1", 3000);
  c.RunPass(3000);
  EXPECT_EQ(NodesOf(c, "u1"), (std::vector<std::string>{"full-2"})) << "partial-0 is free, but does not confine";
}

TEST(RequireTest, OneTaskGoesToTheFullestMatchingNode) {
  Cluster c = TwoOldTwoNew();
  c.Submit(JobBuilder("one").Tenant("a").Gpus(4).Require("driver>=550"));
  c.Submit(JobBuilder("pcie").Tenant("a").Gpus(4).Require("interconnect=pcie"));
  c.Submit(JobBuilder("any").Tenant("a").Gpus(2));
  c.RunPass(0);
  EXPECT_EQ(NodesOf(c, "one"), (std::vector<std::string>{"new-2"}));
  EXPECT_EQ(NodesOf(c, "pcie"), (std::vector<std::string>{"old-0"}));
  EXPECT_EQ(c.StateOf("any"), JobState::kRunning);
}

TEST(RequireTest, AJobNoNodeSatisfiesWaitsNamingTheRequirementAndWhatTheNodesHave) {
  Cluster c = TwoOldTwoNew();
  JobId id = c.Submit(JobBuilder("too-new").Tenant("a").Gpus(1).Require("driver>=560,rack_power=a"));
  Plan plan = c.RunPass(0);
  EXPECT_EQ(c.StateOf("too-new"), JobState::kPending) << "a node with a newer driver may register later";
  EXPECT_EQ(PendingReasonOf(plan, id),
            "requires driver>=560,rack_power=a; no H100-80GB node satisfies it (driver: 535.104.05 on 2 nodes, "
            "550.54.15 on 2 nodes; rack_power: none on 4 nodes)");
}

TEST(RequireTest, AJobWhoseMatchingNodesAreFullCountsOnlyThem) {
  Cluster c = TwoOldTwoNew();
  c.Submit(JobBuilder("fill").Tenant("a").Gpus(8).Tasks(2).Require("driver>=550"));
  c.RunPass(0);
  JobId id = c.Submit(JobBuilder("more").Tenant("a").Gpus(8).Require("driver>=550").At(1000));
  Plan plan = c.RunPass(1000);
  EXPECT_EQ(PendingReasonOf(plan, id),
            "needs 8 gpu/H100-80GB GPUs among the 2 nodes that satisfy require driver>=550; 0 free there");
}

TEST(RequireTest, AFailedRequirementDoesNotBlockTheSameShapeWithoutIt) {
  // The pass memoises failures by shape: the requirement is part of it.
  Cluster c = TwoOldTwoNew();
  c.Submit(JobBuilder("blocked").Tenant("a").Gpus(8).Require("driver>=560"));
  c.Submit(JobBuilder("free").Tenant("a").Gpus(8).At(1));
  c.RunPass(1);
  EXPECT_EQ(c.StateOf("blocked"), JobState::kPending);
  EXPECT_EQ(c.StateOf("free"), JobState::kRunning);
  EXPECT_NE(c.job("blocked").shape, c.job("free").shape);
}

// old-0 and new-1; ads borrows both, on-new (on new-1) being the older job, so that without a
// requirement the newest (on-old, on old-0) would be the first victim; research is guaranteed
// `research_gpus`.
Cluster AdsBorrowsAnOldAndANewNode(const std::string& research_gpus) {
  Cluster c;
  c.AddNodes("old-", 1, "z", "r", 64, 512, kH100, 8, "", kOld);
  c.AddNodes("new-", 1, "z", "r", 64, 512, kH100, 8, "", kNew);
  c.Tenant("research", {{"gpu/H100-80GB", research_gpus}});
  c.Tenant("ads");
  c.Submit(JobBuilder("on-new").Tenant("ads").Gpus(8).Require("driver>=550").At(0));
  c.RunPass(0);
  c.Submit(JobBuilder("on-old").Tenant("ads").Gpus(8).At(10));
  c.RunPass(10);
  return c;
}

TEST(RequireTest, ReclaimChoosesOnlyVictimsOnNodesThatSatisfyThePreemptor) {
  Cluster c = AdsBorrowsAnOldAndANewNode("8");
  ASSERT_EQ(NodesOf(c, "on-new"), (std::vector<std::string>{"new-1"}));
  ASSERT_EQ(NodesOf(c, "on-old"), (std::vector<std::string>{"old-0"}));
  c.Submit(JobBuilder("train").Tenant("research").Gpus(8).Require("driver>=550").At(100));
  Plan plan = c.RunPass(100);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("on-new")) << "a victim on the old node frees nothing for train";
  c.Stop("on-new", 200);
  c.RunPass(200);
  EXPECT_EQ(NodesOf(c, "train"), (std::vector<std::string>{"new-1"}));
}

TEST(RequireTest, AVictimClaimedBehindAnUnclaimedOneIsNotTakenAgain) {
  // The reclaim order is built once per pass: on-old (the newer, less work lost), then
  // on-new. The first train skips on-old (wrong driver) and claims on-new; for the second,
  // on-old is still unclaimed ahead of it, so on-new is skipped as claimed, not taken twice.
  Cluster c = AdsBorrowsAnOldAndANewNode("16");
  c.Submit(JobBuilder("train-1").Tenant("research").Gpus(8).Require("driver>=550").At(100));
  JobId second = c.Submit(JobBuilder("train-2").Tenant("research").Gpus(8).Require("driver>=550").At(101));
  Plan plan = c.RunPass(101);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, c.Id("on-new"));
  EXPECT_EQ(plan.preemptions[0].preemptor, c.Id("train-1"));
  EXPECT_EQ(c.StateOf("train-2"), JobState::kPending);
  EXPECT_EQ(PendingReasonOf(plan, second).find("waiting for"), std::string::npos) << PendingReasonOf(plan, second);
}

TEST(RequireTest, ARegisteredNodeTakesTheLabelsItsAgentReports) {
  Cluster c;
  NodeSpec spec{"agent-0", "z", "r", "", 64000, 512 * 1024, kH100, 8};
  spec.labels = kOld;
  c.Apply(NodeRegistered{spec});
  EXPECT_EQ(c.state.fleet().labels(c.state.fleet().Find("agent-0")), kOld);
  // Restarted after a driver upgrade: same inventory, new labels.
  spec.labels = kNew;
  c.Apply(NodeRegistered{spec});
  EXPECT_EQ(c.state.fleet().labels(c.state.fleet().Find("agent-0")), kNew);
  EXPECT_EQ(c.state.fleet().SpecOf(NodeId(0), c.state.resource_names()).labels, kNew) << "snapshots keep them";
}

}  // namespace
}  // namespace allot
