#include "scheduler/plan.h"

namespace allot {

std::vector<Event> Plan::ToEvents() const {
  std::vector<Event> out;
  out.reserve(decisions());
  for (const PlannedRejection& r : rejections) out.push_back({now_ms, JobRejected{r.job, r.reason}});
  for (const PlannedRejection& f : failures) out.push_back({now_ms, JobFailed{f.job, f.reason}});
  for (const PlannedPreemption& p : preemptions) {
    out.push_back({now_ms, JobPreemptionStarted{p.victim, p.kind, p.preemptor, p.deadline_ms}});
  }
  for (const PlannedPlacement& p : placements) out.push_back({now_ms, JobPlaced{p.job, p.admission, p.tasks}});
  for (const MigRelayout& r : relayouts) out.push_back({now_ms, r});
  if (reservation_update) out.push_back({now_ms, *reservation_update});
  for (const EventBody& n : notices) out.push_back({now_ms, n});
  return out;
}

}  // namespace allot
