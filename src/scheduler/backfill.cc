// EASY backfill. The first job of the pass that waits for capacity (not quota, and with no
// preemption to make room) is the reserved job: its earliest start is found by giving back,
// on the pass's view, what the active jobs hold in order of their expected end (time limit, or
// declared duration), until the job fits. Every job placed later in the pass must not delay
// it: it ends (by its own estimate) before the reservation starts, or it touches none of the
// reserved nodes, or the reserved job still fits at that time beside it.
//
// The reservation is state (ReservationSet), kept while its job stays the first blocked and
// recomputed every backfill_interval, as Slurm's backfill does: computing it costs a walk over
// the active jobs, too much for every pass of a busy fleet.
#include <algorithm>

#include "placement/gang.h"
#include "scheduler/pass.h"

namespace allot {

void Pass::Reserve(const Job& job) {
  reservation_tried_ = true;
  const auto& held = state_.reservation();
  if (held && held->job == job.id && now_ - held->made_ms < config_.backfill_interval_ms) {
    plan_.reservation = PlannedReservation{held->job, held->start_ms, held->tasks};
  } else {
    plan_.reservation = ComputeReservation(job);
    if (plan_.reservation) {
      plan_.reservation_update = ReservationSet{job.id, plan_.reservation->start_ms, plan_.reservation->tasks};
    } else if (held) {
      plan_.reservation_update = ReservationSet{};
    }
  }
  if (plan_.reservation) {
    for (const TaskPlacement& t : plan_.reservation->tasks) reserved_nodes_.insert(t.node.value());
  }
}

std::optional<PlannedReservation> Pass::ComputeReservation(const Job& job) {
  ResourceId res = job.spec.gpu_resource;
  int64_t need = 0;
  for (const TaskGroup& g : job.spec.groups) need += int64_t{g.count} * g.gpus();
  int64_t have = need > 0 ? view_.TotalFreeGpus(res) : 0;
  // Releases in end order: the state's active jobs merged with this pass's placements.
  std::vector<std::pair<int64_t, uint32_t>> mine = pass_ends_;
  std::sort(mine.begin(), mine.end());
  const auto& active = state_.active_by_end();
  auto a = active.begin();
  // The walk reads each active job and its tasks, cold (~20,000 jobs on a full fleet): they
  // are fetched ahead of it, the job kPrefetchJob entries ahead, its tasks kPrefetchTasks.
  constexpr int kPrefetchJob = 12, kPrefetchTasks = 6;
  auto job_ahead = a, tasks_ahead = a;
  auto fetch_next_job = [&] {
    if (job_ahead != active.end()) PrefetchJob(state_.job((job_ahead++)->second));
  };
  auto fetch_next_tasks = [&] {
    if (tasks_ahead == active.end()) return;
    const Job& j = state_.job((tasks_ahead++)->second);
    if (!j.placement.empty()) __builtin_prefetch(j.placement.data());
  };
  for (int i = 0; i < kPrefetchJob; ++i) fetch_next_job();
  for (int i = 0; i < kPrefetchTasks; ++i) fetch_next_tasks();
  size_t m = 0;
  std::vector<const std::vector<TaskPlacement>*> batch;  // counted, not yet given back
  FreedSinceTry freed(view_, job.spec);                  // given back since the last try
  std::optional<PlannedReservation> out;
  size_t mark = view_.Mark();
  while (a != active.end() || m < mine.size()) {
    bool from_state = m == mine.size() || (a != active.end() && a->first <= mine[m].first);
    int64_t end;
    const Job* j;
    const std::vector<TaskPlacement>* tasks;
    if (from_state) {
      fetch_next_job();
      fetch_next_tasks();
      end = std::max(now_, a->first);
      j = &state_.job(a->second);
      tasks = &j->placement;
      ++a;
    } else {
      end = mine[m].first;
      const PlannedPlacement& p = plan_.placements[mine[m].second];
      j = &state_.job(p.job);
      tasks = &p.tasks;
      ++m;
    }
    batch.push_back(tasks);
    if (j->demand.gpu_resource == res) {
      for (const TaskPlacement& t : *tasks) have += std::popcount(t.share.kind == ShareKind::kWhole ? t.gpu_mask : 0);
    }
    // Everything that ends at the same time goes back together; nothing is tried before the
    // fleet could have the GPUs in total.
    bool last = a == active.end() && m == mine.size();
    int64_t next_end = last ? INT64_MAX
                            : (m == mine.size() || (a != active.end() && a->first <= mine[m].first))
                                  ? std::max(now_, a->first)
                                  : mine[m].first;
    if (!last && (next_end == end || have < need)) continue;
    view_.GiveAll(batch);
    for (const auto* b : batch) {
      for (const TaskPlacement& t : *b) freed.Add(t);
    }
    batch.clear();
    if (!last && !freed.MayFit()) continue;
    freed.Tried();
    if (auto placed = PlaceGang(view_, job.spec)) {
      out = PlannedReservation{job.id, end, std::move(*placed)};
      break;
    }
  }
  view_.Rollback(mark);
  return out;
}

bool Pass::DelaysReservation(const Job& job, const std::vector<TaskPlacement>& tasks) {
  const PlannedReservation& r = *plan_.reservation;
  if (now_ + job.estimated_remaining_ms() <= r.start_ms) return false;  // gone by then
  bool touches = false;
  for (const TaskPlacement& t : tasks) touches |= reserved_nodes_.count(t.node.value()) > 0;
  if (!touches) return false;
  // The fleet at the reservation's start with the job holding its placement (it ends later):
  // does the reserved job still fit?
  FleetView* at = AtReservationStart(tasks);
  FleetView& v = at ? *at : view_;
  size_t mark = v.Mark();
  if (at) {
    for (const TaskPlacement& t : tasks) at->Take(t);
  } else {
    view_.GiveAll(EndingBy(r.start_ms));  // the job holds its placement in the view now
  }
  bool fits = PlaceGang(v, state_.job(r.job).spec).has_value();
  v.Rollback(mark);
  return !fits;
}

std::vector<const std::vector<TaskPlacement>*> Pass::EndingBy(int64_t t) const {
  std::vector<const std::vector<TaskPlacement>*> ending;
  for (auto it = state_.active_by_end().begin(); it != state_.active_by_end().end() && it->first <= t; ++it) {
    ending.push_back(&state_.job(it->second).placement);
  }
  for (const auto& [end, index] : pass_ends_) {
    if (end <= t) ending.push_back(&plan_.placements[index].tasks);
  }
  return ending;
}

// The view changes in a band only by placements (Commit; trials are rolled back) unless drain
// blocks are lent (PlaceLent) or a job is kept off GPUs (the view answers for that job only):
// then every check gives back on the view itself. Otherwise the fleet at the start is the view
// as it is now, less the job asking and with what ends by then given back, and stays so while
// every later placement that ends after the start is taken in it too (Commit): the same free
// GPUs, CPU and memory on every node as the view's own give-back would leave, and the view's
// answers depend on those alone.
FleetView* Pass::AtReservationStart(const std::vector<TaskPlacement>& tasks) {
  if (!drain_blocks_.empty() || !kept_off_.empty()) return nullptr;
  if (!at_start_) {
    at_start_.emplace(view_);
    for (const TaskPlacement& t : tasks) at_start_->Give(t);
    at_start_->GiveAll(EndingBy(plan_.reservation->start_ms));
  }
  return &*at_start_;
}

}  // namespace allot
