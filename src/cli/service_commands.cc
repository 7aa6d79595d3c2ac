// `allot services list|show|delete|update|rollback|scale`: inference services through allotd's
// API (docs/services.md). A service is created with `allot submit -f svc.yaml` (kind: service).
#include <httplib.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/client_commands.h"
#include "cli/job_view.h"
#include "cli/sim_command.h"

namespace allot::cli {
namespace {

std::string ReplicaCounts(const Json& s) { return Str(s["running"]) + "/" + Str(s["desired"]); }

void PrintService(const Json& s) {
  const int64_t now = NowMs();
  std::cout << "service: " << Str(s["name"]) << "\n"
            << "tenant: " << Str(s["tenant"]) << "\n"
            << "state: " << Str(s["state"]) << " (" << ReplicaCounts(s) << " running, " << Str(s["updated"])
            << " on the current revision)\n"
            << "revision: " << Str(s["revision"]) << " of " << Str(s["revisions"]) << "\n"
            << "spread: " << Str(s["spread"]) << "\n"
            << "restarts: " << Str(s["restarts"]) << "\n"
            << "created: " << ShownTime(s["created"], now) << "\n";
  if (s.contains("autoscale")) {
    const Json& a = s["autoscale"];
    std::cout << "autoscale: " << Str(a["min_replicas"]) << " to " << Str(a["max_replicas"]) << " replicas, target "
              << Str(a["target"]) << " per replica, stable window " << Str(a["stable_window"]) << ", panic window "
              << Str(a["panic_window"]) << " at " << Str(a["panic_threshold"]) << "×, scale-down delay "
              << Str(a["scale_down_delay"]) << "\n";
  }
  if (s.contains("scaled")) std::cout << "scaled: " << ShownTime(s["scaled"]["at"], now) << ": " << Str(s["scaled"]["why"]) << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const Json& r : s["replicas"]) {
    std::string note = r.contains("reason") ? Str(r["reason"]) : "";
    if (r["next_restart"].is_string()) {
      note = "restarts " + ShownTime(r["next_restart"], now) + "; last exit: " + Str(r["last_exit"]);
    } else if (note.empty() && r["last_exit"].is_string()) {
      note = "last exit: " + Str(r["last_exit"]);
    }
    rows.push_back({Str(r["name"]), Str(r["state"]), Str(r["node"]), Str(r["port"]), Str(r["revision"]), Str(r["restarts"]),
                    note.empty() ? "-" : note});
  }
  PrintTable({"REPLICA", "STATE", "NODE", "PORT", "REV", "RESTARTS", "NOTE"}, rows);
}

std::string ServicePath(const std::string& name, const std::string& tenant, const std::string& tail = "") {
  std::string q = Query({{"tenant", tenant}});
  return "/v1/services/" + httplib::detail::encode_query_param(name) + tail + (q.empty() ? "" : "?" + q);
}

}  // namespace

void AddServiceCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  CLI::App* cmd = app.add_subcommand("services", "Inference services: list, show, delete, update, rollback, scale");
  cmd->require_subcommand(1);
  cmd->footer("Create one with: allot submit -f svc.yaml   where svc.yaml holds\n"
              "  {name: chat, tenant: research/nlp, kind: service, replicas: 2, command: [./serve], tasks: {gpus: 1}}");

  auto tenant = std::make_shared<std::string>();
  CLI::App* list = cmd->add_subcommand("list", "The services in your scope, with their replicas running/wanted");
  AddConn(list, *conn);
  list->add_option("--tenant", *tenant, "only this tenant's subtree");
  list->callback([conn, tenant] {
    Resolve(*conn);
    std::string q = Query({{"tenant", *tenant}});
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/services" + (q.empty() ? "" : "?" + q)), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& s : b["services"]) {
        rows.push_back({Str(s["name"]), Str(s["tenant"]), Str(s["state"]), ReplicaCounts(s), Str(s["revision"]), Str(s["restarts"])});
      }
      PrintTable({"NAME", "TENANT", "STATE", "RUNNING", "REVISION", "RESTARTS"}, rows);
    }));
  });

  for (const char* verb : {"show", "delete", "rollback"}) {
    std::string v = verb;
    auto name = std::make_shared<std::string>();
    auto in_tenant = std::make_shared<std::string>();
    CLI::App* c = cmd->add_subcommand(verb, v == "show" ? "A service and each replica's node, port, state and restarts"
                                            : v == "delete" ? "Delete a service: its replicas are stopped"
                                                            : "Roll back to the previous revision's template, one replica at a time");
    AddConn(c, *conn);
    c->add_option("name", *name, "service name")->required();
    c->add_option("--tenant", *in_tenant, "the service's tenant, when tenants you see have services of the same name");
    c->callback([conn, name, in_tenant, v] {
      Resolve(*conn);
      Reply r = v == "show"     ? Call(*conn, "GET", ServicePath(*name, *in_tenant))
                : v == "delete" ? Call(*conn, "DELETE", ServicePath(*name, *in_tenant))
                                : Call(*conn, "POST", ServicePath(*name, *in_tenant, "/rollback"));
      SetExitCode(Output(*conn, r, [v](const Json& s) {
        if (v == "delete") {
          std::cout << "service " << Str(s["name"]) << " deleted\n";
        } else {
          PrintService(s);
        }
      }));
    });
  }

  auto name = std::make_shared<std::string>();
  auto in_tenant = std::make_shared<std::string>();
  auto image = std::make_shared<std::string>();
  auto command = std::make_shared<std::vector<std::string>>();
  auto env = std::make_shared<std::vector<std::string>>();
  CLI::App* update = cmd->add_subcommand("update", "A new revision (image, command, env), rolled out one replica at a time");
  AddConn(update, *conn);
  update->add_option("name", *name, "service name")->required();
  update->add_option("--tenant", *in_tenant, "the service's tenant");
  update->add_option("--image", *image, "the replicas' new image");
  update->add_option("--command", *command, "the replicas' new command and its arguments")->expected(1, -1);
  update->add_option("--env", *env, "NAME=VALUE, set in the replicas' environment (repeat for several)");
  update->footer("Example: allot services update chat --image oci:/srv/images/chat:v2 --env MODEL=llama-3-8b");
  update->callback([conn, name, in_tenant, image, command, env] {
    Resolve(*conn);
    Json body = Json::object();
    if (!image->empty()) body["image"] = *image;
    if (!command->empty()) body["command"] = *command;
    if (!env->empty()) {
      Json vars = Json::object();
      for (const std::string& kv : *env) {
        size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::cerr << "allot services update: --env '" << Shown(kv) << "': expected NAME=VALUE\n";
          return SetExitCode(2);
        }
        vars[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      body["env"] = vars;
    }
    SetExitCode(Output(*conn, Call(*conn, "POST", ServicePath(*name, *in_tenant, "/update"), body.dump(), "application/json"),
                       [](const Json& s) { PrintService(s); }));
  });

  auto scale_name = std::make_shared<std::string>();
  auto replicas = std::make_shared<int>(0);
  CLI::App* scale = cmd->add_subcommand("scale", "Set the replicas wanted (within min/max when autoscaled)");
  AddConn(scale, *conn);
  scale->add_option("name", *scale_name, "service name")->required();
  scale->add_option("--tenant", *in_tenant, "the service's tenant");
  scale->add_option("--replicas", *replicas, "how many")->required();
  scale->callback([conn, scale_name, in_tenant, replicas] {
    Resolve(*conn);
    Json body = {{"replicas", *replicas}};
    SetExitCode(Output(*conn, Call(*conn, "POST", ServicePath(*scale_name, *in_tenant, "/scale"), body.dump(), "application/json"),
                       [](const Json& s) { PrintService(s); }));
  });
}

}  // namespace allot::cli
