// Usage intervals from the jobs' runs as the state keeps them: each ended run with its class
// (Job::ended_runs) and the open or last run. What the daemon rates at a period close and what
// budgets count, so that a restart — snapshot or replay — sees the intervals the run saw, with
// no Meter state to rebuild and nothing to double-count.
#pragma once

#include <vector>

#include "metering/interval.h"
#include "state/cluster_state.h"

namespace allot {

// One interval per run overlapping [from_ms, to_ms), clipped to it, summed over the job's tasks
// (node: the first task's for the current run, none for an ended one — rating groups by tenant,
// resource, class and topology, not node). A run still open counts up to now_ms.
std::vector<UsageInterval> IntervalsFromState(const ClusterState& state, int64_t from_ms, int64_t to_ms,
                                              int64_t now_ms);

UsageClass ClassOf(const Job& job, AdmissionClass run_admission);

// One run of `job` from start_ms to end_ms admitted as `a`, unclipped, on `node` (or none).
UsageInterval RunInterval(const Job& job, int64_t start_ms, int64_t end_ms, AdmissionClass a, NodeId node = NodeId());

}  // namespace allot
