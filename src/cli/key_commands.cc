// `allot keys` (list), `allot keys add --tenant T FILE|-`, `allot keys remove ID`: a tenant's SSH
// public keys, authorised on the nodes of its dedicated reservations in their windows (issue 16).
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "cli/client.h"
#include "cli/client_commands.h"
#include "cli/job_view.h"
#include "cli/sim_command.h"

namespace allot::cli {
namespace {

void PrintKey(const Json& k) {
  std::cout << "key " << Str(k["id"]) << " (" << Str(k["tenant"]) << "): " << Str(k["type"]) << " " << Str(k["fingerprint"])
            << (k.value("comment", "").empty() ? "" : " " + Str(k["comment"])) << "\n";
}

}  // namespace

void AddKeyCommands(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  CLI::App* cmd = app.add_subcommand("keys", "A tenant's SSH public keys: list, add, remove");
  AddConn(cmd, *conn);
  auto tenant = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  cmd->add_option("--tenant", *tenant, "only this tenant's keys");
  cmd->add_flag("--all", *all, "removed keys too");
  cmd->footer("Examples: allot keys   |   allot keys add --tenant research/nlp ~/.ssh/id_ed25519.pub   |   allot keys remove 3\n"
              "Keys are authorised on the nodes of the tenant's dedicated reservations (--orchestrator) in their windows.");
  cmd->callback([conn, cmd, tenant, all] {
    if (!cmd->get_subcommands().empty()) return;
    Resolve(*conn);
    std::string q = Query({{"tenant", *tenant}, {"all", *all ? "true" : ""}});
    SetExitCode(Output(*conn, Call(*conn, "GET", "/v1/keys" + (q.empty() ? "" : "?" + q)), [](const Json& b) {
      const int64_t now = NowMs();
      std::vector<std::vector<std::string>> rows;
      for (const Json& k : b["keys"]) {
        rows.push_back({Str(k["id"]), Str(k["tenant"]), Str(k["type"]), Str(k["fingerprint"]), k.value("comment", ""),
                        ShownTime(k["added"], now) + (k.contains("removed") ? " (removed)" : "")});
      }
      PrintTable({"ID", "TENANT", "TYPE", "FINGERPRINT", "COMMENT", "ADDED"}, rows);
    }));
  });
  auto file = std::make_shared<std::string>();
  CLI::App* add = cmd->add_subcommand("add", "Register a public key (one OpenSSH line) for a tenant");
  AddConn(add, *conn);
  add->add_option("--tenant", *tenant, "the tenant the key logs in for")->required();
  add->add_option("file", *file, "the .pub file, or - for standard input")->required();
  add->callback([conn, tenant, file] {
    Resolve(*conn);
    std::string line;
    if (*file == "-") {
      line.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream in(*file);
      if (!in) {
        std::cerr << "allot: keys add: cannot read " << *file << "\n";
        return SetExitCode(2);
      }
      line.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    Json body = {{"tenant", *tenant}, {"key", line}};
    SetExitCode(Output(*conn, Call(*conn, "POST", "/v1/keys", body.dump()), PrintKey));
  });
  auto id = std::make_shared<std::string>();
  CLI::App* remove = cmd->add_subcommand("remove", "Remove a registered key: no later window authorises it");
  AddConn(remove, *conn);
  remove->add_option("id", *id, "the key's id (allot keys)")->required();
  remove->callback([conn, id] {
    Resolve(*conn);
    SetExitCode(Output(*conn, Call(*conn, "DELETE", "/v1/keys/" + *id), [](const Json& k) {
      std::cout << "key " << Str(k["id"]) << " " << Str(k["fingerprint"]) << " removed\n";
    }));
  });
}

}  // namespace allot::cli
