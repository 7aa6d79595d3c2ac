// The metering what-if: a simulation with a Meter on its events, priced by a rate card, so a
// quota or policy change shows its money effect before rollout. The simulated horizon
// [0, end) is the period of every org ("sim"), in each org's billing mode.
#pragma once

#include <vector>

#include "metering/ledger.h"
#include "metering/rate_card.h"
#include "sim/simulator.h"

namespace allot {

struct WhatIfRun {
  SimRun sim;                     // sim.result.cost is set
  std::vector<LedgerLine> lines;  // what a ledger of the run would hold, in ledger order
};

Result<WhatIfRun> RunWhatIf(Scenario scenario, SimOptions options, std::optional<uint64_t> seed, const RateCard& card);
Result<WhatIfRun> RunWhatIfFile(const std::string& path, SimOptions options, std::optional<uint64_t> seed,
                                const RateCard& card);

}  // namespace allot
