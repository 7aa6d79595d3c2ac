// Reservations of capacity in a pass (issue 16). A confirmed reservation holds whole GPUs on
// named nodes for each of its windows (state/reservation.h); the pass honours the holds:
//
//   before a window  its capacity is lent: any job may use it, but from the window's drain lead
//                    time (drain_before; by default the longest grace of the jobs on its nodes)
//                    a job is placed on it only if it is expected to end by the window's start;
//   in the window    jobs that name the reservation go first, ahead of the queue, and only onto
//                    its holds; lent work in their way is reclaimed through the normal graceful
//                    preemption (kReservation: signal, checkpoint, requeue). What they do not use
//                    stays lent;
//   at its end       its jobs still running are stopped with their grace (kWindowEnd) and wait
//                    for the next window, or are rejected when none is left.
#include <algorithm>
#include <bit>
#include <numeric>

#include "core/calendar.h"
#include "core/quantity.h"
#include "placement/gang.h"
#include "scheduler/pass.h"

namespace allot {
namespace {

// How far ahead a window's default drain lead time is looked for: a job's grace is at most a day
// as every reader takes it (spec/field_limits.h).
constexpr int64_t kDefaultLeadLookaheadMs = int64_t{24} * 3600 * 1000;

}  // namespace

// 0. Running jobs whose reservation's window has ended (or that was cancelled): signalled with
//    their grace; requeued, they wait for the next window.
void Pass::StopEndedReservedJobs() {
  for (JobId id : state_.reserved_running()) {
    const Job& j = state_.job(id);
    ReservationId rid = state_.FindReservation(j.spec.tenant, j.spec.reservation);
    if (rid.valid()) {
      const ReservationSpec& spec = state_.reservations()[rid.value()].spec;
      size_t i = spec.CurrentWindow(now_);
      if (i < spec.windows.size() && spec.windows[i].start_ms <= now_) continue;
    }
    plan_.preemptions.push_back({id, id, PreemptKind::kWindowEnd, now_ + j.spec.grace_ms});
    claimed_.insert(id.value());
  }
}

// 1b. Jobs that name a reservation, in queue order, before the bands.
void Pass::PlaceReservedJobs() {
  std::sort(reserved_pending_.begin(), reserved_pending_.end(), [&](JobId a, JobId b) {
    const Job &x = state_.job(a), &y = state_.job(b);
    return x.queued_ms != y.queued_ms ? x.queued_ms < y.queued_ms : a < b;
  });
  for (JobId id : reserved_pending_) TryReservedJob(state_.job(id));
}

// 0b. Running jobs of untrusted tenants on nodes whose agent cannot confine tasks in every way
//     (isolation=partial: the node turned partial under them, or their tenant was made
//     untrusted since they started), guaranteed or reserved alike: signalled with their grace;
//     requeued, they go only to nodes that confine (TryJob, TryReservedJob keep them off).
void Pass::StopUnconfinedJobs() {
  const Fleet& fleet = state_.fleet();
  if (fleet.partial_isolation_nodes() == 0) return;
  const Bitset& partial = fleet.partial_isolation();
  for (size_t w = 0; w < partial.words(); ++w) {
    for (uint64_t bits = partial.word(w); bits != 0; bits &= bits - 1) {
      const NodeId node(static_cast<uint32_t>(w * 64 + std::countr_zero(bits)));
      for (JobId id : state_.JobsOn(node)) {
        const Job& j = state_.job(id);
        if (j.state != JobState::kRunning || claimed_.count(id.value()) || !state_.Untrusted(j.spec.tenant)) continue;
        plan_.preemptions.push_back({id, id, PreemptKind::kIsolation, now_ + j.spec.grace_ms});
        claimed_.insert(id.value());
      }
    }
  }
}

// What the reservation's holds in window `w` have left for its jobs: each hold less the GPUs its
// jobs hold there (running or exiting) and those this pass placed. Built once per pass.
std::vector<GpuCap>& Pass::HoldCaps(const CapacityReservation& r, size_t w) {
  auto it = hold_caps_.find(r.id.value());
  if (it != hold_caps_.end()) return it->second;
  std::vector<GpuCap> caps;
  for (const NodeHold& h : r.holds[w]) caps.push_back({h.node, std::max(0, h.gpus - state_.GpusInReservationOn(r.id, h.node))});
  return hold_caps_.emplace(r.id.value(), std::move(caps)).first->second;
}

void Pass::TryReservedJob(const Job& job) {
  // An untrusted tenant's job runs only where the node's agent confines tasks in every way:
  // a hold on an isolation=partial node (the node turned partial after booking, or the tenant
  // was made untrusted; acceptance moves such holds before a window opens when it can) holds
  // nothing for it.
  if (!KeptOffPartial(job.spec.tenant)) return TryReservedJobOnView(job);
  view_.PushExcluded(&state_.fleet().partial_isolation());
  TryReservedJobOnView(job);
  view_.PopExcluded();
}

std::string Pass::UnusableHolds(const Job& job, const std::vector<NodeHold>& holds) const {
  const Fleet& fleet = state_.fleet();
  if (!KeptOffPartial(job.spec.tenant)) return "";
  std::string barred;
  int n = 0;
  for (const NodeHold& h : holds) {
    if (!fleet.partial_isolation().Test(h.node.value())) continue;
    barred += (n++ == 0 ? "'" : ", '") + fleet.node(h.node).name + "'";
  }
  if (n == 0) return "";
  return std::string("; its tenant is untrusted: its hold") + (n == 1 ? " on node " : "s on nodes ") + barred +
         " may not be used (the agent cannot confine tasks in every way: isolation=partial)";
}

void Pass::TryReservedJobOnView(const Job& job) {
  if (!job.spec.array.empty()) {
    if (std::string why = ArrayHold(job); !why.empty()) return Pending(job.id, std::move(why));
  }
  if (std::string why = state_.ReservationMisfit(job.spec); !why.empty()) {
    plan_.rejections.push_back({job.id, why});
    return;
  }
  const CapacityReservation& r = state_.reservations()[state_.FindReservation(job.spec.tenant, job.spec.reservation).value()];
  const std::string name = "reservation '" + r.spec.name + "'";
  size_t w = r.spec.CurrentWindow(now_);
  if (w == r.spec.windows.size()) {
    plan_.rejections.push_back({job.id, name + " has no window left; its last ended at " + FormatWhen(r.spec.windows.back().end_ms)});
    return;
  }
  if (r.spec.windows[w].start_ms > now_) {
    return Pending(job.id, "waiting for " + name + ": its window opens at " + FormatWhen(r.spec.windows[w].start_ms));
  }
  std::vector<GpuCap>& caps = HoldCaps(r, w);
  if (auto tasks = PlaceGangOn(view_, job.spec, caps)) {
    for (const TaskPlacement& p : *tasks) {
      for (GpuCap& c : caps) {
        if (c.node == p.node) c.gpus -= std::popcount(p.gpu_mask);
      }
    }
    pass_ends_.push_back({now_ + job.estimated_remaining_ms(), static_cast<uint32_t>(plan_.placements.size())});
    usage_.Add(job.spec.tenant, job.demand, /*guaranteed=*/false, +1);
    if (!job.spec.array.empty()) ArrayPlaced(job);
    plan_.placements.push_back({job.id, AdmissionClass::kReserved, std::move(*tasks)});
    return;
  }
  // Lent work in the way: reclaimed, the fewest jobs that make room.
  std::vector<JobId> exiting = state_.victims_of(job.id);
  int64_t until = 0;
  for (JobId id : exiting) until = std::max(until, state_.job(id).preempt_deadline_ms);
  std::vector<JobId> chosen;
  if (!ChooseLentVictims(job, caps, exiting, chosen) && exiting.empty()) {
    return Pending(job.id, name + ": its " + std::to_string(std::accumulate(caps.begin(), caps.end(), 0,
                                                                               [](int n, const GpuCap& c) { return n + c.gpus; })) +
                               " GPUs not used by its running jobs cannot hold the job" +
                               (job.spec.topology != Topology::kNone ? std::string(" in one ") + TopologyName(job.spec.topology) +
                                                                           " domain"
                                                                     : std::string()) +
                               UnusableHolds(job, r.holds[w]));
  }
  for (JobId id : chosen) {
    const Job& v = state_.job(id);
    int64_t deadline = now_ + v.spec.grace_ms;
    plan_.preemptions.push_back({id, job.id, PreemptKind::kReservation, deadline});
    claimed_.insert(id.value());
    until = std::max(until, deadline);
  }
  size_t n = exiting.size() + chosen.size();
  Pending(job.id, "waiting for " + std::to_string(n) + " job" + (n == 1 ? "" : "s") + " on the lent capacity of " + name +
                      " to exit, grace until " + FormatWhen(until));
}

// The lent jobs on the holds (running, not claimed), in victim order: 1. lowest priority,
// 2. least work lost, 3. newest start, 4. id. Greedy until the job fits its holds with them and
// `exiting` gone, then drops every victim it fits without (newest choice first).
bool Pass::ChooseLentVictims(const Job& job, const std::vector<GpuCap>& caps, const std::vector<JobId>& exiting,
                             std::vector<JobId>& chosen) {
  struct Key {
    int32_t priority;
    int64_t lost;
    int64_t neg_started;
    uint32_t id;
    auto operator<=>(const Key&) const = default;
  };
  std::vector<Key> keyed;
  for (const GpuCap& c : caps) {
    for (JobId id : state_.JobsOn(c.node)) {
      const Job& v = state_.job(id);
      if (v.state != JobState::kRunning || v.admission == AdmissionClass::kReserved || claimed_.count(id.value())) continue;
      Key k{v.spec.priority, WorkLost(v), -v.last_started_ms, id.value()};
      if (std::find(keyed.begin(), keyed.end(), k) == keyed.end()) keyed.push_back(k);
    }
  }
  std::sort(keyed.begin(), keyed.end());
  size_t mark = view_.Mark();
  for (JobId id : exiting) FreeVictim(id, /*check_quota=*/false);
  auto fits = [&] {
    size_t m = view_.Mark();
    bool ok = PlaceGangOn(view_, job.spec, caps).has_value();
    view_.Rollback(m);
    return ok;
  };
  bool ok = !exiting.empty() && fits();
  for (size_t i = 0; i < keyed.size() && !ok && i < static_cast<size_t>(config_.max_victims); ++i) {
    JobId id(keyed[i].id);
    FreeVictim(id, /*check_quota=*/false);
    chosen.push_back(id);
    ok = fits();
  }
  if (ok) {
    for (size_t i = chosen.size(); i-- > 0;) {
      for (const TaskPlacement& p : state_.job(chosen[i]).placement) view_.Take(p);
      if (fits()) {
        chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        FreeVictim(chosen[i], /*check_quota=*/false);
      }
    }
  }
  view_.Rollback(mark);
  if (!ok) chosen.clear();
  return ok;
}

// 0a. Holds of windows in their drain period: their GPUs that are free now are kept free in the
//     view (PlaceLent gives them back to a job that ends in time).
void Pass::BlockDrainingHolds() {
  for (const CapacityReservation& r : state_.reservations()) {
    if (r.state != ReservationState::kConfirmed) continue;
    size_t w = r.spec.CurrentWindow(now_);
    if (w == r.spec.windows.size()) continue;
    int64_t start = r.spec.windows[w].start_ms;
    if (start <= now_ || now_ < start - std::max(r.spec.drain_before_ms, kDefaultLeadLookaheadMs)) continue;
    int64_t lead = r.spec.drain_before_ms;
    if (lead < 0) {
      lead = 0;  // the longest grace of the jobs on its nodes
      for (const NodeHold& h : r.holds[w]) {
        for (JobId id : state_.JobsOn(h.node)) lead = std::max(lead, state_.job(id).spec.grace_ms);
      }
    }
    if (now_ < start - lead) continue;
    for (const NodeHold& h : r.holds[w]) {
      uint64_t free = view_.Free(h.node).gpu_mask;
      uint64_t mask = 0;
      for (int k = 0; k < h.gpus && free; ++k) {
        uint64_t bit = free & (~free + 1);
        mask |= bit;
        free &= ~bit;
      }
      if (mask == 0) continue;
      view_.Take(h.node, mask, 0, 0);
      drain_blocks_.push_back({h.node, mask, start});
    }
  }
  // Latest start first: the blocks a job ending at t may use are a prefix.
  std::stable_sort(drain_blocks_.begin(), drain_blocks_.end(),
                   [](const DrainBlock& a, const DrainBlock& b) { return a.start_ms > b.start_ms; });
}

// Why a job that did not fit may not use the drain blocks of its GPU model, or empty.
std::string Pass::DrainNote(const Job& job) const {
  int gpus = 0;
  int64_t first = INT64_MAX;
  for (const DrainBlock& b : drain_blocks_) {
    if (b.gpu_mask == 0 || state_.fleet().node(b.node).gpu_resource != job.spec.gpu_resource) continue;
    gpus += std::popcount(b.gpu_mask);
    first = std::min(first, b.start_ms);
  }
  if (gpus == 0) return "";
  return "; " + std::to_string(gpus) + " more GPU" + (gpus == 1 ? " is" : "s are") +
         " kept free for reservation windows opening from " + FormatWhen(first) +
         ", for jobs expected to end by then (time limit or duration)";
}

// 2b'. A job that did not fit beside the drain blocks, tried with those whose window opens after
//      it is expected to end; the blocks keep what it leaves free.
std::optional<std::vector<TaskPlacement>> Pass::PlaceLent(const Job& job) {
  int64_t end = now_ + job.estimated_remaining_ms();
  size_t k = 0;
  while (k < drain_blocks_.size() && drain_blocks_[k].start_ms >= end) ++k;
  if (k == 0) return std::nullopt;
  uint64_t memo = (uint64_t{job.shape} << 32) | k;
  if (failed_lent_.count(memo)) return std::nullopt;
  size_t mark = view_.Mark();
  for (size_t i = 0; i < k; ++i) {
    if (drain_blocks_[i].gpu_mask) view_.Give(drain_blocks_[i].node, drain_blocks_[i].gpu_mask, 0, 0);
  }
  auto tasks = PlaceGang(view_, job.spec);
  if (!tasks) {
    view_.Rollback(mark);
    failed_lent_.insert(memo);
    return std::nullopt;
  }
  for (size_t i = 0; i < k; ++i) {
    DrainBlock& b = drain_blocks_[i];
    b.gpu_mask &= view_.Free(b.node).gpu_mask;
    if (b.gpu_mask) view_.Take(b.node, b.gpu_mask, 0, 0);
  }
  return tasks;
}

}  // namespace allot
