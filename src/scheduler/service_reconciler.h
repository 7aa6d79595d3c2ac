// The service reconciler: what to do now so that each service has the replicas it wants
// (docs/services.md). Pure: the state and the time in, events out; allotd's writer and the
// simulator apply them before each scheduling pass, so the pass places new replicas at once.
//
//   1. A replica whose job failed or exited is restarted (the same job, queued again) once its
//      back-off has passed (RestartBackoffMs); one of an older revision is replaced instead.
//   2. A replica whose job someone cancelled is unlinked (and replaced by step 4).
//   3. Too many replicas: the unready first, older revisions first, then the highest slot.
//   4. A rolling update: replicas of older revisions are removed while at least
//      desired - max_unavailable stay running, and new ones added up to desired + max_surge.
//   5. Too few: new replicas of the current revision, each named NAME-r<slot> and given a port.
#pragma once

#include <cstdint>
#include <vector>

#include "state/cluster_state.h"

namespace allot {

struct ServiceActions {
  std::vector<EventBody> events;  // to apply in order, at `now`
  int64_t wake_ms = -1;           // when something is next due (a back-off ending); -1: nothing
};

ServiceActions ReconcileServices(const ClusterState& state, int64_t now);

// What a replica's job is doing, as GET /v1/services and the CLI say it: "running",
// "starting" (waiting to be placed), "crash-loop" (failed, waiting for its back-off),
// "restarting" (failed, back-off over), "exiting" (preempted, being stopped), "unschedulable".
const char* ReplicaStateName(const Job& job);
// When a replica whose job ended is restarted (its back-off from the end), or -1.
int64_t RestartAtMs(const Job& job, const ServiceReplica& replica);

}  // namespace allot
