// GET /metrics against a real allotd on a simulated fleet: promtool accepts the page, the
// allocated GPUs match a running job, only platform-admins and auditors read it on the API's
// port, --metrics-listen serves it without a token, and a real Prometheus scraping that
// listener answers a PromQL query with the same number. promtool and prometheus come from
// Debian's `prometheus` package (scripts/install-deps): without it these tests fail.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "testing/allotd_process.h"
#include "testing/free_port.h"
#include "testing/prometheus_process.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using Json = nlohmann::json;

bool HaveTool(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }

// The sum of every sample of `family` whose labels include `selector` (e.g. state="allocated").
double SumOf(const std::string& page, const std::string& family, const std::string& selector) {
  double sum = 0;
  std::regex line("^" + family + "\\{([^}]*)\\} (\\S+)$");
  std::istringstream in(page);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line) && m[1].str().find(selector) != std::string::npos) sum += std::stod(m[2].str());
  }
  return sum;
}

// Every (model, zone)'s allot_fleet_gpus samples summed over the five states, and the states seen.
std::map<std::string, double> GpusByModelAndZone(const std::string& page, std::set<std::string>* states) {
  std::map<std::string, double> sum;
  std::regex line("^allot_fleet_gpus\\{model=\"([^\"]*)\",zone=\"([^\"]*)\",state=\"([^\"]*)\"\\} (\\S+)$");
  std::istringstream in(page);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    sum[m[1].str() + "/" + m[2].str()] += std::stod(m[4].str());
    states->insert(m[3].str());
  }
  return sum;
}

// `now` as RFC 3339 in UTC, to the second (so never after the daemon's now).
std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class AllotdMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreeListenPort();
    metrics_port_ = testing::FreeListenPort();
    std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    pid_ = testing::LaunchAllotd({"--listen", "127.0.0.1:" + std::to_string(port_), "--data", dir_.path().string(), "--tenants",
                                  example, "--simulated-fleet", example, "--pass-interval", "1s", "--metrics-listen",
                                  "127.0.0.1:" + std::to_string(metrics_port_)},
                                 dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
    std::ifstream in(dir_ / "admin-token");
    in >> admin_;
  }
  void TearDown() override {
    testing::StopProcess(pid_, SIGTERM);
  }
  httplib::Client Client(const std::string& token) {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token.c_str());
    c.set_connection_timeout(2);
    return c;
  }
  std::string Token(const std::string& role, const std::string& scope) {
    auto r = Client(admin_).Post("/v1/tokens", Json{{"principal", role + "-1"}, {"role", role}, {"scope", scope}}.dump(), "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return r && r->status == 201 ? Json::parse(r->body)["token"].get<std::string>() : "";
  }
  // Submits a 2-GPU job and waits until it runs.
  void RunTwoGpuJob() {
    httplib::Client c = Client(admin_);
    auto r = c.Post("/v1/jobs", R"({"name": "m1", "tenant": "research/vision", "duration": "1h", "tasks": {"gpus": 2}})", "application/json");
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    for (int i = 0; i < 300; ++i) {
      auto j = c.Get("/v1/jobs/m1");
      if (j && j->status == 200 && Json::parse(j->body)["state"] == "running") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "job m1 did not start";
  }

  testing::ScratchDir dir_{"allotd-metrics"};
  int port_ = 0, metrics_port_ = 0;
  pid_t pid_ = -1;
  std::string admin_;
};

// A job within its tenant's unused guarantee that cannot start (it requires a driver no node
// has) shows as the tenant's oldest wait within guarantee, what the SLO alert reads; a job of a
// tenant with no guarantee does not.
TEST_F(AllotdMetricsTest, AJobWaitingWithinItsGuaranteeShowsItsAgeForTheSloAlert) {
  httplib::Client c = Client(admin_);
  for (const char* body : {R"({"name": "stuck", "tenant": "research/nlp", "duration": "1h", "tasks": {"gpus": 2}, "require": "driver>=999"})",
                           R"({"name": "stuck-too", "tenant": "research/vision", "duration": "1h", "tasks": {"gpus": 2}, "require": "driver>=999"})"}) {
    auto r = c.Post("/v1/jobs", body, "application/json");
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r && r->status == 200);
  const std::string family = "allot_tenant_oldest_pending_within_guarantee_seconds";
  EXPECT_GE(SumOf(r->body, family, "tenant=\"research/nlp\""), 1.0) << r->body;
  EXPECT_EQ(r->body.find(family + "{tenant=\"research/vision\"}"), std::string::npos) << "research/vision has no guarantee of its own";
}

TEST_F(AllotdMetricsTest, PromtoolAcceptsThePageAndAllocatedGpusEqualTheRunningJobs) {
  ASSERT_TRUE(HaveTool("promtool")) << "promtool not found: install Debian's `prometheus` package (scripts/install-deps)";
  RunTwoGpuJob();
  auto r = Client(admin_).Get("/metrics");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
  const std::string& page = r->body;
  std::ofstream(dir_ / "page.txt") << page;
  int rc = std::system(("promtool check metrics < " + (dir_ / "page.txt").string() + " > " + (dir_ / "promtool.log").string() + " 2>&1").c_str());
  std::ifstream log(dir_ / "promtool.log");
  std::string why((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << "promtool check metrics: " << why;

  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"allocated\""), 2) << page;
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", ""), 40) << "4 nodes of 8 and one MIG node of 8";
  std::set<std::string> states;
  EXPECT_EQ(GpusByModelAndZone(page, &states), (std::map<std::string, double>{{"H100-80GB/z1", 40}}));
  EXPECT_EQ(states, (std::set<std::string>{"idle", "allocated", "reserved", "cordoned", "repair"}));
  EXPECT_EQ(SumOf(page, "allot_tenant_gpus", "tenant=\"research/vision\""), 2);
  EXPECT_EQ(SumOf(page, "allot_jobs", "state=\"running\""), 1);
  EXPECT_EQ(SumOf(page, "allot_tenant_guarantee_gpus", "tenant=\"research\""), 16);
  EXPECT_EQ(SumOf(page, "allot_node_condition", "condition=\"ready\""), 5);
  for (const char* family : {"allot_fleet_gpus", "allot_fleet_gpu_units_allocated", "allot_tenant_gpus", "allot_tenant_guarantee_gpus",
                             "allot_tenant_max_gpus", "allot_tenant_dominant_share", "allot_jobs", "allot_job_wait_seconds",
                             "allot_preemptions_total", "allot_scheduler_pass_duration_seconds", "allot_api_request_duration_seconds",
                             "allot_journal_commit_duration_seconds", "allot_gpu_utilization_ratio", "allot_node_condition"}) {
    EXPECT_NE(page.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
  }
  // Routes are labelled by their pattern, never by the raw path (a job's name).
  EXPECT_NE(page.find("route=\"GET /v1/jobs/([^/]+)\",code=\"200\""), std::string::npos);
  EXPECT_EQ(page.find("m1"), std::string::npos) << "no job name as a label";
}

TEST_F(AllotdMetricsTest, AnOpenReservationsIdleHoldsAreReservedAndItsJobsGpusAllocated) {
  httplib::Client c = Client(admin_);
  // 8 GPUs booked from now for 2 h, no job in them: 8 reserved, taken out of idle.
  auto r = c.Post("/v1/reservations",
                  Json{{"name", "r1"}, {"tenant", "research/vision"}, {"model", "H100-80GB"}, {"gpus", 8}, {"start", NowRfc3339()}, {"duration", "2h"}}.dump(),
                  "application/json");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  std::string page = c.Get("/metrics")->body;
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"reserved\""), 8) << page;
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"allocated\""), 0);
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"idle\""), 32);
  std::set<std::string> states;
  EXPECT_EQ(GpusByModelAndZone(page, &states), (std::map<std::string, double>{{"H100-80GB/z1", 40}})) << "the five states sum to the fleet";

  // A 2-GPU job in the reservation runs on its holds: 2 allocated, 6 still reserved, idle unchanged.
  r = c.Post("/v1/jobs", R"({"name": "in-r1", "tenant": "research/vision", "reservation": "r1", "duration": "1h", "tasks": {"gpus": 2}})",
             "application/json");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    auto j = c.Get("/v1/jobs/in-r1");
    running = j && j->status == 200 && Json::parse(j->body)["state"] == "running";
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(running) << c.Get("/v1/jobs/in-r1")->body;
  page = c.Get("/metrics")->body;
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"allocated\""), 2) << page;
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"reserved\""), 6);
  EXPECT_EQ(SumOf(page, "allot_fleet_gpus", "state=\"idle\""), 32);
  EXPECT_EQ(GpusByModelAndZone(page, &states), (std::map<std::string, double>{{"H100-80GB/z1", 40}}));
}

TEST_F(AllotdMetricsTest, OnlyPlatformAdminsAndAuditorsReadMetricsOnTheApiPort) {
  EXPECT_EQ(Client("").Get("/metrics")->status, 401);
  EXPECT_EQ(Client(Token("member", "research/vision")).Get("/metrics")->status, 403);
  EXPECT_EQ(Client(Token("org-admin", "research")).Get("/metrics")->status, 403);
  EXPECT_EQ(Client(Token("auditor", "")).Get("/metrics")->status, 200);
  EXPECT_EQ(Client(admin_).Get("/metrics")->status, 200);
}

TEST_F(AllotdMetricsTest, MetricsListenServesWithoutATokenAndOnlyMetrics) {
  httplib::Client c("127.0.0.1", metrics_port_);
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("# TYPE allot_fleet_gpus gauge"), std::string::npos);
  EXPECT_EQ(c.Get("/v1/jobs")->status, 404);
}

TEST_F(AllotdMetricsTest, PrometheusScrapesAllotdAndPromqlReturnsTheAllocatedGpus) {
  ASSERT_TRUE(HaveTool("prometheus")) << "prometheus not found: install Debian's `prometheus` package (scripts/install-deps)";
  RunTwoGpuJob();
  testing::Prometheus prom(dir_.path(), metrics_port_);
  ASSERT_TRUE(prom.started());
  ASSERT_TRUE(prom.WaitUp()) << "Prometheus never saw allotd up; " << prom.log();
  Json res = prom.Query("sum(allot_fleet_gpus{state=\"allocated\"})");
  ASSERT_TRUE(res.is_array() && res.size() == 1) << res.dump();
  EXPECT_EQ(res[0]["value"][1], "2");
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

TEST(DeployPrometheusTest, PromtoolAcceptsTheAlertRulesAndTheScrapeConfig) {
  ASSERT_TRUE(HaveTool("promtool")) << "promtool not found: install Debian's `prometheus` package (scripts/install-deps)";
  std::string dir = std::string(ALLOT_SOURCE_DIR) + "/deploy/prometheus/";
  EXPECT_EQ(std::system(("promtool check rules " + dir + "allot-rules.yml").c_str()), 0);
  EXPECT_EQ(std::system(("promtool check config " + dir + "prometheus.yml").c_str()), 0);
}

}  // namespace
}  // namespace allot
