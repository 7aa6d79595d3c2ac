// deploy/grafana/allot.json against a real allotd and a real Prometheus: the JSON model is well
// formed (every panel has a title, the Prometheus datasource and a target), and every target's
// expression, evaluated by Prometheus while it scrapes allotd, returns data.
//
// allotd runs on the example's simulated fleet with billing on (--rates) and a budget, so the
// spend panels have samples; one node is registered over the agents' protocol and sends a
// heartbeat with GPU telemetry (as allot-agent would from NVML), so the GPU panels have samples;
// a job runs; and the API, the scheduler and the journal have worked after Prometheus's first
// scrape, so their rates are not zero. Grafana's variables are substituted as Grafana would for
// "All": $__rate_interval → 1m, $tenant and $node → .* (their allValue).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "testing/allotd_client.h"
#include "testing/allotd_process.h"
#include "testing/free_port.h"
#include "testing/prometheus_process.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using Json = nlohmann::json;

Json Dashboard() {
  std::ifstream in(std::string(ALLOT_SOURCE_DIR) + "/deploy/grafana/allot.json");
  return Json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Every panel that queries (rows only group), however deeply nested in collapsed rows.
std::vector<Json> Panels(const Json& dash) {
  std::vector<Json> out;
  for (const Json& p : dash.value("panels", Json::array())) {
    if (p.value("type", "") == "row") {
      for (const Json& q : p.value("panels", Json::array())) out.push_back(q);
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::string Substitute(std::string expr) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"$__rate_interval", "1m"}, {"$tenant", ".*"}, {"$node", ".*"}}) {
    for (size_t at; (at = expr.find(from)) != std::string::npos;) expr.replace(at, from.size(), to);
  }
  return expr;
}

TEST(GrafanaDashboardTest, TheJsonModelParsesAndEveryPanelHasATitleTheDatasourceAndATarget) {
  Json dash = Dashboard();
  ASSERT_TRUE(dash.is_object()) << "deploy/grafana/allot.json does not parse";
  EXPECT_GE(dash.value("schemaVersion", 0), 36);
  bool ds_variable = false;
  for (const Json& v : dash["templating"]["list"]) ds_variable |= v["type"] == "datasource" && v["name"] == "DS_PROMETHEUS";
  EXPECT_TRUE(ds_variable) << "a datasource variable DS_PROMETHEUS";
  std::vector<Json> panels = Panels(dash);
  EXPECT_GE(panels.size(), 20u);
  std::set<int> ids;
  for (const Json& p : panels) {
    std::string title = p.value("title", "");
    EXPECT_FALSE(title.empty()) << p.dump();
    EXPECT_EQ(p["datasource"], (Json{{"type", "prometheus"}, {"uid", "${DS_PROMETHEUS}"}})) << title;
    EXPECT_TRUE(ids.insert(p.value("id", 0)).second) << title << ": panel ids are unique";
    ASSERT_TRUE(p["targets"].is_array() && !p["targets"].empty()) << title;
    for (const Json& t : p["targets"]) {
      EXPECT_FALSE(t.value("expr", "").empty()) << title;
      EXPECT_FALSE(t.value("refId", "").empty()) << title;
    }
  }
}

class GrafanaDashboardLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreeListenPort();
    metrics_port_ = testing::FreeListenPort();
    std::ofstream(dir_ / "rates.yaml") << "currency: USD\ngpu_hour: {H100-80GB: 2.50}\ncpu_hour: 0.02\n";
    std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    pid_ = testing::LaunchAllotd({"--listen", "127.0.0.1:" + std::to_string(port_), "--data", (dir_ / "data").string(),
                                  "--tenants", example, "--simulated-fleet", example, "--pass-interval", "1s",
                                  "--rates", (dir_ / "rates.yaml").string(), "--metrics-listen",
                                  "127.0.0.1:" + std::to_string(metrics_port_)},
                                 dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
    std::ifstream in(dir_ / "data" / "admin-token");
    in >> admin_;
  }
  void TearDown() override { testing::StopProcess(pid_, SIGTERM); }

  // METHOD path with `token`: the status and the body (null when there was no answer).
  std::pair<int, Json> Call(const std::string& method, const std::string& path, const std::string& token, const Json& body = nullptr) {
    return testing::CallAllotd(port_, method, path, token, body);
  }

  // Registers node `name` (2 H100s) over the agents' protocol, passes its acceptance, and sends
  // one heartbeat with each GPU's telemetry, as allot-agent reads it from NVML.
  void RegisterNodeWithTelemetry(const std::string& name) {
    auto [tc, token] = Call("POST", "/v1/tokens", admin_, {{"principal", "*"}, {"role", "node"}, {"scope", ""}});
    ASSERT_EQ(tc, 201) << token.dump();
    node_token_ = token["token"];
    Json gpus = Json::array();
    for (int i = 0; i < 2; ++i) {
      gpus.push_back({{"index", i}, {"uuid", "GPU-" + name + "-" + std::to_string(i)}, {"model", "H100-80GB"}, {"nvlink_peers", {1 - i}}});
    }
    auto [rc, reg] = Call("POST", "/v1/agent/register", node_token_,
                          {{"node", name}, {"address", name + ".local"}, {"zone", "z1"}, {"rack", "r2"}, {"cpu", "32"},
                           {"memory", "256Gi"}, {"gpus", gpus}});
    ASSERT_EQ(rc, 200) << reg.dump();
    auto [ac, acc] = Call("POST", "/v1/agent/heartbeat", node_token_,
                          {{"node", name}, {"health", {{"acceptance", true}, {"checks", {{{"name", "nvml.ecc"}, {"ok", true}}}}}}});
    ASSERT_EQ(ac, 200) << acc.dump();
    ASSERT_EQ(acc["condition"], "ready");
    Json telemetry = Json::array();
    for (int i = 0; i < 2; ++i) {
      telemetry.push_back({{"index", i}, {"uuid", "GPU-" + name + "-" + std::to_string(i)}, {"utilization_percent", 40 + i},
                           {"memory_used_mib", 1024 * (i + 1)}, {"power_mw", 250000}, {"temperature_c", 55},
                           {"ecc_corrected", i}, {"ecc_uncorrected", 0}, {"xids", i == 1 ? Json{79} : Json::array()}});
    }
    auto [hc, hb] = Call("POST", "/v1/agent/heartbeat", node_token_, {{"node", name}, {"gpus", telemetry}});
    ASSERT_EQ(hc, 200) << hb.dump();
  }

  testing::ScratchDir dir_{"grafana-dashboard"};
  int port_ = 0, metrics_port_ = 0;
  pid_t pid_ = -1;
  std::string admin_, node_token_;
};

TEST_F(GrafanaDashboardLiveTest, EveryPanelQueryReturnsDataFromARealPrometheusScrapingAllotd) {
  ASSERT_TRUE(std::system("command -v prometheus >/dev/null 2>&1") == 0)
      << "prometheus not found: install Debian's `prometheus` package (scripts/install-deps)";
  Json dash = Dashboard();
  ASSERT_TRUE(dash.is_object());
  testing::Prometheus prom(dir_.path(), metrics_port_);
  ASSERT_TRUE(prom.started());
  ASSERT_TRUE(prom.WaitUp()) << "Prometheus never saw allotd up; " << prom.log();

  // After the first scrape: a budget (spend), a node with telemetry (GPUs), a running job (tenants,
  // queues, the journal), API calls (latency by route).
  auto [bc, budget] = Call("POST", "/v1/budgets", admin_, {{"tenant", "research/vision"}, {"spend", "1000"}, {"gpu_hours", "1000"}});
  ASSERT_EQ(bc, 200) << budget.dump();
  RegisterNodeWithTelemetry("agent-0");
  auto [jc, job] = Call("POST", "/v1/jobs", admin_,
                        {{"name", "g1"}, {"tenant", "research/vision"}, {"duration", "1h"}, {"tasks", {{"gpus", 2}}}});
  ASSERT_EQ(jc, 201) << job.dump();
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    running = Call("GET", "/v1/jobs/g1", admin_).second.value("state", "") == "running";
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(running);
  // A few scrapes after all that, with the API read meanwhile, so every rate over 1m sees an
  // increase (a route's series starts at its first call; a rate needs it to grow after that).
  for (int i = 0; i < 16; ++i) {
    Call("GET", "/v1/jobs/g1", admin_);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }

  int evaluated = 0;
  for (const Json& p : Panels(dash)) {
    for (const Json& t : p["targets"]) {
      std::string expr = Substitute(t["expr"].get<std::string>());
      Json res = prom.Query(expr);
      ASSERT_TRUE(res.is_array()) << p["title"] << ": Prometheus refused " << expr;
      EXPECT_FALSE(res.empty()) << p["title"] << ": no data for " << expr;
      bool finite = false;
      for (const Json& s : res) finite |= std::isfinite(std::stod(s["value"][1].get<std::string>()));
      EXPECT_TRUE(finite) << p["title"] << ": only NaN for " << expr << ": " << res.dump();
      ++evaluated;
    }
  }
  EXPECT_GE(evaluated, 25);
  // The variables' label_values queries find values too.
  for (const Json& v : dash["templating"]["list"]) {
    if (v["type"] != "query") continue;
    std::string def = v["definition"];  // label_values(METRIC, LABEL)
    size_t open = def.find('('), comma = def.find(','), close = def.find(')');
    ASSERT_TRUE(open != std::string::npos && comma != std::string::npos && close != std::string::npos) << def;
    std::string metric = def.substr(open + 1, comma - open - 1), label = def.substr(comma + 1, close - comma - 1);
    label.erase(0, label.find_first_not_of(' '));
    Json values = prom.LabelValues(label, metric);
    EXPECT_TRUE(values.is_array() && !values.empty()) << def;
  }
  // The node's telemetry is what the GPU panels show: its two GPUs, one Xid.
  Json util = prom.Query("allot_gpu_utilization_ratio{node=\"agent-0\"}");
  EXPECT_EQ(util.size(), 2u) << util.dump();
  Json xid = prom.Query("sum(allot_gpu_xid_errors_total{node=\"agent-0\"})");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0]["value"][1], "1");
}

}  // namespace
}  // namespace allot
