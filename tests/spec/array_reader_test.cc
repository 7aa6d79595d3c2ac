// The array and pipeline fields of a job spec (spec/array_reader.h): frames, the expansion into
// elements, dependencies, the simulator's failures, and the order a batch is submitted in.
#include <gtest/gtest.h>

#include "spec/array_reader.h"
#include "spec/job_spec.h"
#include "spec/scenario.h"

namespace allot {
namespace {

TEST(ArrayReaderTest, FramesAreAscendingRangesWithSteps) {
  EXPECT_EQ(*ParseFrames("1-9:2"), (std::vector<int64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(ParseFrames("1-240:2")->back(), 239);
  EXPECT_EQ(ParseFrames("1-240:2")->size(), 120u);
  EXPECT_EQ(*ParseFrames("1-3,10,20-30:5"), (std::vector<int64_t>{1, 2, 3, 10, 20, 25, 30}));
  EXPECT_EQ(*ParseFrames("7"), std::vector<int64_t>{7});
  EXPECT_EQ(ParseFrames("9-1").error().message(), "'9-1': the last frame is before the first; expected FIRST-LAST ascending");
  EXPECT_EQ(ParseFrames("1-5,3-8").error().message(), "'3-8' starts at or before frame 5; expected ranges in ascending order without overlap");
  EXPECT_EQ(ParseFrames("1-5:0").error().message(), "'1-5:0': a step of 0; expected at least 1");
  EXPECT_EQ(ParseFrames("a-5").error().message(), "'a-5': 'a' is not a frame number from 0 to 1000000000");
  EXPECT_FALSE(ParseFrames("").has_value());
  EXPECT_FALSE(ParseFrames("0-100000").has_value()) << "100001 frames: one too many";
  EXPECT_TRUE(ParseFrames("0-99999").has_value());
}

TEST(ArrayReaderTest, AnArrayExpandsIntoElementsNamedLikeRepeatCopies) {
  auto batch = ReadJobBatch(YAML::Load(R"({name: render, tenant: vfx, duration: 1m, tasks: {gpus: 1}, retries: 2,
                                            array: {frames: "10-14:2", parallel: 2}, after: [prep]})"), "body");
  ASSERT_TRUE(batch.has_value()) << batch.error().message();
  ASSERT_EQ(batch->size(), 3u);
  const JobSpec& last = (*batch)[2].spec;
  EXPECT_EQ(last.name, "render-2");
  EXPECT_EQ(last.array, (ArrayElement{"render", 2, 14, 3, 2}));
  EXPECT_EQ(last.retries, 2);
  EXPECT_EQ(last.after, (std::vector<Dependency>{{"prep", AfterState::kSucceeded}}));
  auto counted = ReadJobBatch(YAML::Load("{name: s, tenant: t, duration: 1m, tasks: {gpus: 1}, array: {count: 4}}"), "body");
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ((*counted)[3].spec.array, (ArrayElement{"s", 3, -1, 4, 4})) << "parallel defaults to every element";
}

TEST(ArrayReaderTest, BadArraysAndDependenciesNameTheFieldAndWhatWasExpected) {
  auto error = [](const std::string& yaml) {
    auto r = ReadJobBatch(YAML::Load(yaml), "body");
    return r ? std::string("accepted") : r.error().message();
  };
  const std::string job = "name: r, tenant: t, duration: 1m, tasks: {gpus: 1}, ";
  EXPECT_EQ(error("{" + job + "array: {count: 2, frames: '1-2'}}"),
            "body:1: job.array: expected exactly one of count (elements 0 to count-1) and frames (e.g. \"1-240:2\")");
  EXPECT_NE(error("{" + job + "array: {count: 0}}").find("job.array.count: '0' is not valid"), std::string::npos);
  EXPECT_NE(error("{" + job + "array: {count: 2, every: 1}}").find("job.array.every: unknown field"), std::string::npos);
  EXPECT_NE(error("{" + job + "retries: 101}").find("job.retries"), std::string::npos);
  EXPECT_NE(error("{" + job + "after: []}").find("job.after: expected a list of dependencies"), std::string::npos);
  EXPECT_NE(error("{" + job + "after: [a, a]}").find("job.after[1]: 'a' is named twice"), std::string::npos);
  EXPECT_NE(error("{" + job + "after: [{state: failed}]}").find("job.after[0].job: required"), std::string::npos);
  EXPECT_NE(error("{" + job + "repeat: 2}").find("applies to scenario files only; submit an array"), std::string::npos);
  EXPECT_NE(error("[{" + job + "}, {" + job + "}]").find("'r' is named twice in tenant t"), std::string::npos);
  EXPECT_NE(error("[{" + job + "after: [r]}]").find("'r' is the job itself"), std::string::npos);
}

TEST(ArrayReaderTest, ABatchIsOrderedDependenciesFirstAndACycleIsRefusedNamingItsJobs) {
  auto batch = ReadJobBatch(YAML::Load(R"([
      {name: c, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [b]},
      {name: b, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [a, shards]},
      {name: shards, tenant: t, duration: 1m, tasks: {gpus: 1}, array: {count: 2}},
      {name: a, tenant: t, duration: 1m, tasks: {gpus: 1}}])"), "body");
  ASSERT_TRUE(batch.has_value()) << batch.error().message();
  std::vector<std::string> order;
  for (const ScenarioJob& j : *batch) order.push_back(j.spec.name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "shards-0", "shards-1", "b", "c"}));
  auto cycle = ReadJobBatch(YAML::Load(R"([
      {name: a, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [c]},
      {name: b, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [a]},
      {name: c, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [b]}])"), "body");
  ASSERT_FALSE(cycle.has_value());
  EXPECT_EQ(cycle.error().message(), "jobs[a].after: the dependencies form a cycle: a → c → b → a (each waits for the next); "
                                     "expected a pipeline whose jobs wait only for earlier ones");
}

TEST(ArrayReaderTest, AScenarioDependencyMustBeInTheFileAndSubmittedNoLater) {
  const std::string head = "fleet: [{name: n, cpu: 8, memory: 64Gi, gpus: {model: H100-80GB, count: 8}}]\n"
                           "tenants: [{path: t}]\njobs:\n";
  auto missing = ParseScenario(head + "  - {name: b, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [a]}\n", "s.yaml");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(), "s.yaml:4: jobs[b].after[0].job: no job or array 'a' of tenant t in the file; expected one of its jobs");
  auto later = ParseScenario(head + "  - {name: b, tenant: t, duration: 1m, tasks: {gpus: 1}, after: [a]}\n"
                                    "  - {name: a, tenant: t, submit: 1m, duration: 1m, tasks: {gpus: 1}}\n", "s.yaml");
  ASSERT_FALSE(later.has_value());
  EXPECT_NE(later.error().message().find("'a' is submitted at 1m, after this job (0s)"), std::string::npos) << later.error().message();
  auto fails = ParseScenario(head + "  - {name: r, tenant: t, duration: 1m, tasks: {gpus: 1}, array: {count: 3}, "
                                    "fail: {elements: [1], runs: 2, after: 10s}}\n", "s.yaml");
  ASSERT_TRUE(fails.has_value()) << fails.error().message();
  EXPECT_EQ(fails->jobs[0].fail_runs, 0);
  EXPECT_EQ(fails->jobs[1].fail_runs, 2);
  EXPECT_EQ(fails->jobs[1].fail_after_ms, 10000);
}

}  // namespace
}  // namespace allot
