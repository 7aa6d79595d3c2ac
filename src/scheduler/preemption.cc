// Preemption, decided by simulating the victims' removal on the pass's views and checking the
// preemptor then really fits, topology included. Victims are whole jobs (gangs).
//
//   reclaim     a guaranteed job blocked for capacity evicts burstable jobs of any tenant:
//               1. tenant furthest above its guarantee first, 2. lowest priority,
//               3. least work lost, 4. newest start, 5. job id.
//   priority    within one tenant, a higher priority evicts lower ones:
//               1. lowest priority, 2. least work lost, 3. newest start, 4. job id.
//   fair share  (optional) a borrower evicts another tenant's borrower whose tenant's share is
//               above its own by the threshold; min_runtime and the cooldown protect victims.
// Greedy in that order until the preemptor fits, then victims not needed are dropped (fewest
// victims). Victims keep their resources for their grace period; the preemptor waits.
#include <algorithm>

#include "core/quantity.h"
#include "placement/gang.h"
#include "policy/drf.h"
#include "scheduler/pass.h"

namespace allot {

int64_t Pass::WorkLost(const Job& j) const {
  int64_t ran = now_ - j.last_started_ms;
  if (j.spec.checkpoint_interval_ms > 0) return ran % j.spec.checkpoint_interval_ms;
  return ran;
}

// How far the victim's tenant is above its guarantee for r: the largest (usage - guarantee)
// over its ancestors that set one; with no guarantee on the path, its top-level usage.
int64_t Pass::Excess(const Job& victim, ResourceId r) const {
  const QuotaTree& tree = state_.tenants();
  int64_t best = INT64_MIN;
  TenantId top = victim.spec.tenant;
  for (TenantId a = victim.spec.tenant; a != tree.root(); a = tree.tenant(a).parent) {
    const Tenant& t = tree.tenant(a);
    top = a;
    if (t.has_guarantee(r)) best = std::max(best, t.usage[r] - t.guarantee[r]);
  }
  return best == INT64_MIN ? tree.tenant(top).usage[r] : best;
}

std::vector<JobId> Pass::ReclaimCandidates(const Job& job) const {
  ResourceId r = job.demand.gpu > 0 ? job.spec.gpu_resource : kCpu;
  struct Key {
    int64_t neg_excess;
    int32_t priority;
    int64_t lost;
    int64_t neg_started;
    uint32_t id;
    auto operator<=>(const Key&) const = default;
  };
  std::vector<std::pair<Key, JobId>> keyed;
  for (JobId id : state_.burstable_running()) {
    const Job& v = state_.job(id);
    if (claimed_.count(id.value())) continue;
    if (job.demand.gpu > 0 && (v.demand.gpu == 0 || v.spec.gpu_resource != job.spec.gpu_resource)) continue;
    keyed.push_back({{-Excess(v, r), v.spec.priority, WorkLost(v), -v.last_started_ms, id.value()}, id});
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<JobId> out;
  for (auto& [k, id] : keyed) out.push_back(id);
  return out;
}

std::vector<JobId> Pass::PriorityCandidates(const Job& job) const {
  struct Key {
    int32_t priority;
    int64_t lost;
    int64_t neg_started;
    uint32_t id;
    auto operator<=>(const Key&) const = default;
  };
  std::vector<std::pair<Key, JobId>> keyed;
  for (JobId id : state_.running_in(job.spec.tenant)) {
    const Job& v = state_.job(id);
    if (v.spec.priority >= job.spec.priority || claimed_.count(id.value())) continue;
    if (v.last_preempted_ms >= 0 && now_ - v.last_preempted_ms < config_.preemption_cooldown_ms) continue;
    keyed.push_back({{v.spec.priority, WorkLost(v), -v.last_started_ms, id.value()}, id});
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<JobId> out;
  for (auto& [k, id] : keyed) out.push_back(id);
  return out;
}

std::vector<JobId> Pass::FairShareCandidates(const Job& job) const {
  const Resources& cap = state_.fleet().capacity();
  int nres = state_.resource_names().size();
  // The preemptor's share as if it ran.
  UsageOverlay after(state_.tenants());
  after.Add(job.spec.tenant, job.demand, false, +1);
  Share mine = WeightedDominantShare(after, job.spec.tenant, cap, nres);
  struct Candidate {
    Share share;
    int32_t priority;
    int64_t lost;
    int64_t started;
    JobId id;
  };
  std::vector<Candidate> cands;
  for (JobId id : state_.burstable_running()) {
    const Job& v = state_.job(id);
    if (v.spec.tenant == job.spec.tenant || claimed_.count(id.value())) continue;
    if (job.demand.gpu > 0 && (v.demand.gpu == 0 || v.spec.gpu_resource != job.spec.gpu_resource)) continue;
    if (now_ - v.last_started_ms < v.spec.min_runtime_ms) continue;
    if (v.last_preempted_ms >= 0 && now_ - v.last_preempted_ms < config_.preemption_cooldown_ms) continue;
    Share theirs = WeightedDominantShare(usage_, v.spec.tenant, cap, nres);
    // theirs - mine > threshold/1000, cross-multiplied: (tn·md - mn·td)·1000 > t·td·md
    __int128 lhs = (static_cast<__int128>(theirs.num) * mine.den - static_cast<__int128>(mine.num) * theirs.den) * 1000;
    __int128 rhs = static_cast<__int128>(config_.fair_share_threshold_milli) * theirs.den * mine.den;
    if (lhs <= rhs) continue;
    cands.push_back({theirs, v.spec.priority, WorkLost(v), v.last_started_ms, id});
  }
  // 1. highest share, 2. lowest priority, 3. least work lost, 4. newest start, 5. job id.
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (!(a.share == b.share)) return a.share > b.share;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.lost != b.lost) return a.lost < b.lost;
    if (a.started != b.started) return a.started > b.started;
    return a.id < b.id;
  });
  std::vector<JobId> out;
  for (const Candidate& c : cands) out.push_back(c.id);
  return out;
}
// Frees `freed` in the views, checks the job fits (quota if asked, then placement), and
// restores the views.
bool Pass::FitsWith(const Job& job, const std::vector<JobId>& freed, bool check_quota) {
  size_t mark = view_.Mark();
  for (JobId id : freed) {
    const Job& v = state_.job(id);
    for (const TaskPlacement& p : v.placement) view_.Give(p.node, p.gpu_mask, p.cpu, p.memory);
    if (check_quota) usage_.Add(v.spec.tenant, v.demand, v.admission == AdmissionClass::kGuaranteed, -1);
  }
  bool fits = !check_quota || Admit(usage_, job.spec.tenant, job.demand).fits;
  if (fits) fits = PlaceGang(view_, job.spec).has_value();
  view_.Rollback(mark);
  if (check_quota) {
    for (JobId id : freed) {
      const Job& v = state_.job(id);
      usage_.Add(v.spec.tenant, v.demand, v.admission == AdmissionClass::kGuaranteed, +1);
    }
  }
  return fits;
}

bool Pass::ChooseVictims(const Job& job, const std::vector<JobId>& own_exiting, std::vector<JobId> candidates,
                         bool check_quota, std::vector<JobId>& chosen) {
  if (candidates.empty()) return false;
  if (candidates.size() > static_cast<size_t>(config_.max_victims)) candidates.resize(config_.max_victims);
  std::vector<JobId> trial = own_exiting;
  bool fits = false;
  for (JobId c : candidates) {
    trial.push_back(c);
    chosen.push_back(c);
    if (FitsWith(job, trial, check_quota)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    chosen.clear();
    return false;
  }
  // Fewest victims: drop, newest choice first, each victim the preemptor fits without.
  for (size_t i = chosen.size(); i-- > 0;) {
    std::vector<JobId> without = own_exiting;
    for (size_t k = 0; k < chosen.size(); ++k) {
      if (k != i) without.push_back(chosen[k]);
    }
    if (FitsWith(job, without, check_quota)) chosen.erase(chosen.begin() + i);
  }
  return true;
}

bool Pass::TryPreempt(const Job& job, const std::string& shape, AdmissionClass admission, bool quota_blocked) {
  // 0. Victims already signalled for this job: if they suffice, it waits for them.
  std::vector<JobId> exiting;
  int64_t until = 0;
  for (JobId id : state_.preempting()) {
    const Job& v = state_.job(id);
    if (v.preemptor == job.id) {
      exiting.push_back(id);
      until = std::max(until, v.preempt_deadline_ms);
    }
  }
  auto waiting = [&](size_t n, int64_t deadline) {
    Pending(job.id, "waiting for " + std::to_string(n) + " victim" + (n == 1 ? "" : "s") +
                        " to exit, grace until t=" + FormatSeconds(deadline) + "s");
    return true;
  };
  if (!exiting.empty() && FitsWith(job, exiting, /*check_quota=*/true)) return waiting(exiting.size(), until);

  // 1. Pick the kind: reclaim for a guaranteed job blocked on capacity; priority within the
  //    tenant; fair share among borrowers when enabled.
  std::string attempt = shape + '#' + std::to_string(job.spec.tenant.value()) + '#' +
                        std::to_string(job.spec.priority) + '#' + std::to_string(static_cast<int>(admission));
  if (failed_reclaims_.count(attempt)) return false;
  std::vector<JobId> chosen;
  PreemptKind kind = PreemptKind::kReclaim;
  bool ok = false;
  if (!quota_blocked && admission == AdmissionClass::kGuaranteed) {
    ok = ChooseVictims(job, exiting, ReclaimCandidates(job), /*check_quota=*/false, chosen);
  }
  if (!ok) {
    kind = PreemptKind::kPriority;
    ok = ChooseVictims(job, exiting, PriorityCandidates(job), /*check_quota=*/true, chosen);
  }
  if (!ok && !quota_blocked && admission == AdmissionClass::kBurstable && config_.fair_share_preemption) {
    kind = PreemptKind::kFairShare;
    ok = ChooseVictims(job, exiting, FairShareCandidates(job), /*check_quota=*/false, chosen);
  }
  if (!ok) {
    // Another job of this shape, tenant and priority would fail too — unless this one had its
    // own exiting victims, which the next one does not share.
    if (exiting.empty()) failed_reclaims_.insert(attempt);
    return false;
  }
  // 2. Signal the victims; they keep their resources until they exit or the grace ends.
  for (JobId id : chosen) {
    const Job& v = state_.job(id);
    int64_t deadline = now_ + v.spec.grace_ms;
    plan_.preemptions.push_back({id, job.id, kind, deadline});
    claimed_.insert(id.value());
    until = std::max(until, deadline);
  }
  return waiting(exiting.size() + chosen.size(), until);
}

}  // namespace allot
