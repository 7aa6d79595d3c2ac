// The scheduling pass: plan(state, now) → Plan. Pure: reads state, returns decisions.
#pragma once

#include "scheduler/config.h"
#include "scheduler/plan.h"
#include "state/cluster_state.h"

namespace allot {

Plan PlanPass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config);

// Checks a plan against the state it was made from: no guaranteed job evicted by another
// tenant, no job both placed and preempted. Debug and test builds run it after every pass.
Status VerifyPlan(const ClusterState& state, const Plan& plan);

}  // namespace allot
