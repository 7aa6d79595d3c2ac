// The REST API over real HTTP on loopback: submit, read, list with pagination, explain, cancel,
// tenants, nodes; bad input gets a clear error, the right status, and changes nothing.
#include "testing/api_fixture.h"

namespace allot {
namespace {

class ApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("org");
    AddTenant("org/team", 12);
  }
  std::string Job(const std::string& name, const std::string& tasks = "{\"gpus\": 8}") { return JobBody(name, "org/team", tasks); }
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
  size_t jobs_before = ctl_->Read([](const ClusterState& st) { return st.jobs().size(); });
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
  expect("{not json", 400, "body: malformed JSON: parse error at line 1, column 3");
  expect("[1, 2]", 400, "jobs[0]: expected an object");  // a list is a pipeline: each item a job
  // Nothing changed but the audit log: one record per refused request, naming the refusal.
  EXPECT_EQ(ctl_->Read([](const ClusterState& st) { return st.jobs().size(); }), jobs_before);
  EXPECT_EQ(ctl_->last_seq(), before + 6);
  auto audit = Get("/v1/audit").second["records"];
  ASSERT_EQ(audit.size(), 6u);
  EXPECT_EQ(audit[0]["action"], "job.submit");
  EXPECT_EQ(audit[0]["actor"], "root");
  EXPECT_EQ(audit[0]["outcome"].get<std::string>().rfind("invalid_argument: body: job.tasks.gpus: '1.5'", 0), 0u) << audit[0];
  EXPECT_EQ(audit[1]["tenant"], "nobody");
  ASSERT_EQ(Post("/v1/jobs", Job("dup")).first, 201);
  expect(Job("dup"), 409, "job 'dup' already exists");
  EXPECT_EQ(Post("/v1/jobs", std::string(5000, ' ')).first, 413) << "over the body limit";
  EXPECT_EQ(Get("/v1/jobs/nope").first, 404);
  EXPECT_EQ(Get("/v1/jobs/nope").second["error"]["code"], "not_found");
  EXPECT_EQ(Get("/v1/jobs?limit=0").first, 400);
  EXPECT_EQ(Get("/v1/jobs?state=sleeping").second["error"]["message"],
            "state: 'sleeping' is not valid; expected pending, running, preempting, finished, rejected, cancelled or failed");
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

TEST_F(ApiTest, UsageOverAWindowPerTenantInScope) {
  const int64_t t0 = now_;  // 1700000000 s: 2023-11-14T22:13:20Z
  ASSERT_EQ(Post("/v1/jobs", Job("train")).first, 201);  // 8 GPUs for 1 hour
  now_ += 30 * 60 * 1000;
  auto [s1, u1] = Get("/v1/usage?from=1700000000");
  ASSERT_EQ(s1, 200) << u1;
  EXPECT_EQ(u1["from"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(u1["to"], "2023-11-14T22:43:20Z") << "to defaults to now";
  ASSERT_EQ(u1["tenants"].size(), 2u);
  for (const Json& t : u1["tenants"]) {
    EXPECT_EQ(t["gpu_hours"]["H100-80GB"], 4.0) << t << " (8 GPUs for half an hour, still running)";
    EXPECT_EQ(t["jobs"], 1);
  }
  now_ = t0 + 60 * 60 * 1000;
  ASSERT_TRUE(ctl_->Sync().ok());  // the job finishes at t0 + 1h (allotd ticks every second)
  ASSERT_EQ(Get("/v1/jobs/train").second["state"], "finished");
  now_ += 60 * 60 * 1000;
  EXPECT_EQ(Get("/v1/usage?from=2023-11-14T22:13:20Z&tenant=org/team").second["tenants"][0]["gpu_hours"]["H100-80GB"], 8.0);
  auto half = Get("/v1/usage?from=" + std::to_string(t0 / 1000 + 1800) + "&to=" + std::to_string(t0 / 1000 + 7200)).second;
  EXPECT_EQ(half["tenants"][1]["gpu_hours"]["H100-80GB"], 4.0) << half;
  EXPECT_TRUE(Get("/v1/usage").second["tenants"][0]["gpu_hours"].contains("H100-80GB")) << "the last 24 hours by default";
  // Bad windows and scopes.
  auto [s2, e2] = Get("/v1/usage?from=yesterday");
  EXPECT_EQ(s2, 400);
  EXPECT_EQ(e2["error"]["message"], "from: 'yesterday' is not a time; expected Unix seconds or an RFC 3339 UTC time like 2026-11-01T00:00:00Z");
  auto [s3, e3] = Get("/v1/usage?from=1700007200&to=1700000000");
  EXPECT_EQ(s3, 400);
  EXPECT_EQ(e3["error"]["message"], "from: 2023-11-15T00:13:20Z is not before to (2023-11-14T22:13:20Z)");
  EXPECT_EQ(Get("/v1/usage?from=2023-13-01T00:00:00Z").first, 400);
  AddTenant("other");
  std::string olive = Token("olive", Role::kViewer, "other");
  auto [s4, mine] = Call("GET", "/v1/usage?from=1700000000", olive);
  ASSERT_EQ(s4, 200);
  ASSERT_EQ(mine["tenants"].size(), 1u) << "only the caller's subtree";
  EXPECT_EQ(mine["tenants"][0]["path"], "other");
  EXPECT_TRUE(mine["tenants"][0]["gpu_hours"].empty());
  EXPECT_EQ(Call("GET", "/v1/usage?tenant=org", olive).first, 404);
}

TEST_F(ApiTest, ACommandJobNeedsNoDurationAndRunsUntilItsAgentReportsOrItIsCancelled) {
  auto [s, job] = Post("/v1/jobs", R"({"name": "cmd", "tenant": "org/team", "command": ["python", "train.py", "--lr", "0.1"],
                                       "tasks": {"gpus": 8}})");
  ASSERT_EQ(s, 201) << job;
  EXPECT_EQ(job["command"], Json::array({"python", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(job["state"], "running");
  now_ += 48 * 3600 * 1000;  // the simulated fleet does not finish a command job by itself
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Get("/v1/jobs/cmd").second["state"], "running");
  EXPECT_EQ(Post("/v1/jobs/cmd/cancel", "{}").second["state"], "cancelled");
  // Neither a duration nor a command; an empty or malformed command.
  auto [s1, e1] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "tasks": {"gpus": 1}})");
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(e1["error"]["message"], "body: job.duration: required unless the job names a command") << e1;
  auto [s2, e2] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "command": [], "tasks": {"gpus": 1}})");
  EXPECT_EQ(s2, 400);
  EXPECT_NE(e2["error"]["message"].get<std::string>().find("job.command: expected the program and its arguments as a list"),
            std::string::npos) << e2;
  auto [s3, e3] = Post("/v1/jobs", R"({"name": "x", "tenant": "org/team", "command": "python train.py", "tasks": {"gpus": 1}})");
  EXPECT_EQ(s3, 400) << e3;
}

TEST_F(ApiTest, TheOpenApiDocumentDescribesEveryRoute) {
  httplib::Client c("127.0.0.1", api_->port());
  auto r = c.Get("/v1/openapi.json");  // no token needed
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  Json doc = Json::parse(r->body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << "valid JSON";
  EXPECT_EQ(doc["openapi"], "3.0.3");
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"/healthz", "get"}, {"/readyz", "get"}, {"/v1/openapi.json", "get"}, {"/v1/jobs", "post"}, {"/v1/jobs", "get"},
      {"/v1/jobs/{name}", "get"}, {"/v1/jobs/{name}/explain", "get"}, {"/v1/jobs/{name}/cancel", "post"},
      {"/v1/tenants", "get"}, {"/v1/tenants", "post"}, {"/v1/tenants/move", "post"}, {"/v1/tenants/{path}", "delete"},
      {"/v1/tenants/{path}/explain", "get"}, {"/v1/usage", "get"},
      {"/v1/nodes", "get"}, {"/v1/nodes/{name}/{action}", "post"}, {"/v1/nodes/{name}", "get"},
      {"/v1/nodes/{name}/check", "post"}, {"/v1/jobs/{name}/logs", "get"}, {"/v1/agent/register", "post"},
      {"/v1/agent/heartbeat", "post"}, {"/v1/agent/assignments", "get"}, {"/v1/agent/logs", "post"},
      {"/v1/tokens", "post"}, {"/v1/tokens", "get"}, {"/v1/tokens/{id}/revoke", "post"}, {"/v1/audit", "get"}, {"/v1/alerts", "get"}, {"/v1/events", "get"},
      {"/v1/invoices", "get"}, {"/v1/ledger", "get"}, {"/v1/reconciliation", "get"}, {"/v1/budgets", "get"}, {"/v1/budgets", "post"},
      {"/v1/ledger/adjustments", "post"}, {"/v1/reservations", "post"}, {"/v1/reservations", "get"},
      {"/v1/reservations/{name}", "get"}, {"/v1/reservations/{name}", "delete"}, {"/v1/reservations/{name}", "patch"},
      {"/v1/availability", "get"}, {"/v1/calendar", "get"}, {"/v1/interference", "get"}, {"/metrics", "get"},
      {"/v1/history", "get"}, {"/v1/whoami", "get"}, {"/v1/arrays", "get"}, {"/v1/arrays/{name}", "get"},
      {"/v1/arrays/{name}/cancel", "post"}, {"/v1/services", "get"}, {"/v1/services", "post"},
      {"/v1/services/{name}", "get"}, {"/v1/services/{name}", "delete"}, {"/v1/services/{name}", "patch"},
      {"/v1/services/{name}/update", "post"}, {"/v1/services/{name}/rollback", "post"}, {"/v1/services/{name}/scale", "post"},
      {"/v1/templates", "post"}, {"/v1/templates", "get"}, {"/v1/templates/{name}", "get"}, {"/v1/templates/{name}", "delete"}};
  for (const auto& [path, method] : routes) EXPECT_TRUE(doc["paths"][path].contains(method)) << method << " " << path;
  size_t described = 0;
  for (const auto& [path, ops] : doc["paths"].items()) described += ops.size();
  EXPECT_EQ(described, routes.size()) << "nothing described that is not served";
}

}  // namespace
}  // namespace allot
