// The `allot` command. Today: `allot sim`, the simulator driver. The daemon's client commands
// (submit, jobs, quota, …) join it when allotd exists.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "cli/audit_command.h"
#include "cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"allot: share one GPU fleet among many teams"};
  app.require_subcommand(1);
  allot::cli::AddSimCommand(app);
  allot::cli::AddAuditCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return allot::cli::ExitCode();
}
