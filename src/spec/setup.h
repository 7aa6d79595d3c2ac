// Turns a parsed scenario into the initial ClusterState (fleet and tenants) and resolves every
// job's tenant and GPU model, so that all semantic errors surface before anything runs.
#pragma once

#include <functional>

#include "spec/scenario.h"
#include "state/cluster_state.h"

namespace allot {

// Applies the fleet and tenants to `state` and resolves scenario.jobs in place (tenant ids,
// GPU resources). Errors name the file, line and field.
// `on_event`, when set, sees every event applied (a journal, a test).
Status BuildInitialState(Scenario& scenario, ClusterState& state,
                         const std::function<void(const Event&)>& on_event = nullptr);

}  // namespace allot
