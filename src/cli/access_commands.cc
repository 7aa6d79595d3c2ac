// `allot login`, `tokens list|create|revoke` and `audit list`: who may do what, through allotd's API.
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

void AddLoginCommand(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

  // login
  auto login_token_file = std::make_shared<std::string>();
  CLI::App* login = app.add_subcommand("login", "Check a server and token, and save them for later commands");
  AddConn(login, *conn);
  login->add_option("--token-file", *login_token_file, "read the token from this file (e.g. allotd's admin-token)");
  login->footer("Example: allot login --server http://127.0.0.1:7070 --token-file ./allot-data/admin-token");
  login->callback([conn, login_token_file] {
    if (!login_token_file->empty()) {
      std::ifstream in(*login_token_file);
      if (!(in >> conn->token)) {
        std::cerr << "allot: --token-file: cannot read a token from " << *login_token_file << "\n";
        return SetExitCode(2);
      }
    }
    Resolve(*conn);
    if (conn->token.empty()) {
      std::cerr << "allot: login needs --token or --token-file\n";
      return SetExitCode(2);
    }
    Reply r = Call(*conn, "GET", "/v1/jobs?limit=1");
    if (int rc = Check(r); rc != 0) return SetExitCode(rc);
    std::filesystem::path p = ConfigPath();
    std::filesystem::create_directories(p.parent_path());
    {
      std::ofstream out(p, std::ios::trunc);
      out << "server " << conn->server << "\ntoken " << conn->token << "\n";
    }
    ::chmod(p.c_str(), 0600);
    std::cout << "logged in to " << conn->server << "; saved in " << p.string() << "\n";
  });
}

void AddTokenCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();

  // audit list (`audit verify` is audit_command.cc's, offline)
  if (CLI::App* audit = app.get_subcommand("audit")) {  // registered by AddAuditCommand first
    auto after = std::make_shared<int64_t>(-1);
    CLI::App* list = audit->add_subcommand("list", "The audit log records you may read (auditors, admins)");
    AddConn(list, *conn);
    list->add_option("--after", *after, "only records after this sequence number");
    list->footer("Example: allot audit list -o json");
    list->callback([conn, after] {
      Resolve(*conn);
      std::string path = "/v1/audit" + (*after >= 0 ? "?after=" + std::to_string(*after) : std::string());
      SetExitCode(Output(*conn, Call(*conn, "GET", path), [](const Json& b) {
        std::vector<std::vector<std::string>> rows;
        for (const Json& r : b["records"]) {
          rows.push_back({Str(r["seq"]), Str(r["actor"]), Str(r["role"]), Str(r["action"]), Str(r["tenant"]), Str(r["target"]),
                          Str(r["outcome"])});
        }
        PrintTable({"SEQ", "ACTOR", "ROLE", "ACTION", "TENANT", "TARGET", "OUTCOME"}, rows);
      }));
    });
  }

  // tokens
  auto principal = std::make_shared<std::string>();
  auto role = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>();
  CLI::App* tokens = app.add_subcommand("tokens", "Issue, list and revoke tokens");
  tokens->require_subcommand(1);
  CLI::App* list = tokens->add_subcommand("list", "The live tokens you manage");
  AddConn(list, *conn);
  list->footer("Example: allot tokens list");
  list->callback([conn] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/tokens"), [](const Json& b) {
      std::vector<std::vector<std::string>> rows;
      for (const Json& t : b["tokens"]) rows.push_back({Str(t["id"]), Str(t["principal"]), Str(t["role"]), Str(t["scope"])});
      PrintTable({"ID", "PRINCIPAL", "ROLE", "SCOPE"}, rows);
    }));
  });
  auto revoke_id = std::make_shared<std::string>();
  CLI::App* revoke = tokens->add_subcommand("revoke", "Revoke a token by its id (from `allot tokens list`)");
  AddConn(revoke, *conn);
  revoke->add_option("id", *revoke_id, "token id")->required();
  revoke->footer("Example: allot tokens revoke 3f2a9c0d41b7e865");
  revoke->callback([conn, revoke_id] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tokens/" + httplib::detail::encode_query_param(*revoke_id) + "/revoke"),
                       [](const Json& j) { std::cout << "revoked " << Str(j["id"]) << "\n"; }));
  });
  CLI::App* create = tokens->add_subcommand("create", "Issue a token for a principal, a role and a scope (shown once)");
  AddConn(create, *conn);
  create->add_option("--principal", *principal,
                     "who the token is for; for --role node, the node's name (one token per node: it acts only for that "
                     "node). '*' makes a node token that acts for any node: for demos only, never for a real fleet")
      ->required();
  create->add_option("--role", *role, "platform-admin, org-admin, team-admin, member, auditor or viewer")->required();
  create->add_option("--scope", *scope, "tenant path the role covers ('' = everything)")->required();
  create->footer("Example: allot tokens create --principal alice --role member --scope research/nlp");
  create->callback([conn, principal, role, scope] {
    Resolve(*conn);
    Json body = {{"principal", *principal}, {"role", *role}, {"scope", *scope}};
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/tokens", body.dump()), [](const Json& j) {
      std::cout << Str(j["token"]) << "\n";
    }));
  });
}

}  // namespace allot::cli
