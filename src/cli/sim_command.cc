#include "cli/sim_command.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "core/quantity.h"
#include "sim/report.h"
#include "sim/simulator.h"

namespace allot::cli {
namespace {

struct SimArgs {
  std::string scenario;
  std::string json;
  std::string until;
  uint64_t seed = 0;
  bool no_timing = false;
  bool quiet = false;
  bool verify = false;
};

int g_exit = 0;

int RunSim(const SimArgs& a, const CLI::App& cmd) {
  SimOptions opt;
#ifdef ALLOT_VERIFY_INVARIANTS
  opt.verify = true;
#endif
  opt.verify |= a.verify;
  if (!a.until.empty()) {
    auto u = ParseDurationMs(a.until);
    if (!u) {
      std::cerr << "allot sim: --until: " << u.error().message() << "\n";
      return 2;
    }
    opt.until_ms = *u;
  }
  std::optional<uint64_t> seed;
  if (cmd.count("--seed")) seed = a.seed;
  auto run = RunScenarioFile(a.scenario, opt, seed);
  if (!run) {
    std::cerr << "allot sim: " << run.error().message() << "\n";
    return run.error().code() == Code::kInternal ? 1 : 2;
  }
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    WriteReportJson(*run, {.timing = !a.no_timing}, out);
    if (!out) {
      std::cerr << "allot sim: --json: cannot write " << a.json << "\n";
      return 1;
    }
  }
  if (!a.quiet) PrintSummary(*run, std::cout);
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = app.add_subcommand("sim", "Run the scheduler in virtual time over a scenario and report");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (see docs/scenario.md)")->required();
  cmd->add_option("--json", args->json, "Write the JSON report to this file");
  cmd->add_option("--until", args->until, "Stop at this virtual time (e.g. 6h, 30d)");
  cmd->add_option("--seed", args->seed, "Seed for the scenario's generate: block");
  cmd->add_flag("--no-timing", args->no_timing, "Leave wall-clock timing out of the JSON (byte-identical reports)");
  cmd->add_flag("--verify", args->verify, "Check state invariants after every pass");
  cmd->add_flag("-q,--quiet", args->quiet, "Print no summary");
  cmd->callback([args, cmd] { g_exit = RunSim(*args, *cmd); });
}

int ExitCode() { return g_exit; }

}  // namespace allot::cli
