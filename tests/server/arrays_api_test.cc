// Arrays and pipelines through the REST API (docs/arrays.md): an array submitted whole, its
// parallel limit, its progress, its elements and its cancel; a pipeline's order, a cycle and an
// unknown dependency refused with nothing submitted.
#include "testing/api_fixture.h"

namespace allot {
namespace {

class ArraysApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("org");
    AddTenant("org/team", 12);
  }
  size_t Jobs() { return ctl_->Read([](const ClusterState& st) { return st.jobs().size(); }); }
};

TEST_F(ArraysApiTest, AnArrayRunsAtMostParallelElementsShowsItsProgressAndCancelsTogether) {
  auto [s, body] = Post("/v1/jobs", R"({"name": "render", "tenant": "org/team", "duration": "1h", "tasks": {"gpus": 1},
                                        "array": {"frames": "1-9:2", "parallel": 2}, "retries": 1})");
  ASSERT_EQ(s, 201) << body;
  ASSERT_EQ(body["arrays"].size(), 1u) << body;
  EXPECT_EQ(body["arrays"][0]["count"], 5);
  EXPECT_EQ(body["arrays"][0]["parallel"], 2);
  auto [g, a] = Get("/v1/arrays/render");
  ASSERT_EQ(g, 200) << a;
  EXPECT_EQ(a["state"], "running");
  EXPECT_EQ(a["progress"], Json({{"done", 0}, {"running", 2}, {"failed", 0}, {"pending", 3}}));
  ASSERT_EQ(a["elements"].size(), 5u);
  EXPECT_EQ(a["elements"][3]["name"], "render-3");
  EXPECT_EQ(a["elements"][3]["frame"], 7);
  auto [gj, e] = Get("/v1/jobs/render-4");
  ASSERT_EQ(gj, 200);
  EXPECT_EQ(e["array"], Json({{"name", "render"}, {"index", 4}, {"count", 5}, {"parallel", 2}, {"frame", 9}}));
  EXPECT_EQ(e["retries"], 1);
  EXPECT_NE(e["reason"].get<std::string>().find("array render: at its parallel limit (2 of its 5 elements at once)"),
            std::string::npos) << e;
  EXPECT_EQ(Get("/v1/arrays").second["arrays"].size(), 1u);
  // An hour on, the first two are done and the next two run.
  now_ += 3'600'000;
  ASSERT_TRUE(ctl_->Sync().ok());
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Get("/v1/arrays/render").second["progress"], Json({{"done", 2}, {"running", 2}, {"failed", 0}, {"pending", 1}}));
  // Cancelling the array cancels every element not yet ended.
  auto [sc, cancelled] = Post("/v1/arrays/render/cancel", "{}");
  ASSERT_EQ(sc, 200) << cancelled;
  EXPECT_EQ(cancelled["progress"], Json({{"done", 2}, {"running", 0}, {"failed", 3}, {"pending", 0}}));
  EXPECT_EQ(Get("/v1/jobs/render-4").second["state"], "cancelled");
  EXPECT_EQ(Post("/v1/arrays/render/cancel", "{}").first, 409) << "nothing left to cancel";
  EXPECT_EQ(Get("/v1/arrays/nothing").first, 404);
  // The array's name is taken in its tenant.
  auto [sd, dup] = Post("/v1/jobs", JobBody("render", "org/team"));
  EXPECT_EQ(sd, 409) << dup;
}

TEST_F(ArraysApiTest, APipelineIsSubmittedDependenciesFirstAndWaitsStageByStage) {
  // Listed out of order: evaluate waits for finetune, which waits for prepare.
  auto [s, body] = Post("/v1/jobs", R"([
      {"name": "evaluate", "tenant": "org/team", "duration": "10m", "tasks": {"gpus": 1}, "after": [{"job": "finetune", "state": "succeeded"}]},
      {"name": "finetune", "tenant": "org/team", "duration": "1h", "tasks": {"gpus": 4}, "after": ["prepare"]},
      {"name": "prepare", "tenant": "org/team", "duration": "10m", "tasks": {"gpus": 1}}])");
  ASSERT_EQ(s, 201) << body;
  ASSERT_EQ(body["jobs"].size(), 3u);
  EXPECT_EQ(body["jobs"][0]["name"], "prepare") << "dependencies first";
  EXPECT_EQ(Get("/v1/jobs/prepare").second["state"], "running");
  auto [sf, f] = Get("/v1/jobs/finetune");
  EXPECT_EQ(f["state"], "pending");
  EXPECT_EQ(f["reason"], "waiting for job prepare to succeed");
  EXPECT_EQ(f["after"], Json::parse(R"([{"job": "prepare", "state": "succeeded"}])"));
  now_ += 600'000;
  ASSERT_TRUE(ctl_->Sync().ok());
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Get("/v1/jobs/finetune").second["state"], "running");
  EXPECT_EQ(Get("/v1/jobs/evaluate").second["reason"], "waiting for job finetune to succeed");
  // finetune cancelled: evaluate can never run, and is failed naming it.
  ASSERT_EQ(Post("/v1/jobs/finetune/cancel", "{}").first, 200);
  ASSERT_TRUE(ctl_->Sync().ok());
  auto [se, ev] = Get("/v1/jobs/evaluate");
  EXPECT_EQ(ev["state"], "failed");
  EXPECT_EQ(ev["reason"], "dependency job finetune ended cancelled; expected succeeded");
}

TEST_F(ArraysApiTest, ACycleOrAnUnknownDependencyIsRefusedAndNothingIsSubmitted) {
  size_t before = Jobs();
  auto [s, e] = Post("/v1/jobs", R"([
      {"name": "a", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "after": ["b"]},
      {"name": "b", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "after": ["a"]}])");
  EXPECT_EQ(s, 400) << e;
  EXPECT_NE(e["error"]["message"].get<std::string>().find("the dependencies form a cycle: a → b → a"), std::string::npos) << e;
  auto [s2, e2] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "after": ["nope"]})");
  EXPECT_EQ(s2, 404) << e2;
  EXPECT_NE(e2["error"]["message"].get<std::string>().find("after[0].job: no job or array 'nope' in tenant 'org/team'"),
            std::string::npos) << e2;
  auto [s3, e3] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "after": [{"job": "a", "state": "done"}]})");
  EXPECT_EQ(s3, 400);
  EXPECT_NE(e3["error"]["message"].get<std::string>().find("job.after[0].state: 'done' is not valid; expected succeeded, finished or failed"),
            std::string::npos) << e3;
  auto [s4, e4] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "array": {"frames": "9-1"}})");
  EXPECT_EQ(s4, 400);
  EXPECT_NE(e4["error"]["message"].get<std::string>().find("job.array.frames: '9-1': the last frame is before the first"),
            std::string::npos) << e4;
  auto [s5, e5] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "duration": "1m", "tasks": {"gpus": 1}, "fail": {"runs": 1}})");
  EXPECT_EQ(s5, 400) << e5;
  EXPECT_EQ(Jobs(), before);
}

}  // namespace
}  // namespace allot
