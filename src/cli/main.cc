// The `allot` command: `allot sim` (the simulator), allotd's client (login, submit, jobs,
// describe, explain, cancel, quota, nodes, tokens), `allot audit verify` and `allot ledger`.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "cli/agent_commands.h"
#include "cli/alerts_command.h"
#include "cli/audit_command.h"
#include "cli/billing_commands.h"
#include "cli/client_commands.h"
#include "cli/ledger_command.h"
#include "cli/reconcile_command.h"
#include "cli/sim_command.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"allot: share one GPU fleet among many teams"};
  app.set_version_flag("--version", std::string("allot ") + allot::kAllotVersion);
  app.require_subcommand(1);
  allot::cli::AddSimCommand(app);
  allot::cli::AddAuditCommand(app);
  allot::cli::AddLedgerCommand(app);
  allot::cli::AddClientCommands(app);
  allot::cli::AddBillingCommands(app);
  allot::cli::AddReconcileCommand(app);
  allot::cli::AddLogsCommand(app);
  allot::cli::AddAlertsCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return allot::cli::ExitCode();
}
