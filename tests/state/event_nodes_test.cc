// Which nodes' agent view an event touches (state/event_nodes.h): the agent channel re-runs only
// those nodes' parked assignment polls, so a node left out would hear of its tasks only at its
// poll's deadline. Every node a job holds, before the event and after it; a node and the nodes
// of the jobs on it; nothing for tenants' paperwork; every node for what it cannot place.
#include <gtest/gtest.h>

#include "state/event_nodes.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

NodeSpec AgentNode(const std::string& name) { return NodeSpec{name, "z1", "r1", "", 64000, 512 * 1024, testing::kH100, 8}; }

class EventNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.Tenant("a");
    for (const char* n : {"gpu-a", "gpu-b", "gpu-c"}) {
      c_.Apply(NodeRegistered{AgentNode(n)});
      c_.Apply(NodeConditionChanged{Node(n), NodeCondition::kReady});
    }
    // A gang over two whole nodes, and a job on the third.
    gang_ = c_.Submit(JobBuilder("gang").Tenant("a").Gpus(8).Tasks(2).Duration(3600000));
    c_.RunPass(0);
    single_ = c_.Submit(JobBuilder("single").Tenant("a").Gpus(8).Duration(3600000));
    c_.RunPass(10);
    ASSERT_EQ(c_.StateOf("gang"), JobState::kRunning);
    ASSERT_EQ(c_.StateOf("single"), JobState::kRunning);
  }
  NodeId Node(const std::string& name) const { return c_.state.fleet().Find(name); }
  std::vector<std::string> Names(const NodesTouched& t) const {
    std::vector<std::string> out;
    for (NodeId n : t.nodes) out.push_back(c_.state.fleet().node(n).name);
    std::sort(out.begin(), out.end());
    return out;
  }
  // What applying `body` touched, as the controller finds it: before and after.
  NodesTouched Touch(EventBody body, int64_t now = 1000) {
    NodesTouched t;
    AddNodesTouched(c_.state, body, t);
    EXPECT_TRUE(c_.state.apply({now, body}).ok());
    AddNodesTouched(c_.state, body, t);
    t.Normalize();
    return t;
  }
  Cluster c_;
  JobId gang_, single_;
};

TEST_F(EventNodesTest, AJobsEndTouchesEveryNodeItHeldThoughItHoldsNoneAfter) {
  std::string single_node = c_.state.fleet().node(c_.state.job(single_).placement[0].node).name;
  NodesTouched t = Touch(JobFinished{gang_});
  EXPECT_FALSE(t.all);
  std::vector<std::string> gang_nodes;
  for (const char* n : {"gpu-a", "gpu-b", "gpu-c"}) {
    if (n != single_node) gang_nodes.push_back(n);
  }
  EXPECT_EQ(Names(t), gang_nodes) << "both of the gang's nodes, not the single job's";
}

TEST_F(EventNodesTest, ALostNodeTouchesItselfAndTheNodesOfTheJobsItHeld) {
  NodeId master = c_.state.job(gang_).placement[0].node;
  NodeId other = c_.state.job(gang_).placement[1].node;
  NodesTouched t = Touch(NodeFailed{master, NodeCondition::kDown, "lost"});
  EXPECT_FALSE(t.all);
  std::vector<std::string> want = {c_.state.fleet().node(master).name, c_.state.fleet().node(other).name};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Names(t), want) << "the gang's other node loses its run too";
  EXPECT_EQ(c_.StateOf("gang"), JobState::kPending);
}

TEST_F(EventNodesTest, APlacementTouchesTheNodesItPlacesOn) {
  JobId j = c_.Submit(JobBuilder("late").Tenant("a").Gpus(8).Duration(3600000));
  NodesTouched none = Touch(JobCancelled{j});
  EXPECT_FALSE(none.all);
  EXPECT_TRUE(none.nodes.empty()) << "a pending job holds no node";
  std::string freed = c_.state.fleet().node(c_.state.job(single_).placement[0].node).name;
  ASSERT_TRUE(c_.state.apply({2000, JobFinished{single_}}).ok());
  c_.Submit(JobBuilder("next").Tenant("a").Gpus(8).Duration(3600000));
  // The pass's events, each touched as the controller applies it.
  Plan plan = PlanPass(c_.state, 3000, c_.config);
  NodesTouched placed;
  for (const Event& e : plan.ToEvents()) {
    AddNodesTouched(c_.state, e.body, placed);
    ASSERT_TRUE(c_.state.apply(e).ok());
    AddNodesTouched(c_.state, e.body, placed);
  }
  placed.Normalize();
  ASSERT_EQ(c_.StateOf("next"), JobState::kRunning);
  EXPECT_FALSE(placed.all);
  EXPECT_EQ(Names(placed), std::vector<std::string>{freed}) << "the node it was placed on, and no other";
}

TEST_F(EventNodesTest, PaperworkTouchesNoNodeAndWhatCannotBePlacedTouchesEvery) {
  NodesTouched audit;
  AddNodesTouched(c_.state, AuditRecorded{}, audit);
  AddNodesTouched(c_.state, TokenRevoked{"h"}, audit);
  AddNodesTouched(c_.state, LedgerAppended{}, audit);
  EXPECT_FALSE(audit.all);
  EXPECT_TRUE(audit.nodes.empty());
  NodesTouched wide;
  AddNodesTouched(c_.state, ReservationCancelled{ReservationId(0)}, wide);
  EXPECT_TRUE(wide.all) << "a reservation's windows reach nodes the event does not name";
  NodesTouched moved;
  AddNodesTouched(c_.state, TenantMoved{"a", "b"}, moved);
  EXPECT_TRUE(moved.all) << "every task's answer carries its tenant's path";
}

}  // namespace
}  // namespace allot
