// Turns a parsed scenario into the initial ClusterState (fleet and tenants) and resolves every
// job's tenant and GPU model, so that all semantic errors surface before anything runs.
#pragma once

#include <functional>

#include "sim/scenario.h"
#include "state/cluster_state.h"

namespace allot {

// Applies the fleet and tenants to `state` and resolves scenario.jobs in place (tenant ids,
// GPU resources). Errors name the file, line and field.
// Resolves a job's tenant path, GPU model and MIG profile names against `state`. Errors read
// "<where>FIELD: what was wrong; expected what" (where: "jobs[name]." in a scenario, "" in the API).
Status ResolveJob(ScenarioJob& job, const ClusterState& state, const std::string& where);

// A tenant's quotas by resource name → a TenantSpec. Errors read "<where>guarantee.gpu/X: …".
Result<TenantSpec> ResolveTenant(const ScenarioTenant& tenant, const ResourceNames& names, const std::string& where);

// `on_event`, when set, sees every event applied (a journal, a test).
Status BuildInitialState(Scenario& scenario, ClusterState& state,
                         const std::function<void(const Event&)>& on_event = nullptr);

}  // namespace allot
