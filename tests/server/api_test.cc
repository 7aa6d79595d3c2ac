// The REST API over real HTTP on loopback: submit, read, list with pagination, explain, cancel,
// tenants, nodes; bad input gets a clear error, the right status, and changes nothing.
#include "server/api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "server/auth.h"
#include "store/sqlite_journal.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("api-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto j = SqliteJournal::Open((dir_ / "allot.db").string());
    ASSERT_TRUE(j.has_value()) << j.error().message();
    ControllerOptions o;
    o.simulate_runs = true;
    ctl_ = std::make_unique<Controller>(std::move(*j), [this] { return now_.load(); }, o);
    ASSERT_TRUE(ctl_->Start().ok());
    for (int i = 0; i < 2; ++i) {
      NodeSpec n{"n" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
      ASSERT_TRUE(ctl_->Execute(NodeAdded{n}).has_value());
    }
    TenantSpec org;
    org.path = "org";
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{org}).has_value());
    TenantSpec team;
    team.path = "org/team";
    team.max[2] = 12 * kGpuUnit;  // gpu/H100-80GB is resource 2
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{team}).has_value());
    api_ = std::make_unique<ApiServer>(*ctl_, ApiOptions{"127.0.0.1", 0, 4096});
    ASSERT_TRUE(api_->Start().ok());
    http_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    admin_token_ = NewToken();
    ASSERT_TRUE(ctl_->Execute(TokenIssued{TokenRecord{HashToken(admin_token_), Principal{"root", Role::kPlatformAdmin, TenantId(0)}, 0, false}})
                    .has_value());
    http_->set_bearer_token_auth(admin_token_.c_str());
  }
  void TearDown() override {
    api_.reset();
    ctl_.reset();
    fs::remove_all(dir_);
  }
  std::pair<int, Json> Post(const std::string& path, const std::string& body) {
    auto r = http_->Post(path.c_str(), body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, r->body.empty() ? Json() : Json::parse(r->body)};
  }
  std::pair<int, Json> Get(const std::string& path) {
    auto r = http_->Get(path.c_str());
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body)};
  }
  std::string Job(const std::string& name, const std::string& tasks = "{\"gpus\": 8}") {
    return R"({"name": ")" + name + R"(", "tenant": "org/team", "duration": "1h", "tasks": )" + tasks + "}";
  }

  fs::path dir_;
  std::string admin_token_;
  std::atomic<int64_t> now_{1'700'000'000'000};
  std::unique_ptr<Controller> ctl_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(ApiTest, SubmitReadListExplainCancel) {
  auto [status, job] = Post("/v1/jobs", Job("train"));
  ASSERT_EQ(status, 201) << job;
  EXPECT_EQ(job["name"], "train");
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["placement"][0]["gpus"].size(), 8u);
  EXPECT_EQ(Get("/v1/jobs/train").second["state"], "running");
  // A second 8-GPU job fits the other node; a third would pass the 12-GPU max: it waits, and
  // explain says why.
  ASSERT_EQ(Post("/v1/jobs", Job("b", "{\"gpus\": 4}")).first, 201);
  auto [s3, c] = Post("/v1/jobs", Job("c", "{\"gpus\": 4}"));
  ASSERT_EQ(s3, 201);
  EXPECT_EQ(c["state"], "pending");
  auto [se, explain] = Get("/v1/jobs/c/explain");
  ASSERT_EQ(se, 200);
  EXPECT_NE(explain["reason"].get<std::string>().find("tenant org/team at max for gpu/H100-80GB: 12 of 12 in use"), std::string::npos)
      << explain;
  EXPECT_EQ(explain["demand"]["gpu/H100-80GB"], "4");
  // Pagination in submission order.
  auto [sl, page1] = Get("/v1/jobs?limit=2");
  ASSERT_EQ(sl, 200);
  ASSERT_EQ(page1["jobs"].size(), 2u);
  EXPECT_EQ(page1["jobs"][0]["name"], "train");
  auto page2 = Get("/v1/jobs?limit=2&after=" + std::to_string(page1["next_after"].get<int64_t>())).second;
  ASSERT_EQ(page2["jobs"].size(), 1u);
  EXPECT_EQ(page2["jobs"][0]["name"], "c");
  EXPECT_TRUE(page2["next_after"].is_null());
  EXPECT_EQ(Get("/v1/jobs?state=pending").second["jobs"].size(), 1u);
  EXPECT_EQ(Get("/v1/jobs?tenant=org").second["jobs"].size(), 3u) << "a tenant filter covers its subtree";
  // Cancel frees the quota; the waiting job starts in the same batch.
  auto [sc, cancelled] = Post("/v1/jobs/b/cancel", "{}");
  ASSERT_EQ(sc, 200);
  EXPECT_EQ(cancelled["state"], "cancelled");
  EXPECT_EQ(Get("/v1/jobs/c").second["state"], "running");
  // The simulated fleet finishes jobs after their duration.
  now_ += 3'600'000;
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Get("/v1/jobs/train").second["state"], "finished");
}

TEST_F(ApiTest, BadInputGetsTheFieldTheValueAndTheRightStatusAndChangesNothing) {
  uint64_t before = ctl_->last_seq();
  auto expect = [&](const std::string& body, int status, const std::string& message) {
    auto [s, j] = Post("/v1/jobs", body);
    EXPECT_EQ(s, status) << body << " → " << j;
    if (j.is_object() && j.contains("error")) {
      EXPECT_NE(j["error"]["message"].get<std::string>().find(message), std::string::npos) << j;
    } else {
      ADD_FAILURE() << "no error body for " << body;
    }
  };
  expect(Job("x", "{\"gpus\": 1.5}"), 400, "job.tasks.gpus: '1.5' is neither whole GPUs nor a share of one");
  expect(R"({"name": "x", "tenant": "nobody", "duration": "1h", "tasks": {"gpus": 1}})", 400,
         "job.tenant: unknown tenant 'nobody'");
  expect(R"({"name": "x", "tenant": "org/team", "tasks": {"gpus": 1}})", 400, "job.duration: required");
  expect(R"({"name": "x", "tenant": "org/team", "duration": "1h", "tasks": {"gpus": 1}, "colour": "red"})", 400,
         "job.colour: unknown field");
  expect("{not json", 400, "malformed JSON or YAML");
  expect("[1, 2]", 400, "job: expected an object");
  EXPECT_EQ(ctl_->last_seq(), before) << "refused requests change nothing";
  ASSERT_EQ(Post("/v1/jobs", Job("dup")).first, 201);
  expect(Job("dup"), 409, "job 'dup' already exists");
  EXPECT_EQ(Post("/v1/jobs", std::string(5000, ' ')).first, 413) << "over the body limit";
  EXPECT_EQ(Get("/v1/jobs/nope").first, 404);
  EXPECT_EQ(Get("/v1/jobs/nope").second["error"]["code"], "not_found");
  EXPECT_EQ(Get("/v1/jobs?limit=0").first, 400);
  EXPECT_EQ(Get("/v1/jobs?state=sleeping").second["error"]["message"],
            "state: 'sleeping' is not valid; expected pending, running, preempting, finished, rejected or cancelled");
  EXPECT_EQ(Post("/v1/jobs/nope/cancel", "{}").first, 404);
}

TEST_F(ApiTest, TenantsNodesAndHealth) {
  EXPECT_EQ(Get("/healthz").first, 200);
  auto [sr, ready] = Get("/readyz");
  EXPECT_EQ(sr, 200);
  EXPECT_EQ(ready["ready"], true);
  ASSERT_EQ(Post("/v1/jobs", Job("a", "{\"gpus\": 2}")).first, 201);
  auto tenants = Get("/v1/tenants").second["tenants"];
  ASSERT_EQ(tenants.size(), 2u);
  EXPECT_EQ(tenants[1]["path"], "org/team");
  EXPECT_EQ(tenants[1]["parent"], "org");
  EXPECT_EQ(tenants[1]["max"]["gpu/H100-80GB"], "12");
  EXPECT_EQ(tenants[1]["usage"]["gpu/H100-80GB"], "2");
  EXPECT_EQ(tenants[0]["usage"]["gpu/H100-80GB"], "2") << "usage rolls up";
  auto [sc, cordon] = Post("/v1/nodes/n1/cordon", "{}");
  EXPECT_EQ(sc, 200);
  EXPECT_EQ(cordon["condition"], "cordoned");
  auto nodes = Get("/v1/nodes").second["nodes"];
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1]["condition"], "cordoned");
  EXPECT_EQ(nodes[0]["gpus_idle"], 6);
  EXPECT_EQ(Post("/v1/nodes/n9/drain", "{}").first, 404);
  ctl_->Stop();
  EXPECT_EQ(Get("/readyz").first, 503);
}

}  // namespace
}  // namespace allot
