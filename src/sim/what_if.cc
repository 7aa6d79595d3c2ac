#include "sim/what_if.h"

#include "metering/meter.h"
#include "metering/rating.h"
#include "spec/scenario.h"

namespace allot {

Result<WhatIfRun> RunWhatIf(Scenario scenario, SimOptions options, std::optional<uint64_t> seed, const RateCard& card) {
  Meter meter;
  auto chained = options.on_applied;
  options.on_applied = [&](const Event& e, const ClusterState& st) {
    meter.Observe(e, st);
    if (chained) chained(e, st);
  };
  auto run = RunScenario(std::move(scenario), options, seed);
  if (!run) return Err(run.error());
  WhatIfRun out{std::move(*run), {}};
  const ClusterState& st = out.sim.state;
  const int64_t end = out.sim.result.end_ms;
  std::vector<OrgPeriod> periods;
  for (const Tenant& t : st.tenants().tenants()) {
    if (t.depth != 1 || t.removed) continue;
    periods.push_back({t.id, Period{"sim", 0, end}, card.ModeOf(t.path)});
  }
  auto lines = Rate({st.tenants(), st.resource_names(), card, &st.billing().floor_changes(), &st.reservations()}, periods, meter.AllAt(end));
  if (!lines) return Err(lines.error());
  out.lines = std::move(*lines);
  out.sim.result.cost = SimCost{card.currency, BillingModeName(card.mode), CostBySubtree(st.tenants(), out.lines)};
  return out;
}

Result<WhatIfRun> RunWhatIfFile(const std::string& path, SimOptions options, std::optional<uint64_t> seed,
                                const RateCard& card) {
  auto sc = LoadScenario(path);
  if (!sc) return Err(sc.error());
  return RunWhatIf(std::move(*sc), std::move(options), seed, card);
}

}  // namespace allot
