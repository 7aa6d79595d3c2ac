// Every change of state is an Event. ClusterState::apply is the only code that mutates state;
// replaying the same events rebuilds the same state.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "fleet/fleet.h"
#include "state/job.h"
#include "tenancy/quota_tree.h"

namespace allot {

struct NodeAdded { NodeSpec spec; };
struct NodeConditionChanged { NodeId node; NodeCondition condition; };
struct TenantUpserted { TenantSpec spec; };
struct JobSubmitted { JobSpec spec; };
struct JobRejected { JobId job; std::string reason; };
// Admitted with a class and placed: resources are held from now.
struct JobPlaced { JobId job; AdmissionClass admission; std::vector<TaskPlacement> placement; };
// The job is signalled; it keeps its resources until it exits or the deadline passes.
struct JobPreemptionStarted { JobId job; PreemptKind kind; JobId preemptor; int64_t deadline_ms; };
// A preempted job has exited: resources are freed and it is requeued with the work it saved.
struct JobStopped { JobId job; int64_t saved_work_ms; };
struct JobFinished { JobId job; };
struct JobCancelled { JobId job; };
// The free instances of a MIG GPU are replaced by `layout` (held instances are kept); the new
// instances are usable from ready_ms.
// The backfill reservation: `job` is expected to start at start_ms on `tasks`; jobs started
// later must not delay it. An invalid job clears it.
struct ReservationSet { JobId job; int64_t start_ms = 0; std::vector<TaskPlacement> tasks; };
struct MigRelayout { NodeId node; int gpu = 0; MigLayout layout; int64_t ready_ms = 0; };

using EventBody = std::variant<NodeAdded, NodeConditionChanged, TenantUpserted, JobSubmitted, JobRejected,
                               JobPlaced, JobPreemptionStarted, JobStopped, JobFinished, JobCancelled, MigRelayout,
                               ReservationSet>;

struct Event {
  int64_t time_ms = 0;
  EventBody body;
};

}  // namespace allot
