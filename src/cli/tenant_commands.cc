// `allot quota`, `usage` and `tenants apply|delete|move`: the tenant tree through allotd's API.
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

// quota: the tenant tree with usage against guarantee and max.
void AddQuotaCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  CLI::App* quota = app.add_subcommand("quota", "The tenant tree: usage against guarantee and max");
  AddConn(quota, *conn);
  quota->footer("Example: allot quota -o json");
  quota->callback([conn] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/tenants"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tenants"]) {
        std::string path = t["path"];
        std::string shown = std::string(2 * std::count(path.begin(), path.end(), '/'), ' ') + path;
        // Every GPU model the tenant uses or has a quota for.
        std::set<std::string> models;
        for (const char* part : {"usage", "guarantee", "max"}) {
          for (const auto& [res, v] : t[part].items()) {
            if (res.rfind("gpu/", 0) == 0 && !(part == std::string("usage") && v == "0")) models.insert(res);
          }
        }
        if (models.empty()) rows.push_back({shown, "-", "-", "-", "-"});
        for (const std::string& res : models) {
          rows.push_back({shown, res, t["usage"].value(res, "0"), t["guarantee"].value(res, "-"), t["max"].value(res, "unlimited")});
        }
      }
      PrintTable({"TENANT", "RESOURCE", "USED", "GUARANTEE", "MAX"}, rows);
    }));
  });
}

// usage: resource-hours per tenant over a window.
void AddUsageCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  auto usage_tenant = std::make_shared<std::string>();
  auto usage_from = std::make_shared<std::string>();
  auto usage_to = std::make_shared<std::string>();
  auto usage_since = std::make_shared<std::string>();
  CLI::App* usage = app.add_subcommand("usage", "Resource-hours per tenant over a window (each tenant covers its subtree)");
  AddConn(usage, *conn);
  usage->add_option("--tenant", *usage_tenant, "only this tenant's subtree");
  usage->add_option("--since", *usage_since, "the window ends now and starts this long ago (e.g. 7d, 12h); default 24h");
  usage->add_option("--from", *usage_from, "window start: Unix seconds or RFC 3339 UTC (2026-11-01T00:00:00Z)");
  usage->add_option("--to", *usage_to, "window end (default now)");
  usage->footer("Examples: allot usage --since 7d   |   allot usage --tenant research --from 2026-11-01T00:00:00Z -o json");
  usage->callback([conn, usage_tenant, usage_from, usage_to, usage_since] {
    Resolve(*conn);
    std::string q;
    auto add = [&](const char* key, const std::string& v) {
      if (!v.empty()) q += std::string(q.empty() ? "?" : "&") + key + "=" + httplib::detail::encode_query_param(v);
    };
    if (!usage_since->empty()) {
      if (!usage_from->empty()) {
        std::cerr << "allot: usage: give --since or --from, not both\n";
        return SetExitCode(2);
      }
      auto d = ParseDurationMs(*usage_since);
      if (!d || *d <= 0) {
        std::cerr << "allot: --since: '" << *usage_since << "' is not a duration like 24h or 7d\n";
        return SetExitCode(2);
      }
      int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      add("from", std::to_string(now_s - *d / 1000));
    }
    add("from", *usage_from);
    add("to", *usage_to);
    add("tenant", *usage_tenant);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/usage" + q), [](const Json& b) {
      std::cout << "from " << Str(b["from"]) << " to " << Str(b["to"]) << "\n";
      auto hours = [](const Json& v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", v.is_number() ? v.get<double>() : 0.0);
        return std::string(buf);
      };
      auto by_model = [&](const Json& m) {
        std::string out;
        for (const auto& [model, h] : m.items()) out += (out.empty() ? "" : ", ") + model + " " + hours(h);
        return out.empty() ? std::string("-") : out;
      };
      // The reserved column only when some tenant booked capacity in the window.
      bool booked = false;
      for (const Json& t : b["tenants"]) booked |= t.contains("reserved_gpu_hours");
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tenants"]) {
        std::string path = t["path"];
        std::string shown = std::string(2 * std::count(path.begin(), path.end(), '/'), ' ') + path;
        rows.push_back({shown, Str(t["jobs"]), by_model(t["gpu_hours"]), hours(t["cpu_hours"]), hours(t["memory_gib_hours"])});
        if (booked) {
          rows.back().push_back(by_model(t.value("reserved_gpu_hours", Json::object())));
          rows.back().push_back(by_model(t.value("idle_reserved_gpu_hours", Json::object())));
        }
      }
      std::vector<std::string> header = {"TENANT", "JOBS", "GPU-HOURS", "CPU-HOURS", "MEMORY-GIB-HOURS"};
      if (booked) {
        header.push_back("RESERVED GPU-HOURS");
        header.push_back("IDLE RESERVED");
      }
      PrintTable(header, rows);
    }));
  });
}

// tenants: create or update (apply), delete, move.
void AddTenantsCommand(CLI::App& app, const std::shared_ptr<Conn>& conn) {
  CLI::App* tenants = app.add_subcommand("tenants", "Create, update, delete or move tenants (see `allot quota` for the tree)");
  tenants->require_subcommand(1);
  auto tenant_file = std::make_shared<std::string>();
  CLI::App* apply = tenants->add_subcommand("apply", "Create or update tenants from YAML or JSON: one tenant, a list, or a "
                                                     "scenario's `tenants:` section (parents before children)");
  AddConn(apply, *conn);
  apply->add_option("-f,--file", *tenant_file, "the tenants file ('-' for stdin)")->required();
  apply->footer("Example: allot tenants apply -f team.yaml   where team.yaml holds\n"
                "  {path: research/nlp, guarantee: {gpu/H100-80GB: 16}, max: {gpu/H100-80GB: 32}}");
  apply->callback([conn, tenant_file] {
    Resolve(*conn);
    YAML::Node doc;
    try {
      doc = *tenant_file == "-" ? YAML::Load(std::cin) : YAML::LoadFile(*tenant_file);
    } catch (const YAML::Exception& e) {
      std::cerr << "allot: -f " << *tenant_file << ": " << e.what() << "\n";
      return SetExitCode(2);
    }
    if (doc.IsMap() && doc["tenants"]) doc = doc["tenants"];
    std::vector<YAML::Node> items;
    if (doc.IsSequence()) {
      for (const YAML::Node& t : doc) items.push_back(t);
    } else {
      items.push_back(doc);
    }
    // One request per tenant, in order, stopping at the first refusal: the tenants before it
    // are applied, and the message says which one failed.
    for (const YAML::Node& t : items) {
      YAML::Emitter out;
      out << YAML::Flow << t;
      Reply r = Call(*conn, "POST", "/v1/tenants", out.c_str(), "application/yaml");  // emitted as YAML
      if (int rc = Output(*conn, r, [&](const Json& j) {
            std::cout << "tenant " << Str(j["path"]) << (r.status == 201 ? " created" : " updated") << "\n";
          });
          rc != 0) {
        return SetExitCode(rc);
      }
    }
  });
  auto tenant_path = std::make_shared<std::string>();
  CLI::App* del = tenants->add_subcommand("delete", "Delete a tenant with no children and no pending or running jobs "
                                                    "(its tokens are revoked)");
  AddConn(del, *conn);
  del->add_option("path", *tenant_path, "tenant path")->required();
  del->footer("Example: allot tenants delete research/old-project");
  del->callback([conn, tenant_path] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "DELETE", "/v1/tenants/" + *tenant_path),
                       [](const Json& j) { std::cout << "tenant " << Str(j["path"]) << " deleted\n"; }));
  });
  auto move_to = std::make_shared<std::string>();
  CLI::App* move = tenants->add_subcommand("move", "Move or rename a subtree; its running jobs and usage move with it");
  AddConn(move, *conn);
  move->add_option("path", *tenant_path, "tenant path")->required();
  move->add_option("--to", *move_to, "the new path")->required();
  move->footer("Example: allot tenants move research/nlp --to ml/nlp");
  move->callback([conn, tenant_path, move_to] {
    Resolve(*conn);
    Json body = {{"path", *tenant_path}, {"to", *move_to}};
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tenants/move", body.dump()), [](const Json& j) {
      std::cout << "tenant " << Str(j["from"]) << " moved to " << Str(j["path"]) << "\n";
    }));
  });
}

}  // namespace

void AddTenantCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  AddQuotaCommand(app, conn);
  AddUsageCommand(app, conn);
  AddTenantsCommand(app, conn);
}

}  // namespace allot::cli
