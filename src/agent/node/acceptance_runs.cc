#include "agent/node/acceptance_runs.h"

#include <chrono>

namespace allot {

AcceptanceRuns::~AcceptanceRuns() = default;  // futures of std::async wait for their commands

void AcceptanceRuns::Reconcile(const std::vector<AcceptanceAsk>& asks, int64_t now) {
  std::map<std::string, const AcceptanceAsk*> asked;
  for (const AcceptanceAsk& a : asks) asked[a.key()] = &a;
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (asked.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.commands.valid()) dropped_.push_back(std::move(it->second.commands));
    it = runs_.erase(it);
  }
  std::erase_if(dropped_, [](auto& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  for (const auto& [key, ask] : asked) {
    if (runs_.count(key)) continue;
    Run& run = runs_[key];
    run.ask = *ask;
    run.report = {ask->reservation_id, ask->window, "running", {}, 0};
    HealthOptions h = options_.health;
    h.commands.insert(h.commands.end(), options_.commands.begin(), options_.commands.end());
    run.commands = std::async(std::launch::async, [h] { return CommandChecks(h); });
    if (options_.log) options_.log("acceptance for reservation '" + ask->reservation + "' window " + std::to_string(ask->window) + ": running");
  }
  for (auto& [key, run] : runs_) {
    if (!run.commands.valid() || run.commands.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    std::vector<HealthCheck> checks = options_.nvml_checks ? options_.nvml_checks() : std::vector<HealthCheck>{};
    for (HealthCheck& c : run.commands.get()) checks.push_back(std::move(c));
    for (const HealthCheck& c : checks) {
      if (!c.ok) run.report.failures.push_back({c.name, c.detail});
    }
    run.report.state = run.report.failures.empty() ? "passed" : "failed";
    run.report.at_ms = now;
    if (options_.log) {
      options_.log("acceptance for reservation '" + run.ask.reservation + "' window " + std::to_string(run.ask.window) + ": " +
                   (run.report.failures.empty() ? "passed" : "failed: " + run.report.Why()));
    }
  }
}

std::vector<AcceptanceReport> AcceptanceRuns::Reports() const {
  std::vector<AcceptanceReport> out;
  for (const auto& [key, run] : runs_) out.push_back(run.report);
  return out;
}

}  // namespace allot
