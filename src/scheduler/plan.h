// A Plan: what one scheduling pass decided. The pass never mutates state; applying the plan's
// events does.
#pragma once

#include <string>
#include <vector>

#include "state/event.h"
#include "state/job.h"

namespace allot {

struct PlannedPlacement {
  JobId job;
  AdmissionClass admission = AdmissionClass::kNone;
  std::vector<TaskPlacement> tasks;
};

struct PlannedPreemption {
  JobId victim;
  JobId preemptor;
  PreemptKind kind = PreemptKind::kReclaim;
  int64_t deadline_ms = 0;
};

struct PlannedRejection {
  JobId job;
  std::string reason;
};

// Why a job is still pending after this pass. Every pending job gets exactly one.
struct PendingReason {
  JobId job;
  std::string reason;
};

struct Plan {
  int64_t now_ms = 0;
  std::vector<PlannedPlacement> placements;
  std::vector<PlannedPreemption> preemptions;
  std::vector<PlannedRejection> rejections;
  std::vector<PendingReason> pending;
  // MIG GPUs re-laid out for the pending demand (free instances replaced; held ones kept).
  std::vector<MigRelayout> relayouts;

  size_t decisions() const { return placements.size() + preemptions.size() + rejections.size() + relayouts.size(); }
  // Rejections, then preemptions, then placements, then re-layouts, each in decision order.
  std::vector<Event> ToEvents() const;
};

}  // namespace allot
