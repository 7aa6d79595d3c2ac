#include "cli/sim_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>

#include "core/quantity.h"
#include "core/strings.h"
#include "sim/openb_compare.h"
#include "sim/openb_replay.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/what_if.h"
#include "billing/billing_setup.h"
#include "billing/sodium_crypto.h"

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
  std::string jobs;
  bool load_only = false;
  bool retry_every_pass = false;
  // openb replay
  std::string openb;
  std::string openb_replay;
  double openb_mps = -1;
  std::string workload = "default";
  std::string policy = "allot";
  std::string compare;
  std::string seeds;
  double inflate = 1.3;
  std::string csv;
  std::string plot;
  // metering what-if
  std::string rates;
  std::string ledger;
  std::string ledger_key;
};

int g_exit = 0;

bool WriteFile(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  write(out);
  out.close();
  if (!out) std::cerr << "allot sim: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

int RunOpenbCommand(const SimArgs& a, const CLI::App& cmd) {
  OpenbCompareOptions o;
  o.dir = a.openb;
  o.workload = a.workload;
  o.inflate = a.inflate;
  o.policies = Split(a.compare.empty() ? a.policy : a.compare, ',');
  if (!a.seeds.empty()) {
    auto seeds = ParseSeeds(a.seeds);
    if (!seeds) {
      std::cerr << "allot sim: " << seeds.error().message() << "\n";
      return 2;
    }
    o.seeds = *seeds;
  } else {
    o.seeds = {cmd.count("--seed") ? a.seed : 42};
  }
  auto c = RunOpenbCompare(o);
  if (!c) {
    std::cerr << "allot sim: " << c.error().message() << "\n";
    return 2;
  }
  if (!a.quiet) PrintOpenbTable(*c, std::cout);
  if (!a.json.empty() && !WriteFile(a.json, [&](std::ostream& out) { WriteOpenbJson(*c, out); })) return 1;
  std::string csv = a.csv, plot = a.plot;
  if (!a.compare.empty()) {
    if (csv.empty()) csv = "openb-" + a.workload + "-curves.csv";
    if (plot.empty()) plot = "openb-" + a.workload + "-curves.svg";
  }
  if (!csv.empty()) {
    if (!WriteFile(csv, [&](std::ostream& out) { WriteOpenbCsv(*c, out); })) return 1;
    if (!a.quiet) std::cout << "curves: " << csv << "\n";
  }
  if (!plot.empty()) {
    if (!WriteFile(plot, [&](std::ostream& out) { WriteOpenbSvg(*c, out); })) return 1;
    if (!a.quiet) std::cout << "plot: " << plot << "\n";
  }
  return 0;
}

// The pod list through the full pass with its creation and deletion times (sim/openb_replay.h).
int RunOpenbReplayCommand(const SimArgs& a, const CLI::App& cmd) {
  const std::string nodes_path = a.openb_replay + "/openb_node_list_gpu_node.csv";
  const std::string pods_path = a.openb_replay + "/openb_pod_list_" + a.workload + ".csv";
  auto nodes = ReadOpenbNodes(nodes_path);
  if (!nodes) {
    std::cerr << "allot sim: " << nodes.error().message() << "\n";
    return 2;
  }
  auto pods = ReadOpenbPods(pods_path);
  if (!pods) {
    std::cerr << "allot sim: " << pods.error().message() << "\n";
    return 2;
  }
  OpenbReplayOptions o;
  o.mps_fraction = a.openb_mps;
  if (cmd.count("--policy")) o.share_policy = a.policy;
  OpenbReplayInput input;
  auto sc = OpenbReplayScenario(*nodes, *pods, o, input);
  if (!sc) {
    std::cerr << "allot sim: " << sc.error().message() << "\n";
    return 2;
  }
  OpenbReplayMeter meter;
  SimOptions opt;
#ifdef ALLOT_VERIFY_INVARIANTS
  opt.verify = true;
#endif
  opt.verify |= a.verify;
  opt.on_applied = [&meter](const Event& e, const ClusterState& st) { meter.Observe(e, st); };
  auto run = RunScenario(std::move(*sc), opt, std::nullopt);
  if (!run) {
    std::cerr << "allot sim: " << run.error().message() << "\n";
    return run.error().code() == Code::kInternal ? 1 : 2;
  }
  if (!a.json.empty() && !WriteFile(a.json, [&](std::ostream& out) { WriteReportJson(*run, {.timing = !a.no_timing}, out); })) return 1;
  if (!a.quiet) PrintOpenbReplay(input, meter.Summarize(*run), run->result.fleet_gpus, std::cout);
  return 0;
}

// The what-if's lines as a ledger with the period "sim" closed, signed with --ledger-key (a
// file holding a 64-hex-digit ed25519 seed) or a fresh key whose public half is in the header.
int WriteLedger(const SimArgs& a, const RateCard& card, const std::vector<LedgerLine>& lines) {
  auto crypto = SodiumLedgerCrypto::Generate();
  if (!a.ledger_key.empty()) {
    std::ifstream in(a.ledger_key);
    std::string seed;
    in >> seed;
    auto c = SodiumLedgerCrypto::FromSeed(seed);
    if (!in || !c) {
      std::cerr << "allot sim: --ledger-key " << a.ledger_key << ": "
                << (in ? c.error().message() : std::string("cannot read the file")) << "\n";
      return 1;
    }
    crypto = std::move(*c);
  }
  Ledger ledger(crypto);
  for (const LedgerLine& l : lines) ledger.Append(l);
  if (auto c = ledger.Close("sim", card.currency); !c) {
    std::cerr << "allot sim: --ledger: " << c.error().message() << "\n";
    return 1;
  }
  if (!WriteFile(a.ledger, [&](std::ostream& out) { out << ledger.Encode(); })) return 1;
  return 0;
}

int RunSim(const SimArgs& a, const CLI::App& cmd) {
  if (!a.openb.empty()) return RunOpenbCommand(a, cmd);
  if (!a.openb_replay.empty()) return RunOpenbReplayCommand(a, cmd);
  if (a.scenario.empty()) {
    std::cerr << "allot sim: a SCENARIO file, --openb DIR or --openb-replay DIR is required\n";
    return 2;
  }
  SimOptions opt;
#ifdef ALLOT_VERIFY_INVARIANTS
  opt.verify = true;
#endif
  opt.verify |= a.verify;
  opt.jobs_file = a.jobs;
  opt.load_only = a.load_only;
  opt.remember_failed_attempts = !a.retry_every_pass;
  if (a.load_only && (!a.rates.empty() || !a.json.empty())) {
    std::cerr << "allot sim: --load-only runs nothing; expected it without --rates and --json\n";
    return 2;
  }
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
  std::optional<WhatIfRun> what_if;
  if (!a.rates.empty()) {
    // The card and its zones as allotd loads them: budgets are held as allotd would hold them.
    auto billing = LoadBillingSetup(a.rates);
    if (!billing) {
      std::cerr << "allot sim: --rates: " << billing.error().message() << "\n";
      return 2;
    }
    opt.billing = *billing;
    const RateCard& card = (*billing)->card;
    auto w = RunWhatIfFile(a.scenario, opt, seed, card);
    if (!w) {
      std::cerr << "allot sim: " << w.error().message() << "\n";
      return w.error().code() == Code::kInternal ? 1 : 2;
    }
    if (!a.ledger.empty() && WriteLedger(a, card, w->lines) != 0) return 1;
    what_if = std::move(*w);
  } else if (!a.ledger.empty()) {
    std::cerr << "allot sim: --ledger needs --rates\n";
    return 2;
  }
  auto run = what_if ? Result<SimRun>(std::move(what_if->sim)) : RunScenarioFile(a.scenario, opt, seed);
  if (!run) {
    std::cerr << "allot sim: " << run.error().message() << "\n";
    return run.error().code() == Code::kInternal ? 1 : 2;
  }
  if (a.load_only) {
    // What loading cost, alone (bench/trace-load measures it with the peak RSS).
    std::printf("loaded %lld jobs, %d nodes, %d tenants in %.2f s\n", static_cast<long long>(run->result.jobs_loaded),
                static_cast<int>(run->state.fleet().nodes().size()), static_cast<int>(run->state.tenants().size()) - 1,
                run->result.load_seconds);
    return 0;
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
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (see docs/scenario.md)");
  cmd->add_option("--json", args->json, "Write the JSON report to this file");
  cmd->add_option("--until", args->until, "Stop at this virtual time (e.g. 6h, 30d)");
  cmd->add_option("--seed", args->seed, "Seed for the scenario's generate: block");
  cmd->add_flag("--no-timing", args->no_timing, "Leave wall-clock timing out of the JSON (byte-identical reports)");
  cmd->add_flag("--verify", args->verify, "Check state invariants after every pass");
  cmd->add_option("--jobs", args->jobs, "Read the jobs from this JSON Lines (.jsonl) or CSV (.csv) file as well, in place of the scenario's jobs_file");
  cmd->add_flag("--retry-every-pass", args->retry_every_pass,
                "Try every waiting gang in every pass, without the memo of failed attempts (the same decisions, slower)");
  cmd->add_flag("--load-only", args->load_only, "Read the scenario and its jobs, build the state, print the time it took, and stop before the first pass");
  cmd->add_flag("-q,--quiet", args->quiet, "Print no summary");
  cmd->add_option("--rates", args->rates, "Price each tenant's usage with this rate card (YAML) and hold jobs over the scenario's budgets (docs/scenario.md)");
  cmd->add_option("--ledger", args->ledger, "With --rates: write the run's signed ledger to this file");
  cmd->add_option("--ledger-key", args->ledger_key, "With --ledger: file holding the ed25519 seed (64 hex digits)");
  cmd->add_option("--openb", args->openb, "Replay the openb fragmentation experiment from this trace folder");
  cmd->add_option("--openb-replay", args->openb_replay, "Replay an openb pod list with its creation and deletion times through the full pass, on the openb node list in this folder");
  cmd->add_option("--openb-mps", args->openb_mps, "openb replay: share of the nodes that are MPS pools (default: the share pods' part of the GPU demand)");
  cmd->add_option("--workload", args->workload, "openb pod list: openb_pod_list_NAME.csv (default: default)");
  cmd->add_option("--policy", args->policy, "openb placement policy: random, dotprod, gpu-clustering, gpu-packing, bestfit, fgd, allot (default)");
  cmd->add_option("--compare", args->compare, "openb: comma-separated policies to run side by side");
  cmd->add_option("--seeds", args->seeds, "openb: seeds, FROM-TO or a comma list (default: --seed or 42)");
  cmd->add_option("--inflate", args->inflate, "openb: arrived demand target as a multiple of GPU capacity (default 1.3)");
  cmd->add_option("--csv", args->csv, "openb: write the mean curves as CSV");
  cmd->add_option("--plot", args->plot, "openb: write the mean curves as an SVG plot");
  cmd->callback([args, cmd] { g_exit = RunSim(*args, *cmd); });
}

int ExitCode() { return g_exit; }
void SetExitCode(int code) { g_exit = code; }

}  // namespace allot::cli
