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

}  // namespace

void AddJobCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

  // submit
  auto file = std::make_shared<std::string>();
  CLI::App* submit = app.add_subcommand("submit", "Submit a job (a job as a scenario writes it, in YAML or JSON)");
  AddConn(submit, *conn);
  submit->add_option("-f,--file", *file, "the job file ('-' for stdin)")->required();
  submit->footer("Example: allot submit -f job.yaml   where job.yaml holds\n"
                 "  {name: train, tenant: research/nlp, duration: 2h, tasks: {count: 2, gpus: 8}, topology: rack}");
  submit->callback([conn, file] {
    Resolve(*conn);
    std::stringstream body;
    if (*file == "-") {
      body << std::cin.rdbuf();
    } else {
      std::ifstream in(*file);
      if (!in) {
        std::cerr << "allot: -f: cannot open " << *file << "\n";
        return SetExitCode(2);
      }
      body << in.rdbuf();
    }
    std::string type = BodyType(*file, body.str());
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/jobs", body.str(), type), [](const Json& j) {
      if (j.contains("desired")) {  // kind: service
        std::cout << "service " << Str(j["name"]) << " created: " << Str(j["desired"]) << " replica(s) wanted\n";
        return;
      }
      std::cout << "job " << Str(j["name"]) << " " << Str(j["state"]);
      if (j["reason"].is_string()) std::cout << ": " << Str(j["reason"]);
      std::cout << "\n";
    }));
  });

  // jobs
  auto tenant = std::make_shared<std::string>();
  auto state = std::make_shared<std::string>();
  CLI::App* jobs = app.add_subcommand("jobs", "List jobs (those in your scope)");
  AddConn(jobs, *conn);
  jobs->add_option("--tenant", *tenant, "only this tenant's subtree");
  jobs->add_option("--state", *state, "pending, running, preempting, finished, rejected or cancelled");
  jobs->footer("Example: allot jobs --tenant research --state pending");
  jobs->callback([conn, tenant, state] {
    Resolve(*conn);
    std::string q = "/v1/jobs?limit=1000";
    if (!tenant->empty()) q += "&tenant=" + httplib::detail::encode_query_param(*tenant);
    if (!state->empty()) q += "&state=" + *state;
    SetExitCode(Output(*conn, Call(*conn, "GET", q), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& j : b["jobs"]) rows.push_back(JobRow(j));
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
      SetExitCode(Output(*conn, r, [](const Json& j) { PrintJobView(std::cout, j); }));
    });
  }
}

}  // namespace allot::cli
