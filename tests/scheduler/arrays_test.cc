// Arrays, retries and dependencies in the pass and the state (docs/arrays.md): an array's
// parallel limit, a failed run retried at its queue place, a job waiting for its dependencies,
// failed when one can never be met, and the state's refusals at submit.
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "state/dependency.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;
using testing::kH100;
using testing::PendingReasonOf;

Cluster OneNode() {
  Cluster c;
  c.AddNodes("gpu-", 1, "z", "r", 64, 512, kH100, 8);
  c.Tenant("vfx");
  return c;
}

void SubmitArray(Cluster& c, const std::string& name, int count, int parallel, int retries = 0) {
  for (int i = 0; i < count; ++i) {
    c.Submit(JobBuilder("").Element(name, i, count, parallel).Tenant("vfx").Gpus(1).Duration(60000).Retries(retries));
  }
}

TEST(ArraysTest, AtMostParallelElementsRunAndTheLowestIndexesStartFirst) {
  Cluster c = OneNode();
  SubmitArray(c, "render", 6, 2);
  Plan p = c.RunPass(0);
  EXPECT_EQ(c.Running("render"), (std::vector<std::string>{"render-0", "render-1"})) << "8 GPUs free, 2 allowed";
  EXPECT_EQ(PendingReasonOf(p, c.Id("render-2")), "array render: at its parallel limit (2 of its 6 elements at once)");
  c.Finish("render-0", 60000);
  c.RunPass(60000);
  EXPECT_EQ(c.Running("render"), (std::vector<std::string>{"render-1", "render-2"}));
  ArrayProgress progress = ProgressOf(c.state, c.state.ArrayElements(c.state.tenants().Find("vfx"), "render"));
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(progress.running, 2);
  EXPECT_EQ(progress.pending, 3);
  EXPECT_STREQ(progress.state(), "running");
}

TEST(ArraysTest, AFailedRunIsRetriedUntilItsRetriesAreSpentThenTheJobFails) {
  Cluster c = OneNode();
  SubmitArray(c, "render", 3, 1, /*retries=*/1);
  c.RunPass(0);
  ASSERT_EQ(c.StateOf("render-0"), JobState::kRunning);
  c.Apply(JobFailed{c.Id("render-0"), "exit code 1"}, 10000);
  EXPECT_EQ(c.StateOf("render-0"), JobState::kPending);
  EXPECT_EQ(c.job("render-0").failures, 1);
  EXPECT_EQ(c.job("render-0").reason, "retry 1 of 1 after: exit code 1");
  ASSERT_EQ(c.job("render-0").ended_runs.size(), 1u) << "the failed run is metered";
  EXPECT_EQ(c.job("render-0").ended_runs[0].end_ms, 10000);
  c.RunPass(10000);
  EXPECT_EQ(c.Running("render"), std::vector<std::string>{"render-0"}) << "retried at its old queue place, ahead of render-1";
  c.Apply(JobFailed{c.Id("render-0"), "exit code 2"}, 20000);
  EXPECT_EQ(c.StateOf("render-0"), JobState::kFailed);
  EXPECT_EQ(c.job("render-0").reason, "exit code 2");
  c.RunPass(20000);
  EXPECT_EQ(c.Running("render"), std::vector<std::string>{"render-1"});
}

TEST(ArraysTest, AJobWaitsForItsDependencyAndStartsWhenItSucceeds) {
  Cluster c = OneNode();
  c.Submit(JobBuilder("prepare").Tenant("vfx").Gpus(1).Duration(60000));
  c.Submit(JobBuilder("train").Tenant("vfx").Gpus(4).Duration(60000).After("prepare"));
  Plan p = c.RunPass(0);
  EXPECT_EQ(c.StateOf("train"), JobState::kPending);
  EXPECT_EQ(PendingReasonOf(p, c.Id("train")), "waiting for job prepare to succeed");
  c.Finish("prepare", 60000);
  c.RunPass(60000);
  EXPECT_EQ(c.StateOf("train"), JobState::kRunning);
}

TEST(ArraysTest, ADependencyThatCanNeverBeMetFailsTheJobNamingIt) {
  Cluster c = OneNode();
  c.Submit(JobBuilder("prepare").Tenant("vfx").Gpus(1).Duration(60000));
  c.Submit(JobBuilder("train").Tenant("vfx").Gpus(1).Duration(60000).After("prepare"));
  c.Submit(JobBuilder("cleanup").Tenant("vfx").Gpus(1).Duration(60000).After("prepare", AfterState::kFailed));
  c.Submit(JobBuilder("notify").Tenant("vfx").Gpus(1).Duration(60000).After("prepare", AfterState::kFinished));
  c.RunPass(0);
  c.Apply(JobFailed{c.Id("prepare"), "exit code 3"}, 5000);
  Plan p = c.RunPass(5000);
  ASSERT_EQ(p.failures.size(), 1u);
  EXPECT_EQ(c.StateOf("train"), JobState::kFailed);
  EXPECT_EQ(c.job("train").reason, "dependency job prepare ended failed (exit code 3); expected succeeded");
  EXPECT_LT(c.job("train").first_started_ms, 0) << "never ran";
  EXPECT_EQ(c.StateOf("cleanup"), JobState::kRunning);
  EXPECT_EQ(c.StateOf("notify"), JobState::kRunning);
}

TEST(ArraysTest, AnArrayDependencyIsMetWhenEveryElementSucceededAndNeverWhenOneFailed) {
  Cluster c = OneNode();
  SubmitArray(c, "shards", 2, 2);
  c.Submit(JobBuilder("merge").Tenant("vfx").Gpus(1).Duration(60000).After("shards"));
  Plan p = c.RunPass(0);
  EXPECT_EQ(PendingReasonOf(p, c.Id("merge")), "waiting for array shards to succeed (0 of 2 elements ended)");
  c.Finish("shards-0", 60000);
  p = c.RunPass(60000);
  EXPECT_EQ(PendingReasonOf(p, c.Id("merge")), "waiting for array shards to succeed (1 of 2 elements ended)");
  c.Apply(JobFailed{c.Id("shards-1"), "exit code 1"}, 70000);
  c.RunPass(70000);
  EXPECT_EQ(c.StateOf("merge"), JobState::kFailed);
  EXPECT_EQ(c.job("merge").reason, "dependency array shards (element shards-1) ended failed (exit code 1); expected succeeded");
}

TEST(ArraysTest, TheStateRefusesUnknownDependenciesOutOfOrderElementsAndNameClashes) {
  Cluster c = OneNode();
  auto refuse = [&](const JobBuilder& b) { return c.state.apply({0, JobSubmitted{b.Build(c.state)}}); };
  Status unknown = refuse(JobBuilder("x").Tenant("vfx").Gpus(1).Duration(1000).After("nope"));
  EXPECT_EQ(unknown.code(), Code::kNotFound);
  EXPECT_EQ(unknown.message(), "job 'x' after[0].job: no job or array 'nope' in tenant 'vfx'; expected one submitted before it");
  Status itself = refuse(JobBuilder("x").Tenant("vfx").Gpus(1).Duration(1000).After("x"));
  EXPECT_NE(itself.message().find("is the job itself"), std::string::npos) << itself.message();
  Status skipped = refuse(JobBuilder("").Element("r", 1, 3, 1).Tenant("vfx").Gpus(1).Duration(1000));
  EXPECT_NE(skipped.message().find("array 'r' element 1: the array has 0 element(s)"), std::string::npos) << skipped.message();
  c.Submit(JobBuilder("render").Tenant("vfx").Gpus(1).Duration(1000));
  Status clash = refuse(JobBuilder("").Element("render", 0, 3, 1).Tenant("vfx").Gpus(1).Duration(1000));
  EXPECT_EQ(clash.code(), Code::kConflict);
  Status ranges = refuse(JobBuilder("").Element("r", 0, 3, 5).Tenant("vfx").Gpus(1).Duration(1000));
  EXPECT_NE(ranges.message().find("array.parallel"), std::string::npos) << ranges.message();
  EXPECT_EQ(c.state.jobs().size(), 1u) << "nothing else submitted";
}

}  // namespace
}  // namespace allot
