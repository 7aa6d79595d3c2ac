#include "cli/agent_commands.h"

#include <charconv>
#include <httplib.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/sim_command.h"

namespace allot::cli {
namespace {

// One read of a task's log from `offset`: the text and where the next read starts.
struct LogRead {
  int exit = 0;
  std::string text;
  uint64_t next = 0;
  std::string state;
};

LogRead ReadLog(const Conn& c, const std::string& job, const std::string& tenant, int task, int run, uint64_t offset,
                int wait_s) {
  httplib::Client http(c.server);
  http.set_connection_timeout(5);
  http.set_read_timeout(wait_s + 30);
  if (!c.token.empty()) http.set_bearer_token_auth(c.token.c_str());
  if (!c.ca_cert.empty()) http.set_ca_cert_path(c.ca_cert.c_str());
  std::string path = "/v1/jobs/" + httplib::detail::encode_query_param(job) + "/logs?" +
                     Query({{"tenant", tenant}, {"task", std::to_string(task)}, {"run", run >= 0 ? std::to_string(run) : ""},
                            {"offset", std::to_string(offset)}, {"wait", wait_s > 0 ? std::to_string(wait_s) : ""}});
  auto r = http.Get(path.c_str());
  LogRead out;
  if (!r) {
    std::cerr << "allot: cannot reach allotd at " << Shown(c.server) << " (" << httplib::to_string(r.error()) << ")\n";
    out.exit = 3;
    return out;
  }
  if (r->status != 200) {
    Reply reply{r->status, Json::parse(r->body, nullptr, false), "", r->body};
    out.exit = Check(reply);
    return out;
  }
  out.text = r->body;
  std::string size = r->get_header_value("X-Allot-Log-Size");
  out.next = offset + r->body.size();
  uint64_t told = 0;  // the server's size when it says one; a malformed header is ignored, not thrown
  if (auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), told); ec == std::errc() && end == size.data() + size.size()) {
    out.next = told;
  }
  out.state = r->get_header_value("X-Allot-Job-State");
  return out;
}

}  // namespace

void AddLogsCommand(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  auto job = std::make_shared<std::string>();
  auto tenant = std::make_shared<std::string>();
  auto task = std::make_shared<int>(0);
  auto run = std::make_shared<int>(-1);
  auto follow = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("logs", "A task's output (stdout and stderr), as its node's agent shipped it");
  AddConn(cmd, *conn);
  cmd->add_option("job", *job, "the job's name")->required();
  cmd->add_option("--tenant", *tenant, "the job's tenant, when tenants you see have jobs of the same name");
  cmd->add_option("--task", *task, "the task's index in its job")->capture_default_str();
  cmd->add_option("--run", *run, "which run (default: the current or last; a requeued job has several)");
  cmd->add_flag("-f,--follow", *follow, "keep printing as the task writes, until the job stops running");
  cmd->footer("Examples: allot logs train-7   |   allot logs train-7 --task 3 -f");
  cmd->callback([conn, job, tenant, task, run, follow] {
    Resolve(*conn);
    uint64_t offset = 0;
    while (true) {
      LogRead r = ReadLog(*conn, *job, *tenant, *task, *run, offset, *follow ? 20 : 0);
      if (r.exit != 0) return SetExitCode(r.exit);
      std::cout << r.text << std::flush;
      offset = r.next;
      bool running = r.state == "running" || r.state == "preempting" || r.state == "pending";
      if (!*follow || (!running && r.text.empty())) return SetExitCode(0);
    }
  });
}

int ShowNode(const Conn& conn, const std::string& node) {
  Reply r = Call(conn, "GET", "/v1/nodes/" + httplib::detail::encode_query_param(node));
  return Output(conn, r, [](const Json& n) {
    std::cout << "node " << Str(n["name"]) << ": " << Str(n["condition"]) << ", " << Str(n["pool"]) << " pool, "
              << n.value("gpus_idle", 0) << "/" << n.value("gpus", 0) << " " << Str(n["gpu_model"]) << " idle\n";
    std::string jobs;
    for (const Json& j : n.value("jobs", Json::array())) jobs += (jobs.empty() ? "" : ", ") + Str(j);
    std::cout << "jobs: " << (jobs.empty() ? "-" : jobs) << "\n";
    if (!n.contains("agent")) {
      std::cout << "agent: none (a simulated node)\n";
      return;
    }
    const Json& a = n["agent"];
    std::cout << "agent: " << Str(a["agent_version"]) << " at " << Str(a["address"]) << ", driver "
              << Str(a["driver_version"]) << ", last heartbeat " << Str(a["heartbeat_age_s"]) << " s ago\n";
    if (a.contains("isolation")) {
      std::string gaps;
      for (const Json& g : a["isolation"].value("gaps", Json::array())) gaps += (gaps.empty() ? "no " : ", no ") + Str(g);
      std::cout << "isolation: "
                << (gaps.empty() ? "complete (sandbox, tenant uids, device cgroup, cpu, memory and pids limits)"
                                 : "PARTIAL: " + gaps + " (the agent's log says why)")
                << "\n";
    }
    std::vector<std::vector<std::string>> rows;
    for (const Json& g : a.value("gpus", Json::array())) {
      auto v = [&](const char* k, const char* unit) { return g.contains(k) ? Str(g[k]) + unit : std::string("-"); };
      rows.push_back({Str(g["index"]), Str(g["uuid"]), v("utilization_percent", "%"), v("memory_used_mib", " MiB"),
                      v("temperature_c", " C"), v("ecc_uncorrected", "")});
    }
    if (!rows.empty()) PrintTable({"GPU", "UUID", "UTIL", "MEMORY USED", "TEMP", "ECC UNCORRECTED"}, rows);
    if (a.contains("health")) {
      const Json& h = a["health"];
      std::cout << "health: " << (h.value("ok", false) ? "ok" : "FAILING") << " (check " << Str(h["check"]) << ")\n";
      for (const Json& c : h.value("checks", Json::array())) {
        if (!c.value("ok", true)) std::cout << "  " << Str(c["name"]) << " [" << Str(c["severity"]) << "]: " << Str(c["detail"]) << "\n";
      }
    }
  });
}

int CheckNode(const Conn& conn, const std::string& node, int wait_s) {
  std::string path = "/v1/nodes/" + httplib::detail::encode_query_param(node);
  Reply asked = Call(conn, "POST", path + "/check");
  if (int rc = Check(asked); rc != 0) return rc;
  uint64_t check = asked.body.value("check", uint64_t{0});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  while (std::chrono::steady_clock::now() < deadline) {
    Reply r = Call(conn, "GET", path);
    if (int rc = Check(r); rc != 0) return rc;
    const Json& h = r.body.contains("agent") ? r.body["agent"].value("health", Json()) : Json();
    if (h.is_object() && h.value("check", uint64_t{0}) >= check) {
      if (conn.output != "table") return Output(conn, r, [](const Json&) {});
      bool ok = h.value("ok", false);
      std::cout << "node " << Shown(node) << ": check " << check << (ok ? " passed" : " FAILED") << "; condition "
                << Str(r.body["condition"]) << "\n";
      for (const Json& c : h.value("checks", Json::array())) {
        std::cout << "  " << (c.value("ok", true) ? "ok    " : "FAILED") << " " << Str(c["name"])
                  << (c.value("ok", true) ? "" : " [" + Str(c["severity"]) + "]: " + Str(c["detail"])) << "\n";
      }
      return ok ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::cerr << "allot: node " << Shown(node) << ": no report of check " << check << " within " << wait_s << " s (is its agent up?)\n";
  return 3;
}

}  // namespace allot::cli
