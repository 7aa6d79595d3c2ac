// `allot reconcile [--since 24h | --from T --to T] [--tolerance 5s] [--tolerance-pct 2]`.
#include "cli/reconcile_command.h"

#include <chrono>
#include <iostream>

#include "cli/client.h"
#include "cli/sim_command.h"
#include "core/quantity.h"

namespace allot::cli {

void AddReconcileCommand(CLI::App& app) {
  auto conn = std::make_shared<Conn>();
  auto since = std::make_shared<std::string>();
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto tolerance = std::make_shared<std::string>();
  auto tolerance_pct = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("reconcile", "Scheduler vs agent-reported GPU time per allocation (job run) that "
                                                  "ended in a window; lists what differs beyond the tolerance");
  AddConn(cmd, *conn);
  cmd->add_option("--since", *since, "the window ends now and starts this long ago (e.g. 24h, 7d); default 24h");
  cmd->add_option("--from", *from, "window start: Unix seconds or RFC 3339 UTC (2026-11-01T00:00:00Z)");
  cmd->add_option("--to", *to, "window end (default now)");
  cmd->add_option("--tolerance", *tolerance, "allowed difference on every GPU the run held (default 5s)");
  cmd->add_option("--tolerance-pct", *tolerance_pct,
                  "allowed difference, percent of the scheduler's figure (default 0); listed when over both");
  cmd->footer("Exit status: 0 nothing over tolerance; 1 something is listed (over tolerance, a run no agent "
              "reported, a report with no allocation) or allotd refused; 2 bad usage; 3 allotd unreachable.\n"
              "Examples: allot reconcile --since 7d --tolerance 10s   |   allot reconcile --tolerance-pct 2 -o json");
  cmd->callback([conn, since, from, to, tolerance, tolerance_pct] {
    Resolve(*conn);
    std::string from_q = *from;
    if (!since->empty()) {
      if (!from->empty()) {
        std::cerr << "allot: reconcile: give --since or --from, not both\n";
        return SetExitCode(2);
      }
      auto d = ParseDurationMs(*since);
      if (!d || *d <= 0) {
        std::cerr << "allot: --since: '" << *since << "' is not a duration like 24h or 7d\n";
        return SetExitCode(2);
      }
      int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
      from_q = std::to_string(now_s - *d / 1000);
    }
    std::string tolerance_s;
    if (!tolerance->empty()) {
      auto d = ParseDurationMs(*tolerance);
      if (!d || *d < 0) {
        std::cerr << "allot: --tolerance: '" << *tolerance << "' is not a duration like 5s or 500ms\n";
        return SetExitCode(2);
      }
      tolerance_s = FormatSeconds(*d);
    }
    std::string q = Query({{"from", from_q}, {"to", *to}, {"tolerance_s", tolerance_s}, {"tolerance_pct", *tolerance_pct}});
    Reply r = Call(*conn, "GET", "/v1/reconciliation" + (q.empty() ? "" : "?" + q));
    int rc = Output(*conn, r, [](const Json& b) {
      std::cout << "from " << Str(b["from"]) << " to " << Str(b["to"]) << ": " << Str(b["allocations"])
                << " allocation(s) compared, " << Str(b["within"]) << " within " << Str(b["tolerance_s"]) << "s / "
                << Str(b["tolerance_pct"]) << "%\n";
      std::vector<std::vector<std::string>> rows;
      for (const Json& f : b["findings"]) {
        std::string task = f.contains("task") ? Str(f["task"]) : "-";
        rows.push_back({Str(f["finding"]), Str(f["job"]), Str(f["run"]), task,
                        Str(f["tasks_reported"]) + "/" + Str(f["tasks"]), FormatSeconds(f.value("scheduler_gpu_ms", int64_t{0})),
                        FormatSeconds(f.value("agent_gpu_ms", int64_t{0})), FormatSeconds(f.value("difference_gpu_ms", int64_t{0}))});
      }
      if (!rows.empty()) {
        PrintTable({"FINDING", "JOB", "RUN", "TASK", "REPORTED", "SCHEDULER-GPU-S", "AGENTS-GPU-S", "DIFF-GPU-S"}, rows);
      }
    });
    if (rc == 0 && r.body.is_object() && !r.body.value("findings", Json::array()).empty()) rc = 1;
    SetExitCode(rc);
  });
}

}  // namespace allot::cli
