// TaskRunReported: an agent's report of a task run's exit is kept once per (job, run, task),
// refused naming what is wrong, and survives a snapshot.
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class TaskRunReportedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.Tenant("t");
    c_.Apply(NodeRegistered{NodeSpec{"gpu-a", "z1", "r1", "", 64000, 512 * 1024, testing::kH100, 8}});
    c_.Apply(NodeConditionChanged{c_.state.fleet().Find("gpu-a"), NodeCondition::kReady});
    c_.Submit(JobBuilder("j").Tenant("t").Gpus(1).Tasks(2).Duration(60000));
    c_.RunPass(0);
  }
  Status Try(TaskRunReported e, int64_t now = 5000) { return c_.state.apply({now, std::move(e)}); }
  Cluster c_;
};

TEST_F(TaskRunReportedTest, AReportIsKeptOnceWithTheTimeItWasRecorded) {
  ASSERT_TRUE(Try({c_.Id("j"), 0, 1, "gpu-a", 100, 4100}).ok());
  ASSERT_EQ(c_.state.task_reports().size(), 1u);
  const ClusterState::TaskRunReport& r = c_.state.task_reports()[0];
  EXPECT_EQ(r.job, c_.Id("j"));
  EXPECT_EQ(r.task, 1);
  EXPECT_EQ(r.node, c_.state.fleet().Find("gpu-a"));
  EXPECT_EQ(r.ended_ms - r.started_ms, 4000);
  EXPECT_EQ(r.recorded_ms, 5000);
  EXPECT_TRUE(c_.state.TaskReported(c_.Id("j"), 0, 1));
  EXPECT_FALSE(c_.state.TaskReported(c_.Id("j"), 0, 0));

  Status again = Try({c_.Id("j"), 0, 1, "gpu-a", 100, 9999}, 6000);
  EXPECT_EQ(again.code(), Code::kConflict);
  EXPECT_EQ(again.message(), "task 1 of job 'j' run 0 was already reported");
  EXPECT_EQ(c_.state.task_reports().size(), 1u) << "the first report stands";
}

TEST_F(TaskRunReportedTest, ABadReportIsRefusedNamingTheFieldAndChangesNothing) {
  EXPECT_EQ(Try({JobId(99), 0, 0, "gpu-a", 0, 1}).message(), "task report: job 99 does not exist");
  EXPECT_EQ(Try({c_.Id("j"), 0, 0, "gpu-z", 0, 1}).message(), "task report of job 'j': node 'gpu-z' does not exist");
  EXPECT_EQ(Try({c_.Id("j"), -1, 0, "gpu-a", 0, 1}).message(),
            "task report of job 'j': run -1, task 0: expected indexes ≥ 0");
  EXPECT_EQ(Try({c_.Id("j"), 0, 0, "gpu-a", 500, 400}).message(),
            "task report of job 'j': ended_ms 400: expected ≥ started_ms 500");
  EXPECT_TRUE(c_.state.task_reports().empty());
}

TEST_F(TaskRunReportedTest, ReportsSurviveASnapshotAndStillRefuseADuplicate) {
  ASSERT_TRUE(Try({c_.Id("j"), 0, 0, "gpu-a", 100, 4100}).ok());
  ASSERT_TRUE(Try({c_.Id("j"), 0, 1, "gpu-a", 100, 3100}, 5500).ok());
  std::string bytes = EncodeSnapshot(c_.state);
  ClusterState restored;
  Status s = RestoreSnapshot(bytes, restored);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(restored.task_reports(), c_.state.task_reports());
  EXPECT_EQ(EncodeSnapshot(restored), bytes);
  EXPECT_TRUE(restored.TaskReported(c_.Id("j"), 0, 1));
  EXPECT_EQ(restored.apply({7000, TaskRunReported{c_.Id("j"), 0, 1, "gpu-a", 0, 1}}).code(), Code::kConflict);
}

}  // namespace
}  // namespace allot
