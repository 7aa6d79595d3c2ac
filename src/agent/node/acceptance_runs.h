// A booked node's acceptance runs (issue 16): when allotd asks (the assignments' "acceptance",
// wire/acceptance_messages.h), the agent runs its health checks afresh — the configured --check
// commands and, as it settles, a new NVML sample's checks — and the operator's diagnostics
// (--acceptance-command), and reports passed or the failing checks with their messages in its
// heartbeats. Each (reservation, window) runs once while it is asked; an ask that goes away drops
// its result, so asking again runs it again.
//
// The commands run on a thread of their own per run (they may take minutes: a full diagnostic), so
// the agent's loop keeps heartbeating. Not thread-safe: the agent's loop calls it.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "agent/node/health.h"
#include "wire/acceptance_messages.h"

namespace allot {

struct AcceptanceRunOptions {
  HealthOptions health;               // the node's checks (its --check commands, their timeout)
  std::vector<std::string> commands;  // --acceptance-command: run by /bin/sh -c with health's timeout
  // The built-in checks over a fresh NVML sample, taken on the caller's thread as a run settles
  // (none without NVML).
  std::function<std::vector<HealthCheck>()> nvml_checks;
  std::function<void(const std::string&)> log;
};

class AcceptanceRuns {
 public:
  explicit AcceptanceRuns(AcceptanceRunOptions options) : options_(std::move(options)) {}
  ~AcceptanceRuns();
  // Starts a run for each ask not yet run, settles the runs whose commands are done (at `now`, the
  // agent's clock), and drops the runs no longer asked.
  void Reconcile(const std::vector<AcceptanceAsk>& asks, int64_t now);
  // Each asked run: running, passed, or failed with the failing checks.
  std::vector<AcceptanceReport> Reports() const;

 private:
  struct Run {
    AcceptanceAsk ask;
    AcceptanceReport report;
    std::future<std::vector<HealthCheck>> commands;  // valid while running
  };
  AcceptanceRunOptions options_;
  std::map<std::string, Run> runs_;  // by AcceptanceAsk::key()
  std::vector<std::future<std::vector<HealthCheck>>> dropped_;  // commands of runs no longer asked, still going
};

}  // namespace allot
