// A real `prometheus` (Debian's package) for a test: it scrapes one target every second, and
// answers PromQL over its HTTP API. Shared by the metrics test and the Grafana dashboard's test.
//
//   testing::Prometheus prom(dir, metrics_port);
//   ASSERT_TRUE(prom.WaitUp()) << prom.log();
//   Json result = prom.Query("sum(allot_fleet_gpus)");  // data.result, or null when refused
#pragma once

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "testing/allotd_process.h"
#include "testing/free_port.h"

namespace allot::testing {

class Prometheus {
 public:
  // Starts prometheus with its config, data and log under `dir`, scraping 127.0.0.1:`target_port`
  // as job "allotd".
  Prometheus(const std::filesystem::path& dir, int target_port) : dir_(dir), port_(FreeListenPort()) {
    std::ofstream(dir_ / "prometheus.yml") << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                                              "scrape_configs:\n"
                                              "  - job_name: allotd\n"
                                              "    static_configs: [{targets: ['127.0.0.1:" << target_port << "']}]\n";
    std::filesystem::create_directories(dir_ / "tsdb");
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* f = std::freopen((dir_ / "prometheus.log").c_str(), "a", stderr);
      (void)f;
      ::execlp("prometheus", "prometheus", ("--config.file=" + (dir_ / "prometheus.yml").string()).c_str(),
               ("--storage.tsdb.path=" + (dir_ / "tsdb").string()).c_str(),
               ("--web.listen-address=127.0.0.1:" + std::to_string(port_)).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Prometheus() { StopProcess(pid_, SIGTERM); }
  Prometheus(const Prometheus&) = delete;
  Prometheus& operator=(const Prometheus&) = delete;

  bool started() const { return pid_ > 0; }
  std::string log() const { return "see " + (dir_ / "prometheus.log").string(); }

  // The instant query's data.result (an array), or null when Prometheus refused it or did not answer.
  nlohmann::json Query(const std::string& q) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2);
    auto r = c.Get("/api/v1/query", httplib::Params{{"query", q}}, httplib::Headers{});
    if (!r || r->status != 200) return nullptr;
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    return body.is_object() ? body["data"]["result"] : nullptr;
  }
  // The values of `label` on series matching `selector` (the API behind Grafana's label_values).
  nlohmann::json LabelValues(const std::string& label, const std::string& selector) const {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/api/v1/label/" + label + "/values", httplib::Params{{"match[]", selector}}, httplib::Headers{});
    if (!r || r->status != 200) return nullptr;
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    return body.is_object() ? body["data"] : nullptr;
  }

  // Waits (up to 30 s) until Prometheus has scraped the target and found it up.
  bool WaitUp() const {
    for (int i = 0; i < 300; ++i) {
      nlohmann::json res = Query("up{job=\"allotd\"}");
      if (res.is_array() && !res.empty() && res[0]["value"][1] == "1") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

 private:
  std::filesystem::path dir_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace allot::testing
