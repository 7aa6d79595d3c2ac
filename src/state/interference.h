// The noisy-neighbour responses in force (docs/noisy-neighbour.md): what allotd did about a
// task degrading a co-tenant's latency on a shared GPU, until a quiet period lifts it. Journaled
// as InterferenceActed / InterferenceCleared; kept in snapshots; the agents read throttles from
// their assignments. In order of cost:
//   kThrottle  the neighbour's MPS active-thread percentage is lowered while in force;
//   kMove      the neighbour is signalled to checkpoint and requeued (PreemptKind::kInterference)
//              and, while in force, is not placed on that GPU again;
//   kHarden    the victim is signalled to checkpoint and requeued with its task group's share
//              replaced by `hardened` (a MIG instance or a whole GPU); lifted, its own share
//              comes back at its next requeue (a running job is not restarted to undo it).
#pragma once

#include <cstdint>
#include <string>

#include "core/ids.h"
#include "state/job.h"

namespace allot {

enum class InterferenceAction : uint8_t {
  kThrottle,  // MPS: the neighbour's tenant's MPS server runs at `percent` active threads
  kMove,      // the neighbour is moved off the GPU at its next checkpoint
  kHarden,    // the victim is moved to a MIG instance or a whole GPU
};
inline constexpr InterferenceAction kLastInterferenceAction = InterferenceAction::kHarden;
const char* InterferenceActionName(InterferenceAction a);

struct InterferenceResponse {
  NodeId node;
  int32_t gpu = 0;                  // the node's GPU index
  JobId victim;
  int32_t victim_task = 0;
  JobId neighbour;
  int32_t neighbour_task = 0;
  int32_t neighbour_run = 0;        // the allocation epoch it applies to: a requeued run is not throttled
  InterferenceAction action = InterferenceAction::kThrottle;
  int32_t percent = 0;              // throttle: active thread percentage in force
  int32_t neighbour_percent = 0;    // throttle: the neighbour's own share, restored when lifted
  int64_t baseline_p99_us = 0;      // the victim's p99 before the onset
  int64_t p99_us = 0;               // its p99 when allotd acted
  int32_t neighbour_sm_percent = 0; // the neighbour's utilization when allotd acted
  int32_t neighbour_memory_percent = 0;
  int64_t since_ms = 0;             // set by the state: when it was journaled
  // kHarden (event format 11): the victim's task group and what it holds from its next start.
  int32_t victim_group = -1;
  TaskGroup hardened;
  bool operator==(const InterferenceResponse&) const = default;
  // "throttle of task 0 of job 12 (the neighbour) to 20% MPS active threads … on GPU 1: task 0
  // of job 9 (the victim) had p99 30 ms against its baseline 10 ms while …"
  std::string Describe() const;
};

}  // namespace allot
