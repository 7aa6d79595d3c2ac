// `allot submit`, `jobs`, `describe`, `explain` and `cancel`: jobs through allotd's API.
#include "cli/client_commands.h"

#include <httplib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "cli/agent_commands.h"
#include "cli/client.h"
#include "cli/job_view.h"
#include "core/names.h"
#include "cli/sim_command.h"
#include "core/quantity.h"

namespace allot::cli {

namespace {

std::string GpusOf(const Json& job) {
  int64_t milli = 0;
  for (const Json& p : job.value("placement", Json::array())) milli += p.value("share", 0);
  if (milli == 0) return "-";
  std::ostringstream s;
  s << static_cast<double>(milli) / 1000.0;
  return s.str();
}

std::vector<std::string> JobRow(const Json& j) {
  std::string nodes;
  for (const Json& n : j.value("nodes", Json::array())) nodes += (nodes.empty() ? "" : ",") + Str(n);
  std::string tail = j["reason"].is_string() ? Str(j["reason"]) : nodes;
  return {Str(j["name"]), Str(j["tenant"]), Str(j["state"]), Str(j["class"]), GpusOf(j), tail.empty() ? "-" : tail};
}

// An array as one row: its progress where a job shows its nodes or reason.
std::vector<std::string> ArrayRow(const Json& a) {
  const Json& p = a["progress"];
  std::string progress = std::to_string(p.value("done", 0)) + "/" + std::to_string(a.value("count", 0)) + " done, " +
                         std::to_string(p.value("running", 0)) + " running, " + std::to_string(p.value("failed", 0)) +
                         " failed, " + std::to_string(p.value("pending", 0)) + " pending (parallel " +
                         std::to_string(a.value("parallel", 0)) + ")";
  if (a.value("retries", 0) > 0) progress += ", " + std::to_string(a.value("retries", 0)) + " retried";
  return {Str(a["name"]) + "[" + std::to_string(a.value("count", 0)) + "]", Str(a["tenant"]), Str(a["state"]), "-", "-", progress};
}

// One element of `allot jobs --array NAME`.
std::vector<std::string> ElementRow(const Json& e) {
  std::string frame = e.contains("frame") ? std::to_string(e["frame"].get<int64_t>()) : "-";
  std::string tail = e["reason"].is_string() ? Str(e["reason"]) : "";
  if (tail.empty()) {
    for (const Json& n : e.value("nodes", Json::array())) tail += (tail.empty() ? "" : ",") + Str(n);
  }
  return {Str(e["name"]), std::to_string(e.value("index", 0)), frame, Str(e["state"]), std::to_string(e.value("failures", 0)),
          tail.empty() ? "-" : tail};
}

void PrintSubmitted(const Json& j) {
  if (j.contains("desired")) {  // kind: service
    std::cout << "service " << Str(j["name"]) << " created: " << Str(j["desired"]) << " replica(s) wanted\n";
    return;
  }
  if (!j.contains("arrays")) {
    std::cout << "job " << Str(j["name"]) << " " << Str(j["state"]);
    if (j["reason"].is_string()) std::cout << ": " << Str(j["reason"]);
    std::cout << "\n";
    return;
  }
  for (const Json& a : j["arrays"]) {
    std::cout << "array " << Str(a["name"]) << ": " << a.value("count", 0) << " elements, at most " << a.value("parallel", 0)
              << " at once\n";
  }
  for (const Json& job : j["jobs"]) {
    std::cout << "job " << Str(job["name"]) << " " << Str(job["state"]);
    if (job["reason"].is_string()) std::cout << ": " << Str(job["reason"]);
    std::cout << "\n";
  }
}

}  // namespace

void AddJobCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

  // submit
  auto file = std::make_shared<std::string>();
  CLI::App* submit = app.add_subcommand("submit", "Submit a job, an array or a pipeline (a job as a scenario writes it, or a list "
                                                   "of them, in YAML or JSON)");
  AddConn(submit, *conn);
  submit->add_option("-f,--file", *file, "the job file ('-' for stdin)")->required();
  submit->footer("Example: allot submit -f job.yaml   where job.yaml holds\n"
                 "  {name: train, tenant: research/nlp, duration: 2h, tasks: {count: 2, gpus: 8}, topology: rack}\n"
                 "An array: {name: render, tenant: vfx, command: [render.sh], tasks: {gpus: 1}, "
                 "array: {frames: \"1-240\", parallel: 50}, retries: 3} (docs/arrays.md)");
  submit->callback([conn, file] {
    Resolve(*conn);
    std::optional<std::string> body = ReadBodyFile(*file, "-f");
    if (!body) return SetExitCode(2);
    std::string type = BodyType(*file, *body);
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/jobs", *body, type), PrintSubmitted));
  });

  // jobs
  auto tenant = std::make_shared<std::string>();
  auto state = std::make_shared<std::string>();
  auto array = std::make_shared<std::string>();
  CLI::App* jobs = app.add_subcommand("jobs", "List jobs (those in your scope); an array is one row with its progress");
  AddConn(jobs, *conn);
  jobs->add_option("--tenant", *tenant, "only this tenant's subtree");
  jobs->add_option("--state", *state, "pending, running, preempting, finished, rejected, cancelled or failed");
  jobs->add_option("--array", *array, "the elements of this array, one row each");
  jobs->footer("Examples: allot jobs --tenant research --state pending   |   allot jobs --array render");
  jobs->callback([conn, tenant, state, array] {
    Resolve(*conn);
    if (!array->empty()) {
      std::string path = "/v1/arrays/" + httplib::detail::encode_query_param(*array);
      std::string query = Query({{"tenant", *tenant}});
      SetExitCode(Output(*conn, Call(*conn, "GET", path + (query.empty() ? "" : "?" + query)), [](const Json& a) {
        std::vector<std::vector<std::string>> rows;
        for (const Json& e : a["elements"]) rows.push_back(ElementRow(e));
        PrintTable({"NAME", "INDEX", "FRAME", "STATE", "RETRIED", "NODES / REASON"}, rows);
        std::cout << ArrayRow(a)[5] << "\n";
      }));
      return;
    }
    std::string q = "/v1/jobs?limit=1000";
    if (!tenant->empty()) q += "&tenant=" + httplib::detail::encode_query_param(*tenant);
    if (!state->empty()) q += "&state=" + *state;
    Reply r = Call(*conn, "GET", q);
    Reply arrays;
    if (r.status == 200) arrays = Call(*conn, "GET", "/v1/arrays" + (tenant->empty() ? "" : "?tenant=" + httplib::detail::encode_query_param(*tenant)));
    // Elements are shown by their array's row (at the first element's place); -o json has both lists.
    if (arrays.status == 200) r.body["arrays"] = arrays.body["arrays"];
    SetExitCode(Output(*conn, r, [](const Json& b) {
      const Json arrays = b.value("arrays", Json::array());
      std::map<std::string, const Json*> by_key;  // tenant + '\n' + array → the array
      for (const Json& a : arrays) by_key[Str(a["tenant"]) + "\n" + Str(a["name"])] = &a;
      std::set<std::string> shown;
      std::vector<std::vector<std::string>> rows;
      for (const Json& j : b["jobs"]) {
        if (!j.contains("array")) {
          rows.push_back(JobRow(j));
          continue;
        }
        std::string key = Str(j["tenant"]) + "\n" + Str(j["array"]["name"]);
        auto it = by_key.find(key);
        if (it == by_key.end() || !shown.insert(key).second) continue;
        rows.push_back(ArrayRow(*it->second));  // with --state: an array with an element in that state
      }
      PrintTable({"NAME", "TENANT", "STATE", "CLASS", "GPUS", "NODES / REASON"}, rows);
    }));
  });

  // describe / explain / cancel
  for (const char* verb : {"describe", "explain", "cancel"}) {
    auto name = std::make_shared<std::string>();
    auto in_tenant = std::make_shared<std::string>();
    std::string v = verb;
    CLI::App* cmd = app.add_subcommand(verb, v == "describe" ? "Show a job" : v == "explain" ? "Why a job waits, with its demand"
                                                                                                : "Cancel a job");
    AddConn(cmd, *conn);
    CLI::Option* job = cmd->add_option("job", *name, "job name");
    if (v != "explain") job->required();
    cmd->add_option("--tenant", *in_tenant,
                    v == "explain" ? "the job's tenant, when tenants you see have jobs of the same name; with no job: "
                                     "why this tenant's share is what it is"
                                   : "the job's tenant, when tenants you see have jobs of the same name");
    cmd->footer("Examples: allot " + v + " train   |   allot " + v + " train --tenant research/nlp" +
                (v == "explain" ? "   |   allot explain --tenant research/nlp" : ""));
    cmd->callback([conn, name, in_tenant, v] {
      Resolve(*conn);
      if (v == "explain" && name->empty()) {
        if (in_tenant->empty()) {
          std::cerr << "allot explain: expected a job name, or --tenant PATH to explain a tenant's share\n";
          SetExitCode(2);
          return;
        }
        Reply r = Call(*conn, "GET", "/v1/tenants/" + *in_tenant + "/explain");
        SetExitCode(Output(*conn, r, [](const Json& j) { PrintTenantExplanation(j); }));
        return;
      }
      std::string path = "/v1/jobs/" + httplib::detail::encode_query_param(*name);
      std::string query = Query({{"tenant", *in_tenant}});
      std::string tail = query.empty() ? "" : "?" + query;
      Reply r = v == "cancel" ? Call(*conn, "POST", path + "/cancel" + tail)
                              : Call(*conn, "GET", (v == "explain" ? path + "/explain" : path) + tail);
      if (r.status == 404 && v != "explain") {
        // No job of that name: an array's (cancel cancels every element not yet ended).
        std::string apath = "/v1/arrays/" + httplib::detail::encode_query_param(*name);
        Reply a = v == "cancel" ? Call(*conn, "POST", apath + "/cancel" + tail) : Call(*conn, "GET", apath + tail);
        if (a.status != 404) {
          // The array's progress; its elements are `allot jobs --array NAME`.
          SetExitCode(Output(*conn, a, [](const Json& j) {
            Json summary = j;
            summary.erase("elements");
            PrintJobView(std::cout, summary);
          }));
          return;
        }
      }
      SetExitCode(Output(*conn, r, [](const Json& j) { PrintJobView(std::cout, j); }));
    });
  }
}

}  // namespace allot::cli
