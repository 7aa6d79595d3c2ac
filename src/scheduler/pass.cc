#include "scheduler/pass.h"

#include <cstdio>

#include "core/calendar.h"
#include "core/quantity.h"
#include "placement/gang.h"
#include "placement/share_place.h"
#include "placement/score/workload.h"
#include "state/share_request.h"
#include "policy/drf.h"
#include "scheduler/scheduler.h"

namespace allot {

Plan PlanPass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config) {
  Pass pass(state, now_ms, config);
  return pass.Run();
}

Plan PlanPass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config, FailedAttempts* memo) {
  Pass pass(state, now_ms, config, memo);
  return pass.Run();
}

Pass::Pass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config, FailedAttempts* memo)
    : state_(state), now_(now_ms), config_(config), memo_given_(memo), view_(state.fleet(), now_ms), usage_(state.tenants()),
      queue_(usage_, state.fleet().capacity(), state.resource_names().size()) {
  plan_.now_ms = now_ms;
  // Every pending job gets its reason in every pass: room for them at once.
  plan_.pending.reserve(state.pending().size());
  if (!config.share_policy.empty() && !state.mps_shapes().empty()) {
    view_.SetShareScorer([this](ResourceId res) { return ShareScorer(res); });
  }
  if (config.gate) gate_ = config.gate->Open(state, now_ms);
  never_fits_.assign(state.shape_count(), -1);
  usage_version_.assign(state.tenants().size(), 0);
  path_kept_.assign(state.tenants().size(), PathKept{});
  inert_.assign(state.tenants().size(), -1);
  failed_shape_.assign(state.shape_count(), -1);
  shape_demand_.assign(state.shape_count(), nullptr);
  shape_memo_kind_.assign(state.shape_count(), -2);
  failed_reclaim_.assign(state.shape_count(), false);
  for (const InterferenceResponse& r : state.interference()) {
    if (r.action == InterferenceAction::kMove) kept_off_[r.neighbour.value()].emplace_back(r.node, r.gpu);
  }
}

Plan Pass::Run() {
  // 0. Reservations' jobs whose window ended are stopped (reserved.cc).
  StopEndedReservedJobs();
  // 0b. Untrusted tenants' jobs on nodes that cannot confine them are moved off (reserved.cc).
  StopUnconfinedJobs();
  // 1. Triage: reject the impossible, band the rest by (admission class, priority); jobs that
  //    name a reservation are set aside.
  Triage();
  // 1b. Jobs in their reservation's window, ahead of the queue, on its holds only; then the
  //     holds of windows about to open kept for jobs that end before they do.
  PlaceReservedJobs();
  BlockDrainingHolds();
  may_settle_ = !gate_ && drain_blocks_.empty();
  // 1c. Failed attempts remembered across passes: brought up to the state, then used only
  //     where nothing but the queue decides a job's fate (no gate, no capacity reservations,
  //     no noisy-neighbour responses).
  if (memo_given_) {
    memo_given_->Sync(state_);
    if (may_settle_ && state_.reservations().empty() && state_.interference().empty() &&
        state_.fleet().partial_isolation_nodes() == 0)
      failed_memo_ = memo_given_;
  }
  // 2. Bands in order; within a band, hierarchical DRF with shares refreshed per placement.
  //    A band may push jobs into a later band (a guaranteed job that became burstable), so
  //    iterate by key rather than by iterator.
  while (!bands_.empty()) {
    auto it = bands_.begin();
    BandKey key = it->first;
    Band band = std::move(it->second);
    bands_.erase(it);
    RunBand(key, band);
  }
  // A reservation whose job is no longer the first blocked for capacity is dropped.
  if (!reservation_tried_ && state_.reservation()) plan_.reservation_update = ReservationSet{};
  // 3. MIG GPUs re-laid out for the demand that found no instance.
  if (!mig_unmet_.empty()) Relayout();
  // 4. What the gate has to say (budget warnings).
  if (gate_) plan_.notices = gate_->Notices();
#ifdef ALLOT_VERIFY_INVARIANTS
  Status s = VerifyPlan(state_, plan_);
  if (!s.ok()) {
    std::fprintf(stderr, "plan invariant broken: %s\n", s.message().c_str());
    ALLOT_CHECK(s.ok());
  }
#endif
  return std::move(plan_);
}

void Pass::Triage() {
  // A tenant's allowed pool kinds walk its path: once per tenant per pass, not once per job.
  std::vector<int16_t> allowed_pools(state_.tenants().size(), -1);
  // The room each tenant's path leaves (index in `rooms`, -1: not taken yet).
  std::vector<int32_t> room_at(state_.tenants().size(), -1);
  std::vector<PathRoom> rooms;
  rooms.reserve(state_.tenants().size());
  // Pending jobs with victims of their own are tried one by one: their groups' runs are cut
  // around them.
  std::map<ClusterState::PendingKey, std::vector<QueuedJob>> cut;
  JobId last;
  for (const auto& [preemptor, victim] : state_.victims_by_preemptor()) {
    if (preemptor == last) continue;
    last = preemptor;
    const Job& j = state_.job(preemptor);
    if (j.state == JobState::kPending) cut[ClusterState::PendingKeyOf(j)].push_back({j.queued_ms, j.id.value()});
  }
  // So are jobs kept off GPUs by a noisy-neighbour move: their reasons are their own.
  for (const auto& [id, gpus] : kept_off_) {
    const Job& j = state_.job(JobId(id));
    if (j.state == JobState::kPending) cut[ClusterState::PendingKeyOf(j)].push_back({j.queued_ms, j.id.value()});
  }
  // Jobs that wait for dependencies or are array elements are triaged one by one, in id order
  // (an array's first elements by index go on), after the groups.
  std::vector<JobId> held;
  size_t first_rejection = plan_.rejections.size();
  // A band for every group: the few keys met so far are looked through before the map.
  std::vector<std::pair<BandKey, Band*>> band_of;
  auto band_for = [&](const BandKey& k) -> Band& {
    for (const auto& [seen, b] : band_of) {
      if (seen == k) return *b;
    }
    Band* b = &bands_[k];
    band_of.push_back({k, b});
    return *b;
  };
  runs_.reserve(state_.pending_groups().size());
  // Groups in key order; what is rejected or set aside goes back into id order below, as the
  // jobs were visited by id before they were grouped.
  for (const auto& [key, members] : state_.pending_groups()) {
    // The group's key says all Triage needs of its jobs but for the first of a shape.
    const TenantId tenant(key.tenant);
    if (key.flags & ClusterState::PendingKey::kHeld) {
      for (const QueuedJob& q : members) held.push_back(JobId(q.id));
      continue;
    }
    if (key.flags & ClusterState::PendingKey::kNamesReservation) {
      for (const QueuedJob& q : members) reserved_pending_.push_back(JobId(q.id));
      continue;
    }
    // What the tenant may not use is refused before what the fleet cannot hold; where pools
    // are restricted each job is checked (and tried) on its own.
    int16_t& pools = allowed_pools[key.tenant];
    if (pools < 0) pools = state_.AllowedPools(tenant);
    uint8_t tenant_allowed = static_cast<uint8_t>(pools);
    uint8_t kind_allowed = config_.kind_pools[key.kind];
    bool one_by_one = tenant_allowed != 0xF || kind_allowed != 0xF;
    std::vector<JobId> kept;
    if (one_by_one) {
      for (const QueuedJob& q : members) {
        const Job& job = state_.job(JobId(q.id));
        if (std::string why = PoolRefusal(job, tenant_allowed, kind_allowed); !why.empty()) {
          plan_.rejections.push_back({job.id, std::move(why)});
          continue;
        }
        kept.push_back(job.id);
      }
      if (kept.empty()) continue;
    }
    if (const std::string* never = NeverFitsWhy(key.shape, JobId(members.front().id))) {
      if (one_by_one) {
        for (JobId id : kept) plan_.rejections.push_back({id, *never});
      } else {
        for (const QueuedJob& q : members) plan_.rejections.push_back({JobId(q.id), *never});
      }
      continue;
    }
    // Quota and class depend on the tenant and the demand only: one admission per group, read
    // from the room the tenant's path leaves (one walk a tenant: no placement yet this pass).
    const Demand& demand = ShapeDemand(key.shape, JobId(members.front().id));
    int32_t& room = room_at[key.tenant];
    if (room < 0) {
      room = static_cast<int32_t>(rooms.size());
      rooms.push_back(RoomOnPath(usage_, tenant, demand.gpu_resource));
    } else if (demand.gpu > 0 && rooms[room].gpu_resource != demand.gpu_resource) {
      rooms[room] = RoomOnPath(usage_, tenant, demand.gpu_resource);
    }
    AdmissionResult a = AdmitAs(tenant, demand, key.flags & ClusterState::PendingKey::kBestEffort, &rooms[room]);
    int rank = a.fits && a.admission == AdmissionClass::kGuaranteed ? 0 : 1;
    Band& band = band_for({rank, -key.priority});
    if (one_by_one) {
      band.jobs.insert(band.jobs.end(), kept.begin(), kept.end());
      continue;
    }
    uint32_t tag = static_cast<uint32_t>(runs_.size());
    GroupKey group{key.shape, key.tenant, key.priority,
                   static_cast<uint8_t>(rank | (key.flags & ClusterState::PendingKey::kBestEffort ? 2 : 0))};
    // No placement yet in this pass (Triage comes first): every PathVersion is 0 here.
    runs_.push_back({group, RunSlot(group), !(key.flags & ClusterState::PendingKey::kShares), a, 0});
    const QueuedJob* from = members.data();
    const QueuedJob* end = members.data() + members.size();
    if (auto c = cut.find(key); c != cut.end()) {
      std::sort(c->second.begin(), c->second.end());
      for (const QueuedJob& q : c->second) {
        const QueuedJob* at = std::lower_bound(from, end, q);
        if (at == end || *at != q) continue;
        if (from != at) band.runs.push_back({tenant, from, at, tag});
        band.jobs.push_back(JobId(q.id));
        from = at + 1;
      }
    }
    if (from != end) band.runs.push_back({tenant, from, end, tag});
  }
  std::sort(held.begin(), held.end());
  for (JobId id : held) TriageHeld(state_.job(id), allowed_pools);
  std::sort(plan_.rejections.begin() + static_cast<std::ptrdiff_t>(first_rejection), plan_.rejections.end(),
            [](const PlannedRejection& x, const PlannedRejection& y) { return x.job < y.job; });
  std::sort(reserved_pending_.begin(), reserved_pending_.end());
}

// A job that may wait for its dependencies or its array's limit, triaged on its own.
void Pass::TriageHeld(const Job& job, std::vector<int16_t>& allowed_pools) {
  if (!job.spec.after.empty() && HeldByDependencies(job)) return;
  if (!job.spec.array.empty() && HeldByArrayTriage(job)) return;
  if (!job.spec.reservation.empty()) {
    reserved_pending_.push_back(job.id);
    return;
  }
  int16_t& pools = allowed_pools[job.spec.tenant.value()];
  if (pools < 0) pools = state_.AllowedPools(job.spec.tenant);
  if (std::string why = PoolRefusal(job, static_cast<uint8_t>(pools), config_.kind_pools[static_cast<int>(job.spec.kind)]);
      !why.empty()) {
    plan_.rejections.push_back({job.id, std::move(why)});
    return;
  }
  if (const std::string* never = NeverFitsWhy(job)) {
    plan_.rejections.push_back({job.id, *never});
    return;
  }
  AdmissionResult a = AdmitJob(job);
  int rank = a.fits && a.admission == AdmissionClass::kGuaranteed ? 0 : 1;
  bands_[{rank, -job.spec.priority}].jobs.push_back(job.id);
}

std::string Pass::PoolRefusal(const Job& job, uint8_t tenant_allowed, uint8_t kind_allowed) const {
  if (tenant_allowed != 0xF) {
    if (std::string why = PoolViolation(job.spec, tenant_allowed); !why.empty()) {
      const std::string& path = state_.tenants().tenant(job.spec.tenant).path;
      return "tenant '" + path + "'" + (state_.Untrusted(job.spec.tenant) ? " is untrusted: " : ": ") + why;
    }
  }
  if (kind_allowed != 0xF) {
    if (std::string why = PoolViolation(job.spec, kind_allowed); !why.empty()) return std::string(JobKindName(job.spec.kind)) + " jobs: " + why;
  }
  return "";
}

const std::string* Pass::NeverFitsWhy(uint32_t shape, JobId some) {
  int8_t& never = never_fits_[shape];
  if (never < 0) {
    auto why = NeverFits(state_.fleet(), state_.job(some).spec, state_.resource_names());
    never = why.has_value();
    if (why) never_why_.emplace(shape, std::move(*why));
  }
  return never ? &never_why_.at(shape) : nullptr;
}

const Demand& Pass::ShapeDemand(uint32_t shape, JobId some) {
  const Demand*& d = shape_demand_[shape];
  if (d == nullptr) d = &state_.job(some).demand;
  return *d;
}

void Pass::RunBand(const BandKey& key, Band& band) {
  FairQueue& queue = queue_;
  queue.Clear();
  const bool settle_first = reservation_tried_ && failed_memo_;
  for (size_t i = 0; i < band.runs.size(); ++i) {
    const Band::RunRef& r = band.runs[i];
    // Once the reservation is decided, a remembered failure's place in the queue changes no
    // decision: only its reason's moment (docs/architecture.md, "The pass"). Each run's head
    // lies in its group's own storage: asked for a few runs ahead.
    if (settle_first && i + 4 < band.runs.size()) __builtin_prefetch(band.runs[i + 4].first);
    if (settle_first && SettleRemembered(r)) continue;
    queue.PushRun(r.tenant, r.first, r.last, r.tag);
  }
  for (JobId id : band.jobs) queue.Push(state_.job(id));
  // A run is silent while its group is settled (see TryJob): its jobs get the settled reason
  // in batches, without being read. So is a run whose next job is remembered to fail, once the
  // reservation is decided: tried, it would fail without a look at the fleet and settle its
  // group (unless it would leave a guaranteed band for the burstable one: it is tried then).
  auto silent = [&](uint32_t tag, const QueuedJob& head) {
    if (tag == UINT32_MAX || !may_settle_ || !runs_[tag].batch) return false;
    if (settled_[runs_[tag].slot].version == PathVersion(TenantId(runs_[tag].key.tenant))) return true;
    if (!reservation_tried_ || !failed_memo_) return false;
    const AdmissionResult* a = RunHeadRemembered(tag, JobId(head.id));
    return a && !(key.admission_rank == 0 && a->fits && a->admission != AdmissionClass::kGuaranteed);
  };
  auto settle = [&](uint32_t tag, const QueuedJob* first, const QueuedJob* last) {
    const RunInfo& info = runs_[tag];
    const uint64_t version = PathVersion(TenantId(info.key.tenant));
    if (settled_[info.slot].version != version) {
      // Silent for its head's remembered failure (silent said so in this PopNext call, and
      // nothing it asks changed since): the head fails so, and its group settles.
      const JobId head(first->id);
      const uint32_t why = RememberedRunReason(tag, head, RunAdmission(tag, head));
      settled_[info.slot] = {version, why};
    }
    const uint32_t why = settled_[info.slot].why;
    for (; first != last; ++first) PendingAgain(JobId(first->id), why);
  };
  while (auto next = queue.PopNext(silent, settle)) TryJob(state_.job(next->job), key, next->tag);
}

// The MIG tasks of a waiting job that find no instance even one group at a time: demand for
// the re-layout phase (tasks that could be placed alone wait for something else).
bool Pass::Inert(TenantId t) {
  int8_t& inert = inert_[t.value()];
  if (inert < 0) {
    const Tenant& x = state_.tenants().tenant(t);
    inert = !x.has_any_guarantee();
    for (int r = 0; r < state_.resource_names().size() && inert; ++r) inert = x.max[static_cast<ResourceId>(r)] == kUnlimited;
  }
  return inert;
}

uint32_t Pass::RunSlot(const GroupKey& key) {
  // Groups are in key order (tenant, shape, priority, then kind and flags), so the runs that
  // share a group key are adjacent: look back over those of the same tenant, shape and
  // priority rather than hash every group of every pass.
  for (size_t i = runs_.size(); i-- > 0;) {
    const GroupKey& k = runs_[i].key;
    if (k.tenant != key.tenant || k.shape != key.shape || k.priority != key.priority) break;
    if (k == key) return runs_[i].slot;
  }
  settled_.push_back({UINT64_MAX, 0});
  return static_cast<uint32_t>(settled_.size() - 1);
}

uint32_t Pass::SettledSlot(const GroupKey& key) {
  if (!runs_indexed_) {
    // The runs' slots first, as Triage gave them (the first run of a key holds its slot).
    settled_slot_.Reserve(runs_.size() + 16);
    for (const RunInfo& r : runs_) settled_slot_.TryEmplace(r.key, r.slot);
    runs_indexed_ = true;
  }
  auto [slot, added] = settled_slot_.TryEmplace(key, static_cast<uint32_t>(settled_.size()));
  if (added) settled_.push_back({UINT64_MAX, 0});
  return *slot;
}

uint64_t Pass::PathSum(TenantId t) const {
  // Asked for every waiting run's head once a placement moved a version: the sum is kept per
  // tenant until the next placement that moves one (the walk reads each tenant on the path).
  PathKept& kept = path_kept_[t.value()];
  if (kept.moves != version_moves_) {
    uint64_t v = 0;
    for (TenantId a = t; a.valid(); a = state_.tenants().tenant(a).parent) v += usage_version_[a.value()];
    kept = {version_moves_, v};
  }
  return kept.version;
}

void Pass::CountUnmetMig(const Job& job) {
  for (const TaskGroup& g : job.spec.groups) {
    if (g.share != ShareKind::kMig) continue;
    size_t mark = view_.Mark();
    int placed = 0;
    while (placed < g.count && PlaceShare(view_, job.spec.gpu_resource, g, job.spec.tenant, view_.Eligible(job.spec.require))) ++placed;
    view_.Rollback(mark);
    if (placed == g.count) continue;
    MigDemand& d = mig_unmet_[{job.spec.gpu_resource, g.mig_profile}];
    d.count += g.count - placed;
    d.cpu = d.count == g.count - placed ? g.cpu : std::min(d.cpu, g.cpu);
    d.memory = d.count == g.count - placed ? g.memory : std::min(d.memory, g.memory);
  }
}

// The share scorer for a GPU model, built once per pass from the MPS shapes submitted so far.
const Scorer* Pass::ShareScorer(ResourceId res) {
  auto it = share_scorers_.find(res);
  if (it != share_scorers_.end()) return it->second.get();
  std::vector<std::pair<PodShape, int64_t>> counts;
  for (const auto& [key, n] : state_.mps_shapes()) {
    const auto& [r, percent, cpu, memory] = key;
    if (r == res) counts.push_back({PodShape{cpu, memory, static_cast<int32_t>(percent) * 10, 1, 0}, n});
  }
  std::unique_ptr<Scorer> s = counts.empty() ? nullptr : MakeScorer(config_.share_policy, BuildWorkloadModel(counts));
  return share_scorers_.emplace(res, std::move(s)).first->second.get();
}

void Pass::Pending(JobId job, std::string reason) {
  plan_.pending.push_back({job, static_cast<uint32_t>(plan_.reasons.size())});
  plan_.reasons.push_back(std::move(reason));
}

void Pass::TryJob(const Job& job, const BandKey& band, uint32_t tag) {
  // A job kept off GPUs (a noisy-neighbour move in force) may fail where its shape fits: its
  // outcome is not memoised for the shape. So may an untrusted tenant's job while some node's
  // agent cannot confine tasks in every way (isolation=partial): it is kept off those nodes.
  // (An untrusted tenant's jobs are tried one by one: its pools are restricted, Triage.)
  auto kept = kept_off_.find(job.id.value());
  const Fleet& fleet = state_.fleet();
  const bool barred = KeptOffPartial(job.spec.tenant);
  if (kept == kept_off_.end() && !barred) return TryJobOnView(job, band, tag);
  if (kept != kept_off_.end()) view_.SetKeptOff(&kept->second);
  if (barred) view_.PushExcluded(&fleet.partial_isolation());
  memo_ = false;
  const size_t pending = plan_.pending.size();
  TryJobOnView(job, band, tag);
  view_.SetKeptOff(nullptr);
  if (barred) view_.PopExcluded();
  memo_ = true;
  if (plan_.pending.size() > pending && plan_.pending.back().job == job.id) {
    // Its own text: the one it failed with may be shared with its group's other jobs.
    PendingReason& p = plan_.pending.back();
    std::string why = plan_.reasons[p.why];
    if (barred) {
      const int32_t n = fleet.partial_isolation_nodes();
      why += "; its tenant is untrusted: kept off the " + std::to_string(n) + " node" + (n == 1 ? "" : "s") +
             " whose agent cannot confine tasks in every way (isolation=partial)";
    }
    if (kept != kept_off_.end()) {
      for (const auto& [node, gpu] : kept->second) {
        why += "; kept off GPU " + std::to_string(gpu) + " of node '" + fleet.node(node).name +
               "' by a noisy-neighbour move until it is lifted";
      }
    }
    p.why = static_cast<uint32_t>(plan_.reasons.size());
    plan_.reasons.push_back(std::move(why));
  }
}

void Pass::TryJobOnView(const Job& job, const BandKey& band, uint32_t tag) {
  const ResourceNames& names = state_.resource_names();
  // 2'. A job of a group settled since the last placement fails as the one that settled it.
  //     A job with victims of its own is tried for itself (it may be waiting for them).
  //     A job kept off GPUs fails on a narrower view than its group's, and an array element
  //     may wait for its array's limit instead: neither settles a group nor is settled by one.
  bool settles = may_settle_ && memo_ && job.spec.array.empty() && !job.has_shares && !state_.has_victims(job.id);
  GroupKey key{job.shape, job.spec.tenant.value(), job.spec.priority,
               static_cast<uint8_t>(band.admission_rank | (job.best_effort ? 2 : 0))};
  // A job popped from a run of its own group has the run's slot.
  uint32_t slot = 0;
  if (settles) {
    slot = tag != UINT32_MAX && runs_[tag].key == key ? runs_[tag].slot : SettledSlot(key);
    const Settled& it = settled_[slot];
    if (it.version == PathVersion(job.spec.tenant)) return PendingAgain(job.id, it.why);
  }
  // After the job's Pending: its group settles on the reason it was given.
  auto settle = [&] {
    if (settles) settled_[slot] = {PathVersion(job.spec.tenant), plan_.pending.back().why};
  };
  // 2a. Quota: max at every ancestor; class guaranteed or burstable, with this pass's usage.
  AdmissionResult a = AdmitJob(job);
  // 2a'. The gate (budgets): a held job neither starts nor preempts.
  if (gate_) {
    std::string why = gate_->Hold(job, a.fits ? a.admission : AdmissionClass::kBurstable);
    if (!why.empty()) return Pending(job.id, std::move(why));
  }
  // 2a''. An array element beyond its array's parallel limit neither starts nor preempts.
  if (!job.spec.array.empty()) {
    if (std::string why = ArrayHold(job); !why.empty()) return Pending(job.id, std::move(why));
  }
  if (!a.fits) {
    const bool remembered = RememberedToFail(job, AdmissionClass::kBurstable, /*quota_blocked=*/true);
    if (remembered || !TryPreempt(job, AdmissionClass::kBurstable, /*quota_blocked=*/true)) {
      if (!remembered) RememberFailure(job, AdmissionClass::kBurstable, /*quota_blocked=*/true);
      Pending(job.id, QuotaReason(a, state_.tenants(), names));
      settle();
    }
    return;
  }
  if (band.admission_rank == 0 && a.admission != AdmissionClass::kGuaranteed) {
    // Guarantees filled up earlier in this pass: compete again among the burstable.
    bands_[{1, band.neg_priority}].jobs.push_back(job.id);
    return;
  }
  // 2b. Placement, skipping shapes already known not to fit in this pass, and jobs known to
  //     fail since an earlier pass (no domain can hold them, even with every victim freed).
  const bool remembered = RememberedToFail(job, a.admission, /*quota_blocked=*/false);
  int32_t unmemoised = -1;
  int32_t& failed = memo_ ? failed_shape_[job.shape] : unmemoised;
  if (failed < 0 && !remembered) {
    if (DelaysLikeTheLast(job)) return PendingAgain(job.id, DelayReason());
    size_t mark = view_.Mark();
    auto tasks = PlaceSpread(job);
    if (!tasks) tasks = PlaceGang(view_, job.spec);
    if (tasks) {
      if (plan_.reservation && DelaysReservation(job, *tasks)) {
        view_.Rollback(mark);
        if (PlacedByShape(job)) delaying_ = {job.shape, mark};
        return PendingAgain(job.id, DelayReason());
      }
      return Commit(job, a.admission, std::move(*tasks));
    }
  }
  if (failed < 0) failed = ExplainFailure(job);
  // 2b'. Capacity kept for a reservation's window about to open, lent to a job that ends first.
  if (!drain_blocks_.empty()) {
    size_t mark = view_.Mark();
    if (auto tasks = PlaceLent(job)) {
      if (!plan_.reservation || !DelaysReservation(job, *tasks)) return Commit(job, a.admission, std::move(*tasks));
      view_.Rollback(mark);
    }
  }
  // 2c. Preemption, simulated on the view; else the reason it waits — and the first job to
  //     wait for capacity gets the backfill reservation.
  if (!remembered) {
    if (TryPreempt(job, a.admission, /*quota_blocked=*/false)) return;
    RememberFailure(job, a.admission, /*quota_blocked=*/false);
  }
  if (job.has_shares) CountUnmetMig(job);
  if (!reservation_tried_) Reserve(job);
  if (!drain_blocks_.empty()) {
    Pending(job.id, failed_why_[failed] + DrainNote(job));
  } else {
    PendingAgain(job.id, ReasonAt(failed));
  }
  settle();
}

bool Pass::PlacedByShape(const Job& job) const {
  // A service's replica may be spread away from its siblings (PlaceSpread), and a job kept off
  // GPUs (memo_ false) sees a narrower view.
  return memo_ && !state_.ServiceOf(job.id).valid();
}

bool Pass::DelaysLikeTheLast(const Job& job) const {
  // Only Commit changes the view for good within a band, and only by appending to its undo log
  // (a trial rolls back to its own mark): the same mark is the same view. delaying_ is set only
  // once the reservation is decided, which it stays for the rest of the pass.
  return delaying_.shape == job.shape && delaying_.mark == view_.Mark() &&
         now_ + job.estimated_remaining_ms() > plan_.reservation->start_ms && PlacedByShape(job);
}

uint32_t Pass::DelayReason() {
  if (delay_why_ < 0) {
    delay_why_ = static_cast<int32_t>(plan_.reasons.size());
    plan_.reasons.push_back("backfill: would delay " + state_.job(plan_.reservation->job).spec.name +
                            ", reserved to start at " + FormatWhen(plan_.reservation->start_ms) +
                            "; it may start when it fits elsewhere or ends by then (time limit)");
  }
  return static_cast<uint32_t>(delay_why_);
}

// The index in plan_.reasons of failed_why_[failed], given there once per pass.
uint32_t Pass::ReasonAt(int32_t failed) {
  int32_t& at = failed_why_at_[failed];
  if (at < 0) {
    at = static_cast<int32_t>(plan_.reasons.size());
    plan_.reasons.push_back(failed_why_[failed]);
  }
  return static_cast<uint32_t>(at);
}

int32_t Pass::ExplainFailure(const Job& job) {
  failed_why_.push_back(ExplainNoFit(view_, job.spec, state_.resource_names()));
  failed_why_at_.push_back(-1);
  return static_cast<int32_t>(failed_why_.size() - 1);
}

uint32_t Pass::ShapeReason(uint32_t shape, JobId some) {
  int32_t& failed = failed_shape_[shape];
  if (failed < 0) failed = ExplainFailure(state_.job(some));
  return ReasonAt(failed);
}

void Pass::Commit(const Job& job, AdmissionClass admission, std::vector<TaskPlacement> tasks) {
  const int64_t end = now_ + job.estimated_remaining_ms();
  pass_ends_.push_back({end, static_cast<uint32_t>(plan_.placements.size())});
  // The fleet at the reservation's start holds what is still running then.
  if (at_start_ && end > plan_.reservation->start_ms) {
    for (const TaskPlacement& t : tasks) at_start_->Take(t);
  }
  bool moved = false;
  for (TenantId t = job.spec.tenant; t.valid(); t = state_.tenants().tenant(t).parent) {
    if (!Inert(t)) {
      usage_version_[t.value()] += 1;
      versions_moved_ = moved = true;
    }
  }
  version_moves_ += moved;
  usage_.Add(job.spec.tenant, job.demand, admission == AdmissionClass::kGuaranteed, +1);
  queue_.OnUsageChanged(job.spec.tenant);
  if (gate_) gate_->Placed(job, admission);
  if (!job.spec.array.empty()) ArrayPlaced(job);
  if (ServiceId s = state_.ServiceOf(job.id); s.valid()) {
    for (const TaskPlacement& t : tasks) spread_placed_[s.value()].push_back(t.node);
  }
  if (failed_memo_) CountPlaced(tasks);
  plan_.placements.push_back({job.id, admission, std::move(tasks)});
}

Status VerifyPlan(const ClusterState& state, const Plan& plan) {
  std::unordered_set<uint32_t> placed;
  for (const PlannedPlacement& p : plan.placements) placed.insert(p.job.value());
  for (const PlannedPreemption& p : plan.preemptions) {
    const Job& victim = state.job(p.victim);
    const Job& preemptor = state.job(p.preemptor);
    if (placed.count(p.victim.value())) return Internal("job " + victim.spec.name + " both placed and preempted");
    if (p.kind == PreemptKind::kIsolation) {
      if (p.victim != p.preemptor || !state.Untrusted(victim.spec.tenant)) {
        return Internal("job " + victim.spec.name + " moved for isolation though its tenant is trusted");
      }
      continue;  // its own tenant's safety, whatever its class
    }
    if (victim.admission == AdmissionClass::kReserved && p.kind != PreemptKind::kWindowEnd) {
      return Internal("job " + victim.spec.name + " evicted from its reservation by " + preemptor.spec.name);
    }
    // A reservation reclaims what it lent, guaranteed or not.
    if (victim.admission == AdmissionClass::kGuaranteed && p.kind != PreemptKind::kReservation &&
        (p.kind != PreemptKind::kPriority || victim.spec.tenant != preemptor.spec.tenant)) {
      return Internal("guaranteed job " + victim.spec.name + " evicted by another tenant's " + preemptor.spec.name);
    }
  }
  return Status::Ok();
}

}  // namespace allot
