// Anomaly alerts end to end: a real allotd (config file: tenants, --alert-webhook's setting, a
// crash-loop threshold) posts to a real HTTP receiver on loopback. The receiver is slow and
// fails its first request, so the test also sees that the API does not wait for it and that the
// alert is retried. Refused tokens give a failed-logins alert; jobs of one family failing on a
// node (a fake agent speaking the agents' protocol) give a crash-loop alert; GET /v1/alerts,
// /metrics and `allot alerts` show them.
#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "core/calendar.h"
#include "testing/allotd_client.h"
#include "testing/allotd_process.h"
#include "testing/free_port.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

class AllotdAlertsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hook_port_ = testing::FreeListenPort();
    hook_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      if (++calls_ == 1) {
        // The first delivery: slow, then refused.
        lock.unlock();
        std::this_thread::sleep_for(2s);
        res.status = 503;
        return;
      }
      received_.push_back(Json::parse(req.body, nullptr, false));
    });
    hook_thread_ = std::thread([this] { hook_.listen("127.0.0.1", hook_port_); });
    for (int i = 0; i < 5000 && !hook_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    port_ = testing::FreeListenPort();
    std::ofstream(dir_ / "allot.yaml") << "tenants:\n  - {path: team}\n"
                                       << "alert_webhook: http://127.0.0.1:" << hook_port_ << "/hook\n"
                                       << "alerts: {crash_loop_failures: 3, crash_loop_window: 10m}\n";
    pid_ = testing::LaunchAllotd({"--config", (dir_ / "allot.yaml").string(), "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--data", (dir_ / "data").string()},
                                 dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
    std::ifstream in(dir_ / "data" / "admin-token");
    in >> admin_;
  }
  void TearDown() override {
    testing::StopProcess(pid_, SIGTERM);
    hook_.stop();
    hook_thread_.join();
  }

  std::pair<int, Json> Call(const std::string& method, const std::string& path, const std::string& token, const Json& body = nullptr) {
    return testing::CallAllotd(port_, method, path, token, body);
  }
  // The first alert of `kind` the receiver got, waiting up to 20 s.
  Json Received(const std::string& kind) {
    for (int i = 0; i < 2000; ++i) {
      {
        std::lock_guard lock(mu_);
        for (const Json& a : received_) {
          if (a.is_object() && a.value("kind", "") == kind) return a;
        }
      }
      std::this_thread::sleep_for(10ms);
    }
    return nullptr;
  }
  std::pair<int, std::string> Cli(const std::string& args) {
    return testing::RunShell(std::string(ALLOT_BINARY) + " " + args + " --server http://127.0.0.1:" + std::to_string(port_) +
                             " --token " + admin_ + " 2>&1");
  }

  testing::ScratchDir dir_{"allotd-alerts"};
  int port_ = 0, hook_port_ = 0;
  pid_t pid_ = -1;
  std::string admin_;
  httplib::Server hook_;
  std::thread hook_thread_;
  std::mutex mu_;
  int calls_ = 0;
  std::vector<Json> received_;
};

TEST_F(AllotdAlertsTest, FailedLoginsAndACrashLoopReachTheWebhookWhichIsRetriedAndNeverSlowsTheApi) {
  // 1. Ten refused tokens from 127.0.0.1; the webhook is slow, the API is not.
  auto worst = 0ms;
  for (int i = 0; i < 12; ++i) {
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(Call("GET", "/v1/jobs", "allot_guessed-token-" + std::to_string(i)).first, 401);
    worst = std::max(worst, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
  }
  EXPECT_LT(worst, 1000ms) << "a refused request waited for the webhook";
  Json login = Received("failed_logins");
  ASSERT_TRUE(login.is_object()) << "no failed_logins alert reached the webhook";
  EXPECT_EQ(login["severity"], "warning");
  EXPECT_EQ(login["labels"]["source"], "127.0.0.1");
  EXPECT_EQ(login["details"]["failures"], 10);
  EXPECT_EQ(login["summary"], "10 failed logins from 127.0.0.1 within 5 min");
  ASSERT_TRUE(login["at"].is_string());
  EXPECT_TRUE(ParseRfc3339(login["at"].get<std::string>()).has_value()) << login["at"];
  {
    std::lock_guard lock(mu_);
    EXPECT_GE(calls_, 2) << "the first delivery failed; the alert came on a retry";
  }

  // 2. A node (a fake agent over the agents' protocol) on which three jobs of one family fail.
  auto [tc, token] = Call("POST", "/v1/tokens", admin_, {{"principal", "*"}, {"role", "node"}, {"scope", ""}});
  ASSERT_EQ(tc, 201) << token.dump();
  const std::string node_token = token["token"];
  Json gpu = {{"index", 0}, {"uuid", "GPU-n1-0"}, {"model", "H100-80GB"}, {"nvlink_peers", Json::array()}};
  auto [rc, reg] = Call("POST", "/v1/agent/register", node_token,
                        {{"node", "n1"}, {"address", "n1.local"}, {"zone", "z"}, {"rack", "r"}, {"cpu", "8"}, {"memory", "64Gi"},
                         {"gpus", {gpu}}});
  ASSERT_EQ(rc, 200) << reg.dump();
  auto [ac, acc] = Call("POST", "/v1/agent/heartbeat", node_token,
                        {{"node", "n1"}, {"health", {{"acceptance", true}, {"checks", {{{"name", "nvml.ecc"}, {"ok", true}}}}}}});
  ASSERT_EQ(ac, 200) << acc.dump();
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "loop-" + std::to_string(i);
    auto [jc, job] = Call("POST", "/v1/jobs", admin_,
                          {{"name", name}, {"tenant", "team"}, {"command", {"/bin/false"}}, {"tasks", {{"gpus", 1}}}});
    ASSERT_EQ(jc, 201) << job.dump();
    Json task;
    for (int k = 0; k < 300 && task.is_null(); ++k) {
      auto [c, a] = Call("GET", "/v1/agent/assignments?node=n1&wait=0", node_token);
      ASSERT_EQ(c, 200) << a.dump();
      for (const Json& t : a["tasks"]) {
        if (t["job"] == name) task = t;
      }
      if (task.is_null()) std::this_thread::sleep_for(10ms);
    }
    ASSERT_FALSE(task.is_null()) << name << " was never assigned";
    Json exit = {{"job", name}, {"job_id", task["job_id"]}, {"task", 0}, {"run", task["run"]}, {"exited", true},
                 {"exit_code", 2}, {"reason", "exited with code 2"}};
    auto [hc, hb] = Call("POST", "/v1/agent/heartbeat", node_token, {{"node", "n1"}, {"tasks", {exit}}});
    ASSERT_EQ(hc, 200) << hb.dump();
    std::string state;
    for (int k = 0; k < 300 && state != "failed"; ++k) {
      state = Call("GET", "/v1/jobs/" + name, admin_).second.value("state", "");
      if (state != "failed") std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(state, "failed") << name;
  }
  Json loop = Received("crash_loop");
  ASSERT_TRUE(loop.is_object()) << "no crash_loop alert reached the webhook";
  EXPECT_EQ(loop["labels"], Json({{"job", "loop"}, {"tenant", "team"}}));
  EXPECT_EQ(loop["details"]["failures"], 3);
  EXPECT_EQ(loop["details"]["last_job"], "loop-3");
  EXPECT_NE(loop["summary"].get<std::string>().find("exited with code 2"), std::string::npos) << loop.dump();

  // 3. The API, the metrics page and the CLI show both, and the failed delivery. The receiver
  // holds the body before allotd has the answer and counts the delivery: read until it has
  // (up to 5 s).
  auto [gc, listed] = Call("GET", "/v1/alerts", admin_);
  for (int i = 0; i < 500 && gc == 200 && listed["delivery"]["delivered"] != 2; ++i) {
    std::this_thread::sleep_for(10ms);
    std::tie(gc, listed) = Call("GET", "/v1/alerts", admin_);
  }
  ASSERT_EQ(gc, 200) << listed.dump();
  ASSERT_EQ(listed["alerts"].size(), 2u) << listed.dump();
  EXPECT_EQ(listed["alerts"][0]["kind"], "failed_logins");
  EXPECT_EQ(listed["alerts"][1]["kind"], "crash_loop");
  EXPECT_EQ(listed["delivery"]["webhook"], "http://127.0.0.1:" + std::to_string(hook_port_) + "/hook");
  EXPECT_EQ(listed["delivery"]["failed_attempts"], 1);
  EXPECT_EQ(listed["delivery"]["delivered"], 2);
  httplib::Client m("127.0.0.1", port_);
  m.set_bearer_token_auth(admin_.c_str());
  auto page = m.Get("/metrics");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_NE(page->body.find("allot_alerts_total{kind=\"failed_logins\"} 1\n"), std::string::npos);
  EXPECT_NE(page->body.find("allot_alerts_total{kind=\"crash_loop\"} 1\n"), std::string::npos);
  EXPECT_NE(page->body.find("allot_alert_deliveries_failed_total 1\n"), std::string::npos);
  auto [code, out] = Cli("alerts");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("failed_logins"), std::string::npos) << out;
  EXPECT_NE(out.find("crash_loop"), std::string::npos) << out;
  EXPECT_NE(out.find(" ago)"), std::string::npos) << "times as people read them: " << out;
  EXPECT_NE(out.find("1 failed attempts"), std::string::npos) << out;
}

TEST_F(AllotdAlertsTest, AWebhookThatIsNotAnHttpUrlIsRefusedAtStartNamingTheFlagAndNothingIsStarted) {
  int port = testing::FreeListenPort();
  auto [code, out] = testing::RunShell(std::string(ALLOTD_BINARY) + " --listen 127.0.0.1:" + std::to_string(port) + " --data " +
                                       (dir_ / "other").string() + " --alert-webhook ftp://alerts.example/hook 2>&1");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--alert-webhook: 'ftp://alerts.example/hook' is not an http or https URL; expected http[s]://HOST[:PORT][/PATH]"),
            std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "other" / "journal.db")) << "refused before the journal was opened";
}

}  // namespace
}  // namespace allot
