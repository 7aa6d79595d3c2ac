// `allot templates` (list), `allot templates create -f FILE [--replace]`, `allot templates show NAME
// [--tenant T]`, `allot templates delete NAME [--tenant T]`: tenants' job templates, which a job
// names with `template: NAME` and overrides field by field (docs/templates.md).
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

#include <httplib.h>

#include "cli/client.h"
#include "cli/client_commands.h"
#include "cli/sim_command.h"

namespace allot::cli {
namespace {

// The job fields as one line: "image: pytorch:2.3, tasks: {gpus: 1}, time_limit: 2h".
std::string FieldsLine(const Json& job) {
  std::string out;
  for (const auto& [key, value] : job.items()) {
    out += (out.empty() ? "" : ", ") + key + ": " + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

void PrintTemplate(const Json& t) {
  std::cout << "template " << Str(t["name"]) << " (tenant " << Str(t["tenant"]) << ")\n";
  if (!t.value("description", "").empty()) std::cout << "  " << Str(t["description"]) << "\n";
  for (const auto& [key, value] : t["job"].items()) {
    std::cout << "  " << Shown(key) << ": " << Shown(value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
  }
  std::cout << "saved by " << Str(t["saved_by"]) << " at " << Str(t["saved"]) << "\n";
}

std::string NamePath(const std::string& name, const std::string& tenant) {
  std::string q = Query({{"tenant", tenant}});
  return "/v1/templates/" + httplib::detail::encode_query_param(name) + (q.empty() ? "" : "?" + q);
}

}  // namespace

void AddTemplateCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  CLI::App* cmd = app.add_subcommand("templates", "Tenants' job templates: list, create, show, delete (docs/templates.md)");
  AddConn(cmd, *conn);
  auto tenant = std::make_shared<std::string>();
  cmd->add_option("--tenant", *tenant, "the templates a job of this tenant may name (its own and its ancestors')");
  cmd->footer("Examples: allot templates --tenant vfx/shots   |   allot templates create -f render.yaml   |   "
              "allot templates show render --tenant vfx   |   allot templates delete render --tenant vfx\n"
              "A template file: {name: render, tenant: vfx, description: ..., job: {image: ..., tasks: {gpus: 1}, time_limit: 20m}}\n"
              "A job names one with template: render; its own fields win, env merges name by name.");
  cmd->callback([conn, cmd, tenant] {
    if (!cmd->get_subcommands().empty()) return;
    Resolve(*conn);
    std::string q = Query({{"tenant", *tenant}});
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/templates" + (q.empty() ? "" : "?" + q)), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["templates"]) {
        rows.push_back({Str(t["name"]), Str(t["tenant"]), Shown(FieldsLine(t["job"])), Str(t["description"])});
      }
      PrintTable({"NAME", "TENANT", "JOB FIELDS", "DESCRIPTION"}, rows);
    }));
  });

  auto file = std::make_shared<std::string>();
  auto replace = std::make_shared<bool>(false);
  CLI::App* create = cmd->add_subcommand("create", "Create a template from a file (YAML or JSON)");
  AddConn(create, *conn);
  create->add_option("-f,--file", *file, "the template file ('-' for stdin)")->required();
  create->add_flag("--replace", *replace, "replace the tenant's template of that name");
  create->callback([conn, file, replace] {
    Resolve(*conn);
    std::optional<std::string> body = ReadBodyFile(*file, "templates create");
    if (!body) return SetExitCode(2);
    std::string path = std::string("/v1/templates") + (*replace ? "?replace=true" : "");
    SetExitCode(Output(*conn, Call(*conn, "POST", path, *body, BodyType(*file, *body)), PrintTemplate));
  });

  auto name = std::make_shared<std::string>();
  CLI::App* show = cmd->add_subcommand("show", "Show the template a job of --tenant would get by that name");
  AddConn(show, *conn);
  show->add_option("name", *name, "the template's name")->required();
  show->add_option("--tenant", *tenant, "the tenant asking (its own template, else its nearest ancestor's)");
  show->callback([conn, name, tenant] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", NamePath(*name, *tenant)), PrintTemplate));
  });

  CLI::App* del = cmd->add_subcommand("delete", "Delete a template; jobs submitted from it keep their fields");
  AddConn(del, *conn);
  del->add_option("name", *name, "the template's name")->required();
  del->add_option("--tenant", *tenant, "the tenant it is defined at (needed when several define that name)");
  del->callback([conn, name, tenant] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "DELETE", NamePath(*name, *tenant)), [](const Json& t) {
      std::cout << "template " << Str(t["name"]) << " of " << Str(t["tenant"]) << " deleted\n";
    }));
  });
}

}  // namespace allot::cli
