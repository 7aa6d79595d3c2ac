// The events node agents cause: registration (new and again), node failure (lost, repair),
// and a failed job. Each keeps usage == allocations, requeues what it must and no more, and
// survives a snapshot.
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

NodeSpec AgentNode(const std::string& name, int gpus = 8) {
  return NodeSpec{name, "z1", "r1", "", 64000, 512 * 1024, testing::kH100, gpus};
}

class NodeAgentEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.Tenant("a");
    c_.Tenant("b");
    c_.Apply(NodeRegistered{AgentNode("gpu-a")});
    c_.Apply(NodeRegistered{AgentNode("gpu-b")});
  }
  NodeId Node(const std::string& name) const { return c_.state.fleet().Find(name); }
  Status Try(EventBody body, int64_t now = 1000) { return c_.state.apply({now, std::move(body)}); }
  void Ready(const std::string& name) { c_.Apply(NodeConditionChanged{Node(name), NodeCondition::kReady}); }
  Cluster c_;
};

TEST_F(NodeAgentEventsTest, ARegisteredNodeIsAgentManagedAndTakesNoJobsUntilAccepted) {
  NodeId a = Node("gpu-a");
  ASSERT_TRUE(a.valid());
  EXPECT_TRUE(c_.state.agent_managed(a));
  EXPECT_EQ(c_.state.fleet().node(a).condition, NodeCondition::kAccepting);
  c_.Submit(JobBuilder("j").Tenant("a").Gpus(8));
  c_.RunPass(0);
  EXPECT_EQ(c_.StateOf("j"), JobState::kPending) << "accepting nodes are not schedulable";
  Ready("gpu-a");
  c_.RunPass(10);
  EXPECT_EQ(c_.StateOf("j"), JobState::kRunning);
}

TEST_F(NodeAgentEventsTest, ReRegisteringWithAnotherInventoryIsRefusedAndChangesNothing) {
  Ready("gpu-a");
  Status s = Try(NodeRegistered{AgentNode("gpu-a", 7)});
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_NE(s.message().find("registered with another inventory (8 × H100-80GB"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("now reports 7 × H100-80GB"), std::string::npos) << s.message();
  EXPECT_EQ(c_.state.fleet().node(Node("gpu-a")).condition, NodeCondition::kReady);
}

TEST_F(NodeAgentEventsTest, ReRegisteringRequeuesTheJobsTheNodeHeldAtTheirQueuePlace) {
  Ready("gpu-a");
  c_.Submit(JobBuilder("j").Tenant("a").Gpus(4).At(0));
  c_.RunPass(100);
  ASSERT_EQ(c_.StateOf("j"), JobState::kRunning);
  int64_t queued = c_.job("j").queued_ms;
  ASSERT_TRUE(Try(NodeRegistered{AgentNode("gpu-a")}, 5000).ok());
  const Job& j = c_.job("j");
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.requeues, 1);
  EXPECT_EQ(j.preemptions, 0) << "a requeue is not a preemption";
  EXPECT_EQ(j.queued_ms, queued) << "back at its old place";
  EXPECT_EQ(j.reason, "requeued: the agent of node 'gpu-a' restarted");
  ASSERT_EQ(j.ended_runs.size(), 1u);
  EXPECT_EQ(j.ended_runs[0].end_ms, 5000);
  EXPECT_EQ(c_.state.fleet().node(Node("gpu-a")).condition, NodeCondition::kAccepting);
  EXPECT_TRUE(c_.state.tenants().tenant(c_.state.tenants().root()).usage.IsZero());
  EXPECT_TRUE(c_.state.VerifyInvariants().ok());
}

TEST_F(NodeAgentEventsTest, ALostNodeRequeuesTheJobsWithATaskOnItAndNoOthers) {
  c_.Apply(NodeRegistered{AgentNode("gpu-c")});
  for (const char* n : {"gpu-a", "gpu-b", "gpu-c"}) Ready(n);
  // A gang over two whole nodes, and a job on the third.
  c_.Submit(JobBuilder("gang").Tenant("a").Gpus(8).Tasks(2).Duration(3600000));
  c_.RunPass(0);
  c_.Submit(JobBuilder("alone").Tenant("b").Gpus(1).Duration(3600000).At(1));
  c_.RunPass(1);
  ASSERT_EQ(c_.StateOf("gang"), JobState::kRunning);
  ASSERT_EQ(c_.StateOf("alone"), JobState::kRunning);
  NodeId lost = c_.job("gang").placement[1].node;
  ASSERT_NE(lost, c_.job("alone").placement[0].node);
  ASSERT_TRUE(Try(NodeFailed{lost, NodeCondition::kDown, "lost: no heartbeat for 15 s"}, 60000).ok());
  EXPECT_EQ(c_.StateOf("gang"), JobState::kPending) << "a gang with one task on the lost node is requeued whole";
  EXPECT_EQ(c_.StateOf("alone"), JobState::kRunning);
  EXPECT_EQ(c_.job("gang").reason,
            "requeued: node '" + c_.state.fleet().node(lost).name + "' lost: no heartbeat for 15 s");
  EXPECT_EQ(c_.state.fleet().node(lost).condition, NodeCondition::kDown);
  EXPECT_TRUE(c_.state.JobsOn(lost).empty());
  EXPECT_TRUE(c_.state.VerifyInvariants().ok());
}

TEST_F(NodeAgentEventsTest, ASimulatedJobKeepsTheWorkItCheckpointedBeforeItsNodeFailed) {
  Ready("gpu-a");
  JobSpec spec = JobBuilder("ck").Tenant("a").Gpus(1).Duration(3600000).Build(c_.state);
  spec.checkpoint_interval_ms = 600000;
  c_.Apply(JobSubmitted{spec});
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("ck"), JobState::kRunning);
  // 25 minutes in: two 10-minute checkpoints are kept.
  ASSERT_TRUE(Try(NodeFailed{Node("gpu-a"), NodeCondition::kRepair, "failed its health check"}, 1500000).ok());
  EXPECT_EQ(c_.job("ck").saved_work_ms, 1200000);
  EXPECT_EQ(c_.state.fleet().node(Node("gpu-a")).condition, NodeCondition::kRepair);
}

TEST_F(NodeAgentEventsTest, ANodeFailureMustSayDownRepairOrAccepting) {
  Status s = Try(NodeFailed{Node("gpu-a"), NodeCondition::kCordoned, "x"});
  EXPECT_EQ(s.message(), "node failure: condition 'cordoned': expected down, repair or accepting");
  EXPECT_EQ(Try(NodeFailed{NodeId(9), NodeCondition::kDown, "x"}).code(), Code::kNotFound);
}

TEST_F(NodeAgentEventsTest, AFailedJobEndsWithItsReasonAndFreesItsResources) {
  Ready("gpu-a");
  c_.Submit(JobBuilder("oom").Tenant("a").Gpus(2));
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("oom"), JobState::kRunning);
  EXPECT_EQ(Try(JobFailed{c_.Id("oom"), ""}).message(), "job failure: reason: must not be empty");
  ASSERT_TRUE(Try(JobFailed{c_.Id("oom"), "task 0 on gpu-a: killed by SIGKILL: memory limit 512 MiB exceeded"}, 7000).ok());
  const Job& j = c_.job("oom");
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.finished_ms, 7000);
  EXPECT_EQ(j.reason, "task 0 on gpu-a: killed by SIGKILL: memory limit 512 MiB exceeded");
  int runs = 0;
  j.ForEachRun(9000, [&](int64_t start, int64_t end) {
    ++runs;
    EXPECT_EQ(end - start, 7000) << "a failed run counts until it failed";
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(Try(JobFailed{c_.Id("oom"), "again"}).code(), Code::kFailedPrecondition);
  EXPECT_TRUE(c_.state.tenants().tenant(c_.state.tenants().root()).usage.IsZero());
}

TEST_F(NodeAgentEventsTest, ASnapshotKeepsWhichNodesAgentsManageAndTheRequeueCounts) {
  Ready("gpu-a");
  c_.AddNodes("sim-", 1, "z", "r", 64, 512, testing::kH100, 8);
  c_.Submit(JobBuilder("j").Tenant("a").Gpus(8).Tasks(2));
  c_.RunPass(0);
  c_.Apply(NodeRegistered{AgentNode("gpu-a")}, 100);
  std::string bytes = EncodeSnapshot(c_.state);
  ClusterState r;
  Status s = RestoreSnapshot(bytes, r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.agent_managed(r.fleet().Find("gpu-a")));
  EXPECT_FALSE(r.agent_managed(r.fleet().Find("sim-2")));
  EXPECT_EQ(r.fleet().node(r.fleet().Find("gpu-a")).condition, NodeCondition::kAccepting);
  EXPECT_EQ(r.job(allot::testing::OnlyJobNamed(r, "j")).requeues, c_.job("j").requeues);
  EXPECT_EQ(EncodeSnapshot(r), bytes);
}

}  // namespace
}  // namespace allot
