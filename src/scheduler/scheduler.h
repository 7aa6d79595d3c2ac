// The scheduling pass: plan(state, now) → Plan. Pure: reads state, returns decisions.
#pragma once

#include "scheduler/config.h"
#include "scheduler/failed_attempts.h"
#include "scheduler/plan.h"
#include "state/cluster_state.h"

namespace allot {

Plan PlanPass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config);
// The same plan, skipping the attempts `memo` knows fail (scheduler/failed_attempts.h); `memo`
// must be kept for this one state object, passed to every pass over it.
Plan PlanPass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config, FailedAttempts* memo);

// Checks a plan against the state it was made from: no guaranteed job evicted by another
// tenant, no job both placed and preempted. Debug and test builds run it after every pass.
Status VerifyPlan(const ClusterState& state, const Plan& plan);

}  // namespace allot
