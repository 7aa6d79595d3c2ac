// A Plan: what one scheduling pass decided. The pass never mutates state; applying the plan's
// events does.
#pragma once

#include <optional>
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

// Why a job is still pending after this pass. Every pending job gets exactly one. The text is
// Plan::reasons[why]: jobs that wait for the same thing share one (a deep backlog holds
// ~100,000 waiting jobs, most of them for a handful of reasons).
struct PendingReason {
  JobId job;
  uint32_t why = 0;
};

// EASY backfill: the highest job blocked for capacity, its earliest start, and where it
// would run then. Later jobs started in the same pass do not delay it.
struct PlannedReservation {
  JobId job;
  int64_t start_ms = 0;
  std::vector<TaskPlacement> tasks;
};

struct Plan {
  int64_t now_ms = 0;
  std::vector<PlannedPlacement> placements;
  std::vector<PlannedPreemption> preemptions;
  std::vector<PlannedRejection> rejections;
  // Pending jobs failed because a dependency can never be met (state/dependency.h).
  std::vector<PlannedRejection> failures;
  std::vector<PendingReason> pending;
  std::vector<std::string> reasons;  // the texts of `pending`
  // MIG GPUs re-laid out for the pending demand (free instances replaced; held ones kept).
  std::vector<MigRelayout> relayouts;
  std::optional<PlannedReservation> reservation;  // in force after this pass
  std::optional<ReservationSet> reservation_update;  // a new reservation, or a clear
  // Events the pass's gate asks for (budget warnings), journaled last.
  std::vector<EventBody> notices;

  const std::string& Why(const PendingReason& p) const { return reasons[p.why]; }

  size_t decisions() const {
    return placements.size() + preemptions.size() + rejections.size() + failures.size() + relayouts.size() + (reservation_update ? 1 : 0) +
           notices.size();
  }
  // Rejections, then failures, then preemptions, then placements, then re-layouts, then the reservation, then
  // the notices.
  std::vector<Event> ToEvents() const;
};

}  // namespace allot
