// Sizing by workload through the API: a job that describes its model is given its allocation at
// submit against the fleet (two whole-GPU H100 nodes here), and the model, the estimate and the
// choice are in the job's view and its explain; a bad model is refused naming the field and
// creates nothing.
#include <gtest/gtest.h>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class SizingApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("serving");
  }
  size_t JobCount() { return Get("/v1/jobs").second["jobs"].size(); }
};

TEST_F(SizingApiTest, ASeventyBillionInt8ModelIsGivenTwoNvlinkGpusAndExplainShowsWhy) {
  auto [code, reply] = Post("/v1/jobs", JobBody("chat", "serving", R"({"cpu": 8, "model": {"name": "llama-3-70b", "precision": "int8"}})"));
  ASSERT_EQ(code, 201) << reply.dump();
  ASSERT_TRUE(reply["sizing"].is_array()) << reply.dump();
  EXPECT_EQ(reply["sizing"][0]["allocation"], "2 × H100-80GB GPUs (nvlink)");

  auto [c2, job] = Get("/v1/jobs/chat");
  ASSERT_EQ(c2, 200) << job.dump();
  const nlohmann::json& s = job["sizing"][0];
  EXPECT_EQ(s["group"], 0);
  EXPECT_EQ(s["model"]["name"], "llama-3-70b");
  EXPECT_EQ(s["model"]["parameters"], "70.6B");
  EXPECT_EQ(s["model"]["precision"], "int8");
  EXPECT_EQ(s["model"]["context"], 8192);
  EXPECT_EQ(s["estimate"]["total_mib"], 105884);
  EXPECT_EQ(s["estimate"]["kv_cache"], "20Gi");
  EXPECT_NE(s["why"].get<std::string>().find("2 GPUs in one NVLink domain"), std::string::npos) << s.dump();
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["placement"].size(), 1u);
  EXPECT_EQ(job["placement"][0]["gpus"].size(), 2u);

  auto [c3, explain] = Get("/v1/jobs/chat/explain");
  ASSERT_EQ(c3, 200) << explain.dump();
  EXPECT_EQ(explain["sizing"], job["sizing"]);
  EXPECT_EQ(explain["topology"], "nvlink");
  EXPECT_EQ(explain["demand"]["gpu/H100-80GB"], "2");
}

TEST_F(SizingApiTest, ABadModelIsRefusedNamingTheFieldAndCreatesNothing) {
  const size_t before = JobCount();
  auto [code, body] = Post("/v1/jobs", JobBody("bad", "serving", R"({"model": {"parameters": "7B", "precision": "fp4"}})"));
  EXPECT_EQ(code, 400) << body.dump();
  EXPECT_EQ(body["error"]["message"], "body: job.tasks.model.precision: 'fp4' is not valid; expected fp16, bf16, fp8, int8 or int4");
  auto [c2, both] = Post("/v1/jobs", JobBody("both", "serving", R"({"gpus": 1, "model": {"name": "llama-3-8b"}})"));
  EXPECT_EQ(c2, 400) << both.dump();
  EXPECT_NE(both["error"]["message"].get<std::string>().find("job.tasks.model: given with gpus"), std::string::npos) << both.dump();
  // Larger than any node of the fleet: refused at submit with what each GPU model offers.
  auto [c3, huge] = Post("/v1/jobs", JobBody("huge", "serving", R"({"model": {"parameters": "1T", "precision": "fp16"}})"));
  EXPECT_EQ(c3, 400) << huge.dump();
  EXPECT_NE(huge["error"]["message"].get<std::string>().find("H100-80GB would need 28 GPUs of 80Gi on one node; its nodes have at most 8"),
            std::string::npos) << huge.dump();
  EXPECT_EQ(JobCount(), before);
}

}  // namespace
}  // namespace allot
