// End-to-end tests of the node agent: a real allotd and real allot-agent processes on loopback,
// each agent on its own fake NVML (tests/fakes) and its own work directory, running real task
// processes (bubblewrap, cgroups, the tenant's uid when root). Every wait polls against a
// deadline; nothing asserts on a fixed sleep.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/free_port.h"
#include "testing/scratch_dir.h"

namespace allot::testing {

class AgentE2eTest : public ::testing::Test {
 protected:
  using Json = nlohmann::json;
  static constexpr const char* kEightH100 = "driver version=550.54.15\ngpus count=8 name=\"NVIDIA H100 80GB HBM3\"\nnvswitch count=4\n";

  void SetUp() override { port_ = FreeListenPort(); }
  void TearDown() override {
    // SIGTERM first: an agent stops (kills) its tasks on the way out. All at once: each may take
    // a long poll's wait to go.
    for (auto& [node, pid] : agents_) {
      ::kill(pid, SIGCONT);
      ::kill(pid, SIGTERM);
    }
    for (auto& [node, pid] : agents_) Stop(pid, SIGTERM);
    Stop(allotd_, SIGTERM);
    for (auto& [node, pid] : agents_) std::filesystem::remove_all(MpsPipes(node));
    if (HasFailure()) DumpLogs();
  }

  // Starts allotd on the fixture's port with `tenants_yaml` (a scenario's tenants: section) and
  // no simulated fleet; `args` are added (e.g. --node-timeout 3s).
  void StartAllotd(const std::string& tenants_yaml, std::vector<std::string> args = {}) {
    std::ofstream(dir_ / "tenants.yaml") << tenants_yaml;
    std::vector<std::string> argv = {"allotd", "--listen", "127.0.0.1:" + std::to_string(port_), "--data",
                                     (dir_ / "data").string(), "--tenants", (dir_ / "tenants.yaml").string(),
                                     "--pass-interval", "1s"};
    argv.insert(argv.end(), args.begin(), args.end());
    allotd_ = Spawn(ALLOTD_BINARY, argv, (dir_ / "allotd.log").string(), {});
    httplib::Client c("127.0.0.1", port_);
    // Up to 60 s: under a parallel ctest beside a sanitizer build's link, a start once took
    // over 20 s. An allotd that exits (a port taken) is reported at once.
    int status = 0;
    bool exited = false;
    const bool ready = WaitFor(60, [&] {
      auto r = c.Get("/readyz");
      exited = exited || ::waitpid(allotd_, &status, WNOHANG) == allotd_;
      return (r && r->status == 200) || exited;
    });
    if (exited) allotd_ = -1;  // reaped: nothing to stop
    ASSERT_TRUE(ready && !exited) << "allotd did not become ready" << (exited ? " (it exited)" : "") << ":\n"
                                  << ReadFile(dir_ / "allotd.log");
    std::ifstream in(dir_ / "data" / "admin-token");
    in >> admin_token_;
    auto [code, body] = Call("POST", "/v1/tokens", R"({"principal": "*", "role": "node", "scope": ""})");
    ASSERT_EQ(code, 201) << body.dump();
    std::ofstream(dir_ / "node-token") << body["token"].get<std::string>() << "\n";
  }

  // Starts an agent for `node` on 8 fake H100s (nvml_gpus_) plus `nvml_extra` (per-GPU lines), its server
  // allotd or `server_port` (a proxy in front of it). Its device nodes and driver proc tree are
  // the fake ones of scripts/fake-gpu-node under <node>/gpu (with MIG caps for a mig pool).
  void StartAgent(const std::string& node, const std::string& nvml_extra = "", std::vector<std::string> args = {},
                  int server_port = 0) {
    std::filesystem::path home = dir_ / node;
    std::filesystem::create_directories(home);
    std::ofstream(home / "nvml.conf") << nvml_gpus_ << nvml_extra;
    const bool mig = std::find(args.begin(), args.end(), "mig") != args.end();
    MakeFakeGpuNode(home / "gpu", mig);
    std::vector<std::string> argv = {
        "allot-agent", "--server", "http://127.0.0.1:" + std::to_string(server_port ? server_port : port_),
        "--token-file", (dir_ / "node-token").string(), "--node", node, "--address", node + ".e2e",
        "--nvml", FAKE_NVML_PATH, "--work-dir", (home / "work").string(), "--cpu", "16", "--memory", "64Gi",
        // Agents of parallel tests (and of this one) share a cgroup: each needs its own group.
        "--cgroup-group", "allot-e2e-" + std::to_string(::getpid()) + "-" + node, "--heartbeat-poll", "5",
        "--device-root", (home / "gpu" / "dev").string(), "--proc-driver-root", (home / "gpu" / "proc").string(),
        "--mps-pipe-dir", MpsPipes(node).string()};
    // An --nvml or --address of the test's replaces the fixture's.
    for (const char* flag : {"--nvml", "--address"}) {
      if (std::find(args.begin(), args.end(), flag) != args.end()) {
        auto it = std::find(argv.begin(), argv.end(), flag);
        argv.erase(it, it + 2);
      }
    }
    argv.insert(argv.end(), args.begin(), args.end());
    agents_[node] = Spawn(ALLOT_AGENT_BINARY, argv, (home / "agent.log").string(),
                          {"FAKE_NVML_CONFIG=" + (home / "nvml.conf").string()});
  }
  pid_t AgentPid(const std::string& node) { return agents_.at(node); }
  // The node's MPS pipe directories: short, as the daemon's sockets need (under the test's
  // directory they would not fit), and the test's own.
  static std::filesystem::path MpsPipes(const std::string& node) {
    return "/tmp/allot-mps-" + std::to_string(::getpid()) + "-" + node;
  }
  // scripts/fake-gpu-node DIR: fake /dev nodes (mknod when root) and a fake driver proc tree.
  static void MakeFakeGpuNode(const std::filesystem::path& dir, bool mig) {
    std::string cmd = std::string(ALLOT_SOURCE_DIR) + "/scripts/fake-gpu-node " + dir.string() + (mig ? " --mig" : "");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  // The directory a task of `tenant` on `node` runs in (and may write to).
  std::filesystem::path TaskDir(const std::string& node, const std::string& tenant) const {
    return dir_ / node / "work" / "tenants" / tenant / "work";
  }

  // An API call as the platform admin: (status, body); status 0 when allotd did not answer.
  std::pair<int, Json> Call(const std::string& method, const std::string& path, const std::string& body = "") {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(admin_token_);
    c.set_connection_timeout(5);
    c.set_read_timeout(10);
    httplib::Result r = method == "GET"      ? c.Get(path.c_str())
                        : method == "DELETE" ? c.Delete(path.c_str())
                        : method == "PATCH"  ? c.Patch(path.c_str(), body, "application/json")
                                             : c.Post(path.c_str(), body, "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  Json Get(const std::string& path) { return Call("GET", path).second; }

  // Waits up to `seconds` for `done` (polled every 50 ms); whether it came true.
  static bool WaitFor(double seconds, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  std::string Condition(const std::string& node) { return Get("/v1/nodes/" + node).value("condition", "?"); }
  void WaitReady(const std::string& node) {
    ASSERT_TRUE(WaitFor(20, [&] { return Condition(node) == "ready"; })) << node << " is " << Condition(node);
  }
  // Submits a command job: `extra` are more top-level fields, e.g. R"("grace": "5s")".
  void Submit(const std::string& name, const std::string& tenant, const std::string& shell, const std::string& tasks,
              const std::string& extra = "") {
    Json command = {"/bin/sh", "-c", shell};
    std::string body = R"({"name": ")" + name + R"(", "tenant": ")" + tenant + R"(", "command": )" + command.dump() +
                       R"(, "tasks": )" + tasks + (extra.empty() ? "" : ", " + extra) + "}";
    auto [code, reply] = Call("POST", "/v1/jobs", body);
    ASSERT_EQ(code, 201) << reply.dump();
  }
  Json Job(const std::string& name) { return Get("/v1/jobs/" + name); }
  std::string State(const std::string& name) { return Job(name).value("state", "?"); }
  // Waits for the job to reach `state`; fails naming the state it is in.
  void WaitState(const std::string& name, const std::string& state, double seconds = 20) {
    ASSERT_TRUE(WaitFor(seconds, [&] { return State(name) == state; })) << name << ": " << Job(name).dump();
  }
  // The log allotd serves for one task's run (runs count from 0; -1: the current or last one),
  // "" when none.
  std::string Logs(const std::string& job, int task = 0, int run = -1) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(admin_token_);
    std::string path = "/v1/jobs/" + job + "/logs?task=" + std::to_string(task);
    if (run >= 0) path += "&run=" + std::to_string(run);
    auto r = c.Get(path.c_str());
    return r && r->status == 200 ? r->body : "";
  }
  // Waits until the served log contains `text`; returns the log.
  std::string WaitLog(const std::string& job, const std::string& text, int task = 0, int run = -1, double seconds = 20) {
    std::string log;
    EXPECT_TRUE(WaitFor(seconds, [&] { return (log = Logs(job, task, run)).find(text) != std::string::npos; }))
        << job << " task " << task << " run " << run << " log lacks '" << text << "':\n" << log;
    return log;
  }
  // "KEY=value" lines of a log as a map.
  static std::map<std::string, std::string> EnvLines(const std::string& log) {
    std::map<std::string, std::string> env;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (auto eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
  }
  static std::string ReadFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The values after `word` in a marks file's "word value" pairs (a task's "start T", "alive T").
  static std::vector<double> MarkTimes(const std::string& text, const std::string& word) {
    std::vector<double> t;
    std::istringstream in(text);
    for (std::string w, v; in >> w >> v;) {
      if (w == word) t.push_back(std::stod(v));
    }
    return t;
  }
  // No job ran twice at once: every "alive" mark of the first run precedes the second's one start.
  void ExpectEndedBeforeStart(const std::filesystem::path& first, const std::filesystem::path& second) {
    std::vector<double> start = MarkTimes(ReadFile(second), "start");
    ASSERT_EQ(start.size(), 1u);
    std::vector<double> alive = MarkTimes(ReadFile(first), "alive");
    ASSERT_FALSE(alive.empty());
    EXPECT_LT(alive.back(), start[0]) << first << "'s run was alive " << alive.back() - start[0] << " s after "
                                      << second << "'s started";
  }

  void Stop(pid_t& pid, int sig) {
    if (pid <= 0) return;
    ::kill(pid, SIGCONT);
    ::kill(pid, sig);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    pid = -1;
  }
  void DumpLogs() {
    std::cerr << "--- allotd.log\n" << ReadFile(dir_ / "allotd.log");
    for (auto& [node, pid] : agents_) std::cerr << "--- " << node << "/agent.log\n" << ReadFile(dir_ / node / "agent.log");
  }

  ScratchDir dir_{"agent-e2e"};
  std::string nvml_gpus_ = kEightH100;  // the GPUs StartAgent's fake NVML has
  int port_ = 0;
  pid_t allotd_ = -1;
  std::map<std::string, pid_t> agents_;
  std::string admin_token_;

 private:
  static pid_t Spawn(const char* binary, std::vector<std::string> argv, const std::string& log,
                     const std::vector<std::string>& env) {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (!std::freopen(log.c_str(), "a", stderr)) _exit(126);
      for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(binary, args.data());
      _exit(127);
    }
    return pid;
  }
};

}  // namespace allot::testing
