// What preemption weighs in a victim, shared by the pass and by explanations that show the order
// in which reclaim would take jobs (`allot explain --tenant`). Pure: time is a parameter.
#pragma once

#include <cstdint>
#include <vector>

#include "state/cluster_state.h"

namespace allot {

// The work a job loses if stopped at `now`: what ran since its last checkpoint (its whole run
// when it declares no checkpoint interval).
int64_t WorkLost(const Job& job, int64_t now);

// How far the job's tenant is above its guarantee of r: the largest (usage - guarantee) over its
// ancestors that set one; with no guarantee on the path, its top-level tenant's usage.
int64_t ExcessOverGuarantee(const QuotaTree& tree, const Job& job, ResourceId r);

// The burstable running jobs that reclaim for a guaranteed job asking for GPUs of `gpu` (kCpu:
// no GPU) would take, in reclaim's order: 1. tenant furthest above its guarantee, 2. lowest
// priority, 3. least work lost, 4. newest start, 5. job id. A GPU ask only takes jobs holding
// that model.
std::vector<JobId> ReclaimOrder(const ClusterState& state, int64_t now, ResourceId gpu);

}  // namespace allot
