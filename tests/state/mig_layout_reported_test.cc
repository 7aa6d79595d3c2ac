// MigLayoutReported: what a node agent holds of its MIG layout. An agent-managed MIG GPU takes
// MIG shares only once the node reports the planned layout; a simulated node keeps ready_ms.
// Reports survive the journal and a snapshot.
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class MigLayoutReportedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.Tenant("t");
    geo_ = FindMigGeometry(testing::kH100);
    g3_ = static_cast<uint8_t>(geo_->Find("3g.40gb"));
    NodeSpec spec{"mig-a", "z", "r", "", 64000, 512 * 1024, testing::kH100, 2};
    spec.sharing = Sharing::kMig;
    spec.mig_layout = {"3g.40gb", "3g.40gb"};  // each GPU: 3g@0, 3g@4
    c_.Apply(NodeRegistered{spec});
    node_ = c_.state.fleet().Find("mig-a");
    c_.Apply(NodeConditionChanged{node_, NodeCondition::kReady});
  }
  void SubmitMig(const std::string& name, int64_t at) {
    JobSpec spec = JobBuilder(name).Tenant("t").Duration(3600000).At(at).Build(c_.state);
    spec.gpu_resource = c_.Res("gpu/H100-80GB");
    TaskGroup g{1, 0, 1000, 1024};
    g.share = ShareKind::kMig;
    g.mig_profile = g3_;
    spec.groups = {g};
    c_.Apply(JobSubmitted{spec}, at);
  }
  MigLayout Planned() const { return {{g3_, 0}, {g3_, 4}}; }
  Status Report(int gpu, MigLayout layout, int64_t now = 2000) {
    return c_.state.apply({now, MigLayoutReported{node_, gpu, std::move(layout)}});
  }

  Cluster c_;
  const MigGeometry* geo_ = nullptr;
  uint8_t g3_ = 0;
  NodeId node_;
};

TEST_F(MigLayoutReportedTest, AnAgentsMigGpuTakesNoShareUntilTheNodeReportsThePlannedLayout) {
  SubmitMig("m", 1000);
  Plan plan = c_.RunPass(1000);
  EXPECT_EQ(c_.StateOf("m"), JobState::kPending);
  EXPECT_NE(testing::PendingReasonOf(plan, c_.Id("m")).find("GPU 0's MIG layout is not yet held by the node"),
            std::string::npos)
      << testing::PendingReasonOf(plan, c_.Id("m"));

  ASSERT_TRUE(Report(1, {{g3_, 4}}).ok());  // GPU 1 half made: still not held
  c_.RunPass(3000);
  EXPECT_EQ(c_.StateOf("m"), JobState::kPending);
  ASSERT_TRUE(Report(1, {{g3_, 4}, {g3_, 0}}).ok());  // any order
  EXPECT_EQ(c_.state.fleet().shares(node_)[1].node_layout, Planned()) << "kept sorted";
  c_.RunPass(4000);
  ASSERT_EQ(c_.StateOf("m"), JobState::kRunning);
  EXPECT_EQ(c_.job("m").placement[0].gpu_mask, 2u) << "on GPU 1, the one the node holds";
}

TEST_F(MigLayoutReportedTest, AnInstanceTheNodeHoldsButThePlanDropsKeepsTheGpuNotReady) {
  ASSERT_TRUE(Report(0, {{g3_, 0}, {g3_, 4}, {static_cast<uint8_t>(geo_->Find("1g.10gb")), 0}}).ok());
  EXPECT_FALSE(MigLayoutHeld(c_.state.fleet().shares(node_)[0]));
  ASSERT_TRUE(Report(0, Planned()).ok());
  EXPECT_TRUE(MigLayoutHeld(c_.state.fleet().shares(node_)[0]));
}

TEST_F(MigLayoutReportedTest, ASimulatedMigNodeStillWaitsOnlyForReadyMs) {
  NodeSpec sim{"mig-sim", "z", "r", "", 64000, 512 * 1024, testing::kH100, 1};
  sim.sharing = Sharing::kMig;
  sim.mig_layout = {"3g.40gb"};
  c_.Apply(NodeAdded{sim});
  NodeId id = c_.state.fleet().Find("mig-sim");
  EXPECT_FALSE(c_.state.fleet().shares(id)[0].agent);
  EXPECT_EQ(c_.state.apply({0, MigLayoutReported{id, 0, {}}}).code(), Code::kFailedPrecondition) << "no agent there";
  SubmitMig("m", 1000);
  c_.RunPass(1000);
  ASSERT_EQ(c_.StateOf("m"), JobState::kRunning);
  EXPECT_EQ(c_.job("m").placement[0].node, id);
}

TEST_F(MigLayoutReportedTest, ABadReportIsRefusedNamingWhatIsWrong) {
  Status s = Report(2, Planned());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("no GPU 2"), std::string::npos) << s.message();
  s = Report(0, {{static_cast<uint8_t>(geo_->profiles.size()), 0}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(c_.state.fleet().shares(node_)[0].node_layout.empty()) << "nothing changed";
}

TEST_F(MigLayoutReportedTest, ARestartedAgentMustReportItsLayoutAgain) {
  ASSERT_TRUE(Report(0, Planned()).ok());
  NodeSpec again = c_.state.fleet().SpecOf(node_, c_.state.resource_names());
  ASSERT_TRUE(c_.state.apply({5000, NodeRegistered{again}}).ok());
  EXPECT_TRUE(c_.state.fleet().shares(node_)[0].node_layout.empty());
  EXPECT_FALSE(MigLayoutHeld(c_.state.fleet().shares(node_)[0]));
}

TEST_F(MigLayoutReportedTest, ReportsSurviveASnapshot) {
  ASSERT_TRUE(Report(0, Planned()).ok());
  std::string bytes = EncodeSnapshot(c_.state);
  ClusterState restored;
  ASSERT_TRUE(RestoreSnapshot(bytes, restored).ok());
  EXPECT_EQ(restored.fleet().shares(node_), c_.state.fleet().shares(node_));
  EXPECT_TRUE(restored.fleet().shares(node_)[0].agent);
  EXPECT_EQ(restored.fleet().shares(node_)[0].node_layout, Planned());
  EXPECT_EQ(EncodeSnapshot(restored), bytes);
}

}  // namespace
}  // namespace allot
