// The web dashboard in a real browser: Debian's chromium, driven by playwright-core
// (tests/web/dashboard.mjs), against a real allotd on the example's simulated fleet with billing
// on, two running jobs, one that cannot start, a budget, and a node registered over the agents'
// protocol whose heartbeat carries GPU telemetry. Every page must load with no console error and
// no failed request and show these numbers; a member of research/nlp must not see
// research/vision's job. Screenshots of each page go to BUILD/web-screenshots/.
//
// chromium, node and tests/web/node_modules (scripts/install-deps) are required: without them
// this test fails, naming what is missing.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "testing/allotd_client.h"
#include "testing/allotd_process.h"
#include "testing/free_port.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using Json = nlohmann::json;

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreeListenPort();
    std::ofstream(dir_ / "rates.yaml") << "currency: USD\ngpu_hour: {H100-80GB: 2.50}\ncpu_hour: 0.02\n";
    const std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    pid_ = testing::LaunchAllotd({"--listen", "127.0.0.1:" + std::to_string(port_), "--data", (dir_ / "data").string(),
                                  "--tenants", example, "--simulated-fleet", example, "--pass-interval", "1s",
                                  "--history-interval", "1s", "--rates", (dir_ / "rates.yaml").string(),
                                  "--node-timeout", "600s"},
                                 dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
    std::ifstream(dir_ / "data" / "admin-token") >> admin_;
  }
  void TearDown() override { testing::StopProcess(pid_, SIGTERM); }

  // METHOD path as `token`: the status and the body (null when there was no answer).
  std::pair<int, Json> Call(const std::string& method, const std::string& path, const std::string& token, const Json& body = nullptr) {
    return testing::CallAllotd(port_, method, path, token, body);
  }
  std::string Issue(const Json& request) {
    auto [s, t] = Call("POST", "/v1/tokens", admin_, request);
    EXPECT_EQ(s, 201) << t.dump();
    return s == 201 ? t["token"].get<std::string>() : "";
  }
  void Submit(const Json& job) {
    auto [s, j] = Call("POST", "/v1/jobs", admin_, job);
    ASSERT_EQ(s, 201) << j.dump();
  }
  // Node `name` (2 H100s) registered as an agent, accepted, with one heartbeat of telemetry.
  void RegisterAgentNode(const std::string& name) {
    const std::string token = Issue({{"principal", "*"}, {"role", "node"}, {"scope", ""}});
    Json gpus = Json::array(), telemetry = Json::array();
    for (int i = 0; i < 2; ++i) {
      const std::string uuid = "GPU-" + name + "-" + std::to_string(i);
      gpus.push_back({{"index", i}, {"uuid", uuid}, {"model", "H100-80GB"}, {"nvlink_peers", {1 - i}}});
      telemetry.push_back({{"index", i}, {"uuid", uuid}, {"utilization_percent", 41 + i}, {"memory_used_mib", 1024 * (i + 1)},
                           {"power_mw", 250000}, {"temperature_c", 55}, {"ecc_corrected", i}, {"ecc_uncorrected", 0},
                           {"xids", i == 1 ? Json{79} : Json::array()}});
    }
    for (const auto& [path, body] : std::vector<std::pair<std::string, Json>>{
             {"/v1/agent/register", {{"node", name}, {"address", name + ".local"}, {"zone", "z1"}, {"rack", "r2"}, {"cpu", "32"},
                                     {"memory", "256Gi"}, {"gpus", gpus}, {"isolation", {{"gaps", {"cpu limit", "pids limit"}}}}}},
             {"/v1/agent/heartbeat", {{"node", name}, {"health", {{"acceptance", true}, {"checks", {{{"name", "nvml.ecc"}, {"ok", true}}}}}}}},
             {"/v1/agent/heartbeat", {{"node", name}, {"gpus", telemetry}}}}) {
      auto [s, r] = Call("POST", path, token, body);
      ASSERT_EQ(s, 200) << path << ": " << r.dump();
    }
  }
  // Waits until `n` jobs run; false after 15 s.
  bool WaitRunning(size_t n) {
    for (int i = 0; i < 300; ++i) {
      auto [s, r] = Call("GET", "/v1/jobs?state=running", admin_);
      if (s == 200 && r["jobs"].size() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  testing::ScratchDir dir_{"dashboard"};
  int port_ = 0;
  pid_t pid_ = -1;
  std::string admin_;
};

TEST_F(DashboardTest, EveryPageLoadsCleanlyInChromiumShowsTheFleetAndAMemberSeesOnlyItsSubtree) {
  const std::filesystem::path web = std::filesystem::path(ALLOT_SOURCE_DIR) / "tests" / "web";
  ASSERT_EQ(std::system("command -v node >/dev/null 2>&1"), 0) << "node not found: install Debian's nodejs (scripts/install-deps)";
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium")) << "/usr/bin/chromium not found: install Debian's chromium (scripts/install-deps)";
  ASSERT_TRUE(std::filesystem::exists(web / "node_modules" / "playwright-core"))
      << web / "node_modules/playwright-core" << " not found: run `npm ci` in tests/web (scripts/install-deps does)";

  Submit({{"name", "nlp-train"}, {"tenant", "research/nlp"}, {"duration", "1h"}, {"tasks", {{"gpus", 4}}}});
  Submit({{"name", "vision-train"}, {"tenant", "research/vision"}, {"duration", "1h"}, {"tasks", {{"gpus", 2}}}});
  Submit({{"name", "nlp-stuck"}, {"tenant", "research/nlp"}, {"duration", "1h"}, {"tasks", {{"gpus", 2}}}, {"require", "driver>=999"}});
  // An array whose elements wait (no node has the driver): the Queues page shows its progress.
  Submit({{"name", "frames"}, {"tenant", "research/nlp"}, {"duration", "1h"}, {"tasks", {{"gpus", 1}}}, {"require", "driver>=999"},
          {"array", {{"frames", "1-5:2"}, {"parallel", 2}}}});
  // A template and a service naming it whose replicas wait (the template requires the driver),
  // and another tenant's service a member of research/nlp must not see: the Services page.
  auto [ts, saved] = Call("POST", "/v1/templates", admin_,
                          {{"name", "serve-tpl"}, {"tenant", "research/nlp"}, {"description", "serving defaults"},
                           {"job", {{"require", "driver>=999"}, {"env", {{"MODE", "serve"}}}}}});
  ASSERT_EQ(ts, 201) << saved.dump();
  for (const auto& [name, tenant] : {std::pair{"chat", "research/nlp"}, std::pair{"vision-svc", "research/vision"}}) {
    Json svc = {{"name", name}, {"tenant", tenant}, {"replicas", 2}, {"port", 8000}, {"command", {"serve"}}, {"tasks", {{"gpus", 1}}}};
    if (std::string(name) == "chat") svc["template"] = "serve-tpl";
    else svc["require"] = "driver>=999";
    auto [ss, s] = Call("POST", "/v1/services", admin_, svc);
    ASSERT_EQ(ss, 201) << s.dump();
  }
  ASSERT_TRUE(WaitRunning(2));
  auto [bs, budget] = Call("POST", "/v1/budgets", admin_, {{"tenant", "research"}, {"spend", "1000"}, {"gpu_hours", "1000"}});
  ASSERT_EQ(bs, 200) << budget.dump();
  RegisterAgentNode("agent-0");
  const std::string member = Issue({{"principal", "alice"}, {"role", "member"}, {"scope", "research/nlp"}});
  // Free whole H100s now: four simulated nodes of 8 and the agent's 2 (the MIG node is a shared
  // pool), less the 6 the two jobs hold.
  auto [as, avail] = Call("GET", "/v1/availability?model=H100-80GB&gpus=1", admin_);
  ASSERT_EQ(as, 200) << avail.dump();
  ASSERT_EQ(avail["free_now"]["gpus"], 4 * 8 + 2 - 6) << avail.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a few history samples with the jobs running

  const std::filesystem::path shots = std::filesystem::path(ALLOTD_BINARY).parent_path() / "web-screenshots";
  std::filesystem::remove_all(shots);  // so a screenshot found below is this run's
  Json config = {{"url", "http://127.0.0.1:" + std::to_string(port_)},
                 {"admin_token", admin_},
                 {"member_token", member},
                 {"screenshots", shots.string()},
                 {"expect",
                  {{"model", "H100-80GB"}, {"allocated", 6}, {"free", 28}, {"nodes", 6},
                   {"running", {"nlp-train", "vision-train"}},
                   {"pending", {{"job", "nlp-stuck"}, {"tenant", "research/nlp"}, {"reason", "requires driver>=999"}}},
                   {"hidden_job", "vision-train"}, {"hidden_tenant", "research/vision"}, {"member_tenant", "research/nlp"}, {"telemetry_node", "agent-0"},
                   {"budget_tenant", "research"}, {"array", {{"name", "frames"}, {"progress", "0 of 3"}}},
                   {"service", {{"name", "chat"}, {"running", "0 of 2"}, {"state", "unavailable"}, {"replicas", 2},
                                {"reason", "driver>=999"}, {"template", "serve-tpl"}, {"hidden", "vision-svc"}}}}}};
  std::ofstream(dir_ / "config.json") << config.dump(2);
  const std::string out = (dir_ / "dashboard.out").string();
  int rc = std::system(("timeout 240 node " + (web / "dashboard.mjs").string() + " " + (dir_ / "config.json").string() + " > " +
                        out + " 2>&1").c_str());
  std::stringstream log;
  log << std::ifstream(out).rdbuf();
  EXPECT_EQ(rc, 0) << "dashboard.mjs failed:\n" << log.str();
  EXPECT_NE(log.str().find("every check passed"), std::string::npos) << log.str();
  for (const char* page : {"login-refused", "availability", "queues", "job-pending", "job-running", "services", "nodes", "node", "spend", "queues-member",
                           "services-member"}) {
    EXPECT_TRUE(std::filesystem::exists(shots / (std::string(page) + ".png"))) << page;
  }
}

}  // namespace
}  // namespace allot
