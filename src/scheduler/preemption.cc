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
// Greedy in that order until the preemptor fits, then victims not needed are dropped; then the
// greedy over each domain's candidates alone, and the smallest set wins (ChooseVictims).
// Victims keep their resources for their grace period; the preemptor waits.
#include <algorithm>
#include <bit>
#include <map>
#include <tuple>
#include <unordered_map>

#include "core/calendar.h"
#include "core/quantity.h"
#include "placement/gang.h"
#include "policy/drf.h"
#include "scheduler/pass.h"
#include "scheduler/victims.h"

namespace allot {

int64_t WorkLost(const Job& j, int64_t now) {
  int64_t ran = now - j.last_started_ms;
  if (j.spec.checkpoint_interval_ms > 0) return ran % j.spec.checkpoint_interval_ms;
  return ran;
}

int64_t ExcessOverGuarantee(const QuotaTree& tree, const Job& victim, ResourceId r) {
  int64_t best = INT64_MIN;
  TenantId top = victim.spec.tenant;
  for (TenantId a = victim.spec.tenant; a != tree.root(); a = tree.tenant(a).parent) {
    const Tenant& t = tree.tenant(a);
    top = a;
    if (t.has_guarantee(r)) best = std::max(best, t.usage[r] - t.guarantee[r]);
  }
  return best == INT64_MIN ? tree.tenant(top).usage[r] : best;
}

int64_t Pass::WorkLost(const Job& j) const { return allot::WorkLost(j, now_); }

namespace {

// Victim order shared by reclaim and priority preemption: 1. most excess over the guarantee
// (reclaim only; 0 otherwise), 2. lowest priority, 3. least work lost, 4. newest start, 5. id.
struct VictimKey {
  int64_t neg_excess;
  int32_t priority;
  int64_t lost;
  int64_t neg_started;
  uint32_t id;
  auto operator<=>(const VictimKey&) const = default;
};

std::vector<JobId> InVictimOrder(std::vector<std::pair<VictimKey, JobId>> keyed) {
  std::sort(keyed.begin(), keyed.end());
  std::vector<JobId> out;
  out.reserve(keyed.size());
  for (auto& [k, id] : keyed) out.push_back(id);
  return out;
}

}  // namespace

Pass::VictimList::VictimList(CandidateOrder& order, const std::unordered_set<uint32_t>& claimed, size_t max)
    : order_(&order.order), claimed_(&claimed), max_(max) {
  while (order.first < order.order.size() && claimed.count(order.order[order.first].value())) ++order.first;
  next_ = order.first;
  if (next_ == order_->size() || max_ == 0) order_ = nullptr;
}

void Pass::VictimList::Read() {
  JobId id = (*order_)[next_++];
  if (!claimed_->count(id.value())) ids_.push_back(id);
  if (next_ == order_->size() || ids_.size() >= max_) order_ = nullptr;
}

// The first max_victims of a cached order that no earlier preemptor of this pass has claimed.
Pass::VictimList Pass::Unclaimed(CandidateOrder& candidates) const {
  return VictimList(candidates, claimed_, static_cast<size_t>(std::max(config_.max_victims, 0)));
}

Pass::VictimList Pass::ReclaimCandidates(const Job& job) {
  // The order depends on the state and the pass's time only, so it is built once per pass and
  // GPU model; victims claimed since are skipped.
  ResourceId r = job.demand.gpu > 0 ? job.spec.gpu_resource : kCpu;
  auto it = reclaim_order_.find(r);
  if (it == reclaim_order_.end()) it = reclaim_order_.emplace(r, CandidateOrder{ReclaimOrder(state_, now_, r)}).first;
  return Unclaimed(it->second);
}

std::vector<JobId> ReclaimOrder(const ClusterState& state, int64_t now, ResourceId gpu) {
  std::vector<std::pair<VictimKey, JobId>> keyed;
  for (JobId id : state.burstable_running()) {
    const Job& v = state.job(id);
    if (gpu != kCpu && (v.demand.gpu == 0 || v.spec.gpu_resource != gpu)) continue;
    keyed.push_back({{-ExcessOverGuarantee(state.tenants(), v, gpu), v.spec.priority, WorkLost(v, now),
                      -v.last_started_ms, id.value()},
                     id});
  }
  return InVictimOrder(std::move(keyed));
}

Pass::VictimList Pass::PriorityCandidates(const Job& job) {
  // The tenant's running jobs below this priority and outside the cooldown, in victim order,
  // built once per pass, tenant and priority; victims claimed since are skipped.
  uint64_t key = (uint64_t{job.spec.tenant.value()} << 32) | static_cast<uint32_t>(job.spec.priority);
  auto it = priority_order_.find(key);
  if (it == priority_order_.end()) {
    std::vector<std::pair<VictimKey, JobId>> keyed;
    for (const ClusterState::RunningEntry& e : state_.running_in(job.spec.tenant)) {
      if (e.priority >= job.spec.priority) break;
      const Job& v = state_.job(e.id);
      if (v.admission == AdmissionClass::kReserved) continue;  // its reservation's, not the queue's
      if (v.last_preempted_ms >= 0 && now_ - v.last_preempted_ms < config_.preemption_cooldown_ms) continue;
      keyed.push_back({{0, v.spec.priority, WorkLost(v), -v.last_started_ms, e.id.value()}, e.id});
    }
    it = priority_order_.emplace(key, CandidateOrder{InVictimOrder(std::move(keyed))}).first;
  }
  return Unclaimed(it->second);
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
  for (JobId id : freed) FreeVictim(id, check_quota);
  bool fits = FitsNow(job, check_quota);
  view_.Rollback(mark);
  if (check_quota) {
    for (JobId id : freed) RestoreVictimUsage(id);
  }
  return fits;
}

void Pass::FreeVictim(JobId id, bool check_quota) {
  const Job& v = state_.job(id);
  for (const TaskPlacement& p : v.placement) view_.Give(p);
  if (check_quota) usage_.Add(v.spec.tenant, v.demand, v.admission == AdmissionClass::kGuaranteed, -1);
}

void Pass::RestoreVictimUsage(JobId id) {
  const Job& v = state_.job(id);
  usage_.Add(v.spec.tenant, v.demand, v.admission == AdmissionClass::kGuaranteed, +1);
}

// Whether the job fits the views as they are now; leaves the views unchanged.
bool Pass::FitsNow(const Job& job, bool check_quota) {
  if (check_quota && !Admit(usage_, job.spec.tenant, job.demand).fits) return false;
  return PlacesNow(job);
}

bool Pass::PlacesNow(const Job& job) {
  size_t mark = view_.Mark();
  bool fits = PlaceGang(view_, job.spec).has_value();
  view_.Rollback(mark);
  return fits;
}

// Greedy over the candidates in order until the job fits, then drops (newest choice first)
// every victim it fits without. Incremental: each candidate is freed once on the views, so a
// failed search over k candidates costs k frees, and a placement is tried only where the
// freed victim could have made room (MayFitAfterFreeing). Leaves the views as it found them.
bool Pass::GreedyVictims(const Job& job, VictimList& candidates, size_t limit, bool check_quota, bool placement_failed,
                         std::vector<JobId>& chosen) {
  size_t mark = view_.Mark();
  bool fits = false;
  // The job did not fit the views as they were: one victim that makes it fit is needed.
  const bool failed_bare = placement_failed;
  // A job that requires node labels gains capacity only from victims on nodes that have them;
  // the others are passed over (quota is another matter: a victim anywhere frees its tenant's).
  const Bitset* eligible = check_quota ? nullptr : view_.Eligible(job.spec.require);
  for (size_t i = 0; i < limit && !fits && candidates.Has(i); ++i) {
    const Job& v = state_.job(candidates[i]);
    if (eligible && std::none_of(v.placement.begin(), v.placement.end(),
                                 [&](const TaskPlacement& p) { return eligible->Test(p.node.value()); })) {
      ++limit;  // it takes no victim's place
      continue;
    }
    FreeVictim(v.id, check_quota);
    chosen.push_back(v.id);
    if (check_quota && !Admit(usage_, job.spec.tenant, job.demand).fits) continue;
    if (placement_failed && !MayFitAfterFreeing(view_, job.spec, v.placement)) continue;
    fits = PlacesNow(job);
    placement_failed = !fits;
  }
  if (fits && !(failed_bare && chosen.size() == 1)) {
    // Fewest victims: take each one back, newest first; keep it out if the job still fits.
    for (size_t i = chosen.size(); i-- > 0;) {
      const Job& v = state_.job(chosen[i]);
      for (const TaskPlacement& p : v.placement) view_.Take(p);
      if (check_quota) RestoreVictimUsage(chosen[i]);
      if (FitsNow(job, check_quota)) {
        chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        FreeVictim(v.id, check_quota);
      }
    }
  }
  view_.Rollback(mark);
  if (check_quota) {
    for (JobId id : chosen) RestoreVictimUsage(id);
  }
  if (!fits) chosen.clear();
  return fits;
}

// Whether victim set `a` is better than `b`: fewer victims, then less work lost, then a lower
// highest priority among them, then earlier in the candidate order (rank by rank), which keeps
// the kind's own order (reclaim: furthest over guarantee first) as the last word.
bool Pass::BetterVictims(const std::vector<JobId>& a, const std::vector<JobId>& b,
                         const std::unordered_map<uint32_t, size_t>& rank) const {
  if (a.size() != b.size()) return a.size() < b.size();
  auto key = [&](const std::vector<JobId>& set) {
    int64_t lost = 0;
    int32_t top = INT32_MIN;
    std::vector<size_t> ranks;
    for (JobId id : set) {
      const Job& v = state_.job(id);
      lost += WorkLost(v);
      top = std::max(top, v.spec.priority);
      ranks.push_back(rank.at(id.value()));
    }
    std::sort(ranks.begin(), ranks.end());
    return std::make_tuple(lost, top, ranks);
  };
  return key(a) < key(b);
}

// The victim set: the greedy's over the whole candidate order, then, when it takes more than
// one victim, the greedy's over each domain's candidates alone (the node, or the gang's
// topology domain), fewest candidates first, for a smaller set: with one node holding 8
// borrowed 1-GPU jobs and another 4, a gang needing a whole node frees the second. Of the sets
// that make the job fit, BetterVictims picks. Bounded: at most kMaxVictimDomains domains, each
// with no more candidates than the best set so far has victims, are tried.
bool Pass::ChooseVictims(const Job& job, const std::vector<JobId>& own_exiting, VictimList candidates,
                         bool check_quota, bool placement_failed, std::vector<JobId>& chosen) {
  if (!candidates.Has(0)) return false;
  constexpr size_t kMaxVictimDomains = 32;
  const size_t limit = static_cast<size_t>(std::max(config_.max_victims, 0));
  // A rack or zone gang that no domain has room for even with its exiting victims and every
  // candidate the greedy may take freed: the greedy would fail (without a `require`, it takes
  // no more than `limit`).
  if (MayFitWithFreedLooks(job.spec)) {
    std::vector<const std::vector<TaskPlacement>*> freed;
    for (JobId id : own_exiting) freed.push_back(&state_.job(id).placement);
    for (size_t i = 0; i < limit && candidates.Has(i); ++i) freed.push_back(&state_.job(candidates[i]).placement);
    if (!MayFitWithFreed(view_, job.spec, freed)) return false;
  }
  size_t mark = view_.Mark();
  for (JobId id : own_exiting) FreeVictim(id, check_quota);
  // placement_failed: PlaceGang failed with the victims freed so far (the caller says whether
  // it failed on the view as it was).
  if (!own_exiting.empty()) placement_failed = false;
  bool fits = GreedyVictims(job, candidates, limit, check_quota, placement_failed, chosen);
  if (fits && chosen.size() > 1) {
    const std::vector<JobId>& all = candidates.All();
    const Fleet& fleet = state_.fleet();
    bool by_domain = job.spec.topology != Topology::kNone && job.spec.topology != Topology::kNvlink;
    DomainKind kind = by_domain ? DomainKindOf(job.spec.topology) : DomainKind::kNvlink;
    std::map<uint32_t, std::vector<JobId>> groups;  // domain (or node) → its candidates in order
    std::map<uint32_t, int64_t> held;               // domain (or node) → GPUs its candidates hold there
    std::unordered_map<uint32_t, size_t> rank;
    for (size_t i = 0; i < all.size(); ++i) rank[all[i].value()] = i;
    for (size_t i = 0; i < all.size() && i < limit; ++i) {
      const Job& v = state_.job(all[i]);
      for (const TaskPlacement& p : v.placement) {
        uint32_t g = by_domain ? fleet.DomainOf(fleet.node(p.node), kind) : p.node.value();
        held[g] += std::popcount(p.gpu_mask);
        std::vector<JobId>& members = groups[g];
        if (members.empty() || members.back() != all[i]) members.push_back(all[i]);
      }
    }
    // A job that must lie in one domain (or on one node) of whole GPUs cannot fit where the free
    // GPUs and those its candidates hold there fall short of it: such a domain is not tried.
    int tasks = 0;
    for (const TaskGroup& g : job.spec.groups) tasks += g.count;
    bool whole = job.demand.gpu > 0 && job.demand.gpu % kGpuUnit == 0;
    bool one_domain = by_domain || tasks == 1 || (job.spec.topology == Topology::kNvlink && !fleet.has_multi_node_nvlink());
    auto short_of_room = [&](uint32_t g) {
      if (!whole || !one_domain) return false;
      if (!by_domain && fleet.node(NodeId(g)).gpu_resource != job.spec.gpu_resource) return true;
      int64_t free = by_domain ? view_.DomainFreeGpus(kind, g, job.spec.gpu_resource) : view_.Free(NodeId(g)).gpus();
      return (free + held[g]) * kGpuUnit < job.demand.gpu;
    };
    std::vector<std::pair<size_t, uint32_t>> order;
    for (const auto& [g, members] : groups) order.push_back({members.size(), g});
    std::sort(order.begin(), order.end());
    size_t tried = 0;
    for (const auto& [count, g] : order) {
      if (count > chosen.size() || tried >= kMaxVictimDomains) break;
      if (short_of_room(g)) continue;
      ++tried;
      const std::vector<JobId>& members = groups[g];
      if (members.size() == chosen.size() && std::is_permutation(members.begin(), members.end(), chosen.begin())) continue;
      std::vector<JobId> alt;
      VictimList alone(members);
      if (GreedyVictims(job, alone, members.size(), check_quota, placement_failed, alt) &&
          BetterVictims(alt, chosen, rank)) {
        chosen = std::move(alt);
      }
    }
  }
  view_.Rollback(mark);
  if (check_quota) {
    for (JobId id : own_exiting) RestoreVictimUsage(id);
  }
  return fits;
}

// A whole-GPU rack or zone gang without victims of its own whose domains, each with every GPU
// its priority preemption could free there (CandidateGpus: the tenant's jobs below it, the
// cooldown ignored), still fall short of it: ChooseVictims would fail (it frees no more), so
// its candidates are not put in order for it.
bool Pass::PriorityCannotFit(const Job& job, const std::vector<JobId>& exiting) {
  // The memo's shape test says which: whole GPUs, no shares, a rack (0) or a zone (1).
  const int k = ShapeMemoKind(job.shape, job.id);
  if (!exiting.empty() || k < 0) return false;
  const DomainKind kind = k == 0 ? DomainKind::kRack : DomainKind::kZone;
  const int64_t need = job.demand.gpu / kGpuUnit;
  const std::vector<int64_t>& own = CandidateGpus(job, k);
  for (size_t d = 0; d < own.size(); ++d) {
    if (view_.DomainFreeGpus(kind, static_cast<uint32_t>(d), job.spec.gpu_resource) + own[d] >= need) return false;
  }
  return true;
}

bool Pass::TryPreempt(const Job& job, AdmissionClass admission, bool quota_blocked) {
  // 0. Victims already signalled for this job: if they suffice, it waits for them.
  std::vector<JobId> exiting = state_.victims_of(job.id);
  int64_t until = 0;
  for (JobId id : exiting) until = std::max(until, state_.job(id).preempt_deadline_ms);
  auto waiting = [&](size_t n, int64_t deadline) {
    Pending(job.id, "waiting for " + std::to_string(n) + " victim" + (n == 1 ? "" : "s") +
                        " to exit, grace until " +
                        FormatWhen(deadline));
    return true;
  };
  if (!exiting.empty() && FitsWith(job, exiting, /*check_quota=*/true)) return waiting(exiting.size(), until);

  // 1. Pick the kind: reclaim for a guaranteed job blocked on capacity; priority within the
  //    tenant; fair share among borrowers when enabled.
  //    Within a pass the views only fill up and claimed victims leave the candidate lists, so
  //    an attempt that failed fails again for the next job with the same key: reclaim by shape
  //    (its candidates do not depend on the preemptor), priority and fair share by shape,
  //    tenant, priority and class. A job with its own exiting victims neither writes nor
  //    reads these memos: its attempt frees its victims first, so it may fit where the others
  //    of its key failed (and they may fail where it fit). So a job's attempt does not depend
  //    on where in the pass the others of its key were tried.
  Attempt tenant_attempt{job.shape, job.spec.tenant.value(), job.spec.priority, static_cast<uint8_t>(admission),
                         quota_blocked};
  // The caller tried to place the job on this view unless quota blocked it first.
  bool placement_failed = !quota_blocked;
  std::vector<JobId> chosen;
  PreemptKind kind = PreemptKind::kReclaim;
  bool ok = false;
  const bool memoised = exiting.empty();
  if (!quota_blocked && admission == AdmissionClass::kGuaranteed && !(memoised && failed_reclaim_[job.shape])) {
    ok = ChooseVictims(job, exiting, ReclaimCandidates(job), /*check_quota=*/false, placement_failed, chosen);
    if (!ok && memoised && memo_) failed_reclaim_[job.shape] = true;
  }
  if (!ok && memoised && failed_tenant_attempts_.Contains(tenant_attempt)) return false;
  if (!ok && !PriorityCannotFit(job, exiting)) {
    kind = PreemptKind::kPriority;
    ok = ChooseVictims(job, exiting, PriorityCandidates(job), /*check_quota=*/true, placement_failed, chosen);
  }
  if (!ok && !quota_blocked && admission == AdmissionClass::kBurstable && config_.fair_share_preemption) {
    kind = PreemptKind::kFairShare;
    ok = ChooseVictims(job, exiting, VictimList(FairShareCandidates(job)), /*check_quota=*/false, placement_failed,
                       chosen);
  }
  if (!ok) {
    if (memoised && memo_) failed_tenant_attempts_.TryEmplace(tenant_attempt, true);
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
