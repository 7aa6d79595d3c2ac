// Anomaly alerts through the API in one process: tenants' business hours (checked, stored,
// shown), usage outside them, refused tokens, a GPU's ECC errors from its agent's heartbeats,
// failing jobs reported by an agent; GET /v1/alerts and its roles; the metrics page's counts.
// The monitor is not started: each test looks with Check() at the fixture's clock.
#include <gtest/gtest.h>

#include "billing/zoneinfo.h"
#include "server/metrics_page.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

class AlertsApiTest : public testing::ApiFixture {
 protected:
  ApiOptions Options() override {
    ApiOptions o = ApiFixture::Options();
    o.max_body_bytes = 1 << 20;
    o.agents = agents_;
    AlertMonitorOptions m;
    m.load_zone = LoadTimeZone;
    m.thresholds.crash_loop_failures = 3;
    monitor_ = std::make_shared<AlertMonitor>(*ctl_, agents_, m);
    o.alerts = monitor_;
    return o;
  }
  void SetUp() override {
    // 1'700'000'000'000 ms is Tuesday 2023-11-14 22:13:20 UTC.
    ApiFixture::SetUp();
    AddTenant("org");
    node_token_ = Token("*", Role::kNode, "");
  }
  Json Alerts(const std::string& query = "") {
    auto [code, body] = Get("/v1/alerts" + query);
    EXPECT_EQ(code, 200) << body.dump();
    return body["alerts"];
  }
  std::pair<int, Json> AsAgent(const std::string& path, const Json& body) { return Call("POST", path, node_token_, body.dump()); }
  // A one-GPU node of agent `node`, registered and passed its acceptance checks.
  void RegisterReady(const std::string& node) {
    Json gpu = {{"index", 0}, {"uuid", "GPU-" + node}, {"model", "H100-80GB"}, {"nvlink_peers", Json::array()}};
    Json inventory = {{"node", node}, {"address", node + ".local"}, {"zone", "z"}, {"rack", "r"}, {"cpu", "8"},
                      {"memory", "64Gi"}, {"gpus", {gpu}}};
    ASSERT_EQ(AsAgent("/v1/agent/register", inventory).first, 200);
    Json health = {{"acceptance", true}, {"checks", {{{"name", "nvml.ecc"}, {"ok", true}}}}};
    auto [code, body] = AsAgent("/v1/agent/heartbeat", {{"node", node}, {"health", health}});
    ASSERT_EQ(code, 200) << body.dump();
  }
  std::string MetricsPage() { return RenderMetrics(*ctl_, *agents_, DaemonMetrics{}, monitor_.get()); }

  std::shared_ptr<AgentRegistry> agents_ = std::make_shared<AgentRegistry>();
  std::shared_ptr<AlertMonitor> monitor_;
  std::string node_token_;
};

TEST_F(AlertsApiTest, ATenantsBusinessHoursAreCheckedStoredAndShownInTheirCanonicalForm) {
  auto [code, body] = Post("/v1/tenants", R"({"path": "org/eu", "business_hours": "Mon-Wed,Thu,Fri 08:00-19:00 Europe/Berlin"})");
  ASSERT_EQ(code, 201) << body.dump();
  Json tenants = Get("/v1/tenants").second["tenants"];
  Json eu;
  for (const Json& t : tenants) {
    if (t["path"] == "org/eu") eu = t;
  }
  EXPECT_EQ(eu["business_hours"], "Mon-Fri 08:00-19:00 Europe/Berlin");

  uint64_t before = ctl_->last_seq();
  auto refused = [&](const std::string& hours, const std::string& message) {
    auto [c, b] = Post("/v1/tenants", R"({"path": "org/eu", "business_hours": ")" + hours + R"("})");
    EXPECT_EQ(c, 400) << b.dump();
    EXPECT_NE(b["error"]["message"].get<std::string>().find(message), std::string::npos) << b.dump();
  };
  refused("Mon-Fri 8-19 Europe/Berlin",
          "tenant.business_hours: 'Mon-Fri 8-19 Europe/Berlin' has hours '8-19' that are not HH:MM-HH:MM from 00:00 to 24:00; "
          "expected '<days> <HH:MM>-<HH:MM> <time zone>' such as 'Mon-Fri 08:00-19:00 Europe/Berlin'");
  refused("Mon-Fri 08:00-19:00 Mars/Olympus", "tenant.business_hours: 'Mon-Fri 08:00-19:00 Mars/Olympus': time zone 'Mars/Olympus' is unknown");
  EXPECT_EQ(ctl_->last_seq(), before + 2) << "only the refusals' audit records";
  EXPECT_EQ(ctl_->Read([](const ClusterState& st) { return st.tenants().tenant(st.tenants().Find("org/eu")).business_hours; }),
            "Mon-Fri 08:00-19:00 Europe/Berlin")
      << "unchanged";
}

TEST_F(AlertsApiTest, GpusHeldOutsideBusinessHoursRaiseOneAlertPerStretchAndIdleTenantsNone) {
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "org/day", "business_hours": "Mon-Fri 08:00-19:00 UTC"})").first, 201);
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "org/idle", "business_hours": "Mon-Fri 08:00-19:00 UTC"})").first, 201);
  ASSERT_EQ(Post("/v1/tenants", R"({"path": "org/always"})").first, 201);
  ASSERT_EQ(Post("/v1/jobs", JobBody("night", "org/day", R"({"gpus": 2})")).first, 201);
  ASSERT_EQ(Post("/v1/jobs", JobBody("any", "org/always", R"({"gpus": 2})")).first, 201);
  monitor_->Check();
  Json alerts = Alerts();
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump();
  EXPECT_EQ(alerts[0]["kind"], "out_of_hours_usage");
  EXPECT_EQ(alerts[0]["severity"], "warning");
  EXPECT_EQ(alerts[0]["at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(alerts[0]["labels"], Json({{"tenant", "org/day"}}));
  EXPECT_EQ(alerts[0]["details"]["gpus"], "2");
  EXPECT_EQ(alerts[0]["details"]["closed_since"], "2023-11-14T19:00:00Z");
  now_ += 3'600'000;
  monitor_->Check();
  EXPECT_EQ(Alerts().size(), 1u) << "the same evening: said once";
  EXPECT_EQ(Alerts("?after=1").size(), 0u);
  EXPECT_NE(MetricsPage().find("allot_alerts_total{kind=\"out_of_hours_usage\"} 1\n"), std::string::npos) << MetricsPage();
  EXPECT_NE(MetricsPage().find("allot_alerts_total{kind=\"crash_loop\"} 0\n"), std::string::npos);
}

TEST_F(AlertsApiTest, AlertsAreForThePlatformAdminAndAuditorsOfTheWholeTree) {
  AddTenant("org/team");
  EXPECT_EQ(Call("GET", "/v1/alerts", Token("audit", Role::kAuditor, "")).first, 200);
  EXPECT_EQ(Call("GET", "/v1/alerts", Token("team-audit", Role::kAuditor, "org/team")).first, 403);
  auto [code, body] = Call("GET", "/v1/alerts", Token("alice", Role::kMember, "org/team"));
  EXPECT_EQ(code, 403);
  EXPECT_EQ(body["error"]["message"], "a member may not read alerts (platform-admin, or an auditor of the whole tree)");
  EXPECT_EQ(Call("GET", "/v1/alerts", Token("org-admin", Role::kOrgAdmin, "org")).first, 403);
}

TEST_F(AlertsApiTest, TenRefusedTokensFromOneAddressRaiseOneAlertAndRequestsWithoutATokenDoNot) {
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Call("GET", "/v1/jobs", "").first, 401);
  EXPECT_EQ(Alerts().size(), 0u) << "no token presented: not a failed login";
  for (int i = 0; i < 9; ++i) EXPECT_EQ(Call("GET", "/v1/jobs", "allot_not-a-real-token").first, 401);
  EXPECT_EQ(Alerts().size(), 0u) << "nine is below the threshold";
  EXPECT_EQ(Call("GET", "/v1/jobs", "allot_not-a-real-token").first, 401);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Call("GET", "/v1/jobs", "allot_not-a-real-token").first, 401);
  Json alerts = Alerts();
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump();
  EXPECT_EQ(alerts[0]["kind"], "failed_logins");
  EXPECT_EQ(alerts[0]["labels"]["source"], "127.0.0.1");
  EXPECT_EQ(alerts[0]["summary"], "10 failed logins from 127.0.0.1 within 5 min");
}

TEST_F(AlertsApiTest, AGpuWhoseEccErrorsRiseInItsHeartbeatsRaisesAnAlertNamingNodeGpuAndModel) {
  RegisterReady("gpu-a");
  auto beat = [&](int64_t corrected, int64_t uncorrected) {
    Json g = {{"index", 0}, {"uuid", "GPU-gpu-a"}, {"ecc_corrected", corrected}, {"ecc_uncorrected", uncorrected}};
    ASSERT_EQ(AsAgent("/v1/agent/heartbeat", {{"node", "gpu-a"}, {"gpus", {g}}}).first, 200);
    now_ += 60'000;  // a heartbeat is looked at once: the next one comes later
    monitor_->Check();
  };
  beat(10, 0);
  beat(60, 0);
  beat(110, 0);
  EXPECT_EQ(Alerts().size(), 0u) << "a rise of 100 is not more than 100";
  beat(111, 0);
  beat(120, 1);
  Json alerts = Alerts();
  ASSERT_EQ(alerts.size(), 2u) << alerts.dump();
  EXPECT_EQ(alerts[0]["kind"], "gpu_ecc");
  EXPECT_EQ(alerts[0]["severity"], "warning");
  EXPECT_EQ(alerts[0]["labels"], Json({{"node", "gpu-a"}, {"gpu", "0"}, {"model", "H100-80GB"}, {"uuid", "GPU-gpu-a"}}));
  EXPECT_EQ(alerts[0]["details"]["rise"], 101);
  EXPECT_EQ(alerts[1]["severity"], "critical");
  EXPECT_EQ(alerts[1]["details"]["uncorrected"], 1);
}

TEST_F(AlertsApiTest, JobsOfOneFamilyFailingOnAnAgentRaiseACrashLoopAlert) {
  // Only the agent's node takes jobs: the fixture's simulated nodes are cordoned.
  for (uint32_t n = 0; n < 2; ++n) ASSERT_TRUE(ctl_->Execute(NodeConditionChanged{NodeId(n), NodeCondition::kCordoned}));
  RegisterReady("gpu-a");
  for (int i = 1; i <= 3; ++i) {
    std::string name = "train-" + std::to_string(i);
    std::string job = R"({"name": ")" + name + R"(", "tenant": "org", "command": ["/bin/false"], "tasks": {"gpus": 1}})";
    ASSERT_EQ(Post("/v1/jobs", job).first, 201);
    ASSERT_TRUE(ctl_->Sync().ok());
    auto [c, a] = Call("GET", "/v1/agent/assignments?node=gpu-a&wait=0", node_token_);
    ASSERT_EQ(c, 200);
    ASSERT_EQ(a["tasks"].size(), 1u) << a.dump();
    Json t = {{"job", a["tasks"][0]["job"]}, {"job_id", a["tasks"][0]["job_id"]}, {"task", 0}, {"run", 0},
              {"exited", true}, {"exit_code", 1}, {"reason", "exited with code 1"}};
    ASSERT_EQ(AsAgent("/v1/agent/heartbeat", {{"node", "gpu-a"}, {"tasks", {t}}}).first, 200);
    ASSERT_TRUE(ctl_->Sync().ok());
    EXPECT_EQ(Get("/v1/jobs/" + name).second["state"], "failed");
    monitor_->Check();
    EXPECT_EQ(Alerts().size(), i < 3 ? 0u : 1u) << i;
  }
  Json alert = Alerts()[0];
  EXPECT_EQ(alert["kind"], "crash_loop");
  EXPECT_EQ(alert["labels"], Json({{"tenant", "org"}, {"job", "train"}}));
  EXPECT_EQ(alert["details"]["last_job"], "train-3");
  EXPECT_NE(alert["details"]["last_reason"].get<std::string>().find("exited with code 1"), std::string::npos) << alert.dump();
}

}  // namespace
}  // namespace allot
