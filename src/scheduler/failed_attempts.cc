// The cross-pass memo of failed attempts (failed_attempts.h), and the pass's side of it: when
// a job may be looked up or remembered, what a remembered failure leaves in the pass's own
// memos, and the bound B_d an entry is made from.
#include "scheduler/failed_attempts.h"

#include <algorithm>
#include <bit>

#include "scheduler/pass.h"

namespace allot {

void FailedAttempts::Sync(const ClusterState& state) {
  const DomainKind kinds[2] = {DomainKind::kRack, DomainKind::kZone};
  if (&state != state_ || state.change_epoch() != epoch_) {
    for (const Entry& e : entries_) {
      at_[e.job] = -1;
      SetBits(e.job, 0);
    }
    entries_.clear();
    state_ = &state;
    epoch_ = state.change_epoch();
    shape_changes_ = state.shape_changes();
    for (int k = 0; k < 2; ++k) seen_[k] = state.released_gpus(kinds[k]);
    return;
  }
  // GPUs given back since the last call, by kind and domain (a pass follows a few events).
  struct Given {
    int kind;
    uint32_t domain;
    int32_t gpus;
  };
  std::vector<Given> given;
  for (int k = 0; k < 2; ++k) {
    const std::vector<int64_t>& now = state.released_gpus(kinds[k]);
    std::vector<int64_t>& seen = seen_[k];
    for (size_t d = 0; d < now.size(); ++d) {
      int64_t g = now[d] - (d < seen.size() ? seen[d] : 0);
      if (g > 0) given.push_back({k, static_cast<uint32_t>(d), static_cast<int32_t>(std::min<int64_t>(g, INT32_MAX))});
    }
    seen = now;
  }
  // One walk: an entry dies once a domain of its kind got back more than its slack there, or
  // when its job is no longer pending as it was. Whether it is pending is one bit of the
  // state's pending set; its shape is read (a cold job a pass each) only when some job's shape
  // changed since the last walk.
  const bool shapes_moved = state.shape_changes() != shape_changes_;
  shape_changes_ = state.shape_changes();
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    bool dead = false;
    for (const Given& g : given) {
      if (g.kind != e.kind) continue;
      if (g.domain >= e.slack.size() || (e.slack[g.domain] -= g.gpus) < 0) dead = true;
    }
    dead = dead || !state.pending().contains(JobId(e.job)) || (shapes_moved && state.job(JobId(e.job)).shape != e.shape);
    if (dead) {
      Forget(i);  // the last entry moves to i: looked at next
    } else {
      ++i;
    }
  }
}

void FailedAttempts::Forget(size_t i) {
  at_[entries_[i].job] = -1;
  SetBits(entries_[i].job, 0);
  if (i + 1 != entries_.size()) {
    entries_[i] = std::move(entries_.back());
    at_[entries_[i].job] = static_cast<int32_t>(i);
  }
  entries_.pop_back();
}

void FailedAttempts::Remember(JobId id, uint32_t shape, bool with_burstable, DomainKind kind, std::vector<int32_t> slack) {
  if (at_.size() <= id.value()) at_.resize(std::max<size_t>(id.value() + 1, at_.size() * 2), -1);
  Entry e{id.value(), shape, with_burstable, kind == DomainKind::kZone ? 1 : 0, std::move(slack)};
  SetBits(id.value(), with_burstable ? 3 : 1);
  int32_t& at = at_[id.value()];
  if (at >= 0) {
    entries_[static_cast<size_t>(at)] = std::move(e);
  } else {
    at = static_cast<int32_t>(entries_.size());
    entries_.push_back(std::move(e));
  }
  ++remembered_;
}

// The memo's domain kind for the job (0 rack, 1 zone), or -1 when the memo may not hold it:
// only whole-GPU rack and zone gangs whose failure is decided by the pass alone (no shares, no
// array limit, no victims of their own, not a service replica that spreads).
namespace {

// MemoKind's part that depends on the job's shape only.
int MemoKindOfShape(const Job& job) {
  if (job.has_shares || job.demand.gpu <= 0 || job.demand.gpu % kGpuUnit != 0) return -1;
  if (job.spec.topology == Topology::kRack) return 0;
  if (job.spec.topology == Topology::kZone) return 1;
  return -1;
}

}  // namespace

int Pass::MemoKind(const Job& job) const {
  if (!failed_memo_) return -1;
  if (!job.spec.array.empty() || state_.has_victims(job.id) || state_.ServiceOf(job.id).valid()) return -1;
  return MemoKindOfShape(job);
}

int Pass::ShapeMemoKind(uint32_t shape, JobId some) {
  int8_t& k = shape_memo_kind_[shape];
  if (k == -2) k = static_cast<int8_t>(MemoKindOfShape(state_.job(some)));
  return k;
}

bool Pass::VictimsMayBeBurstable(AdmissionClass admission, bool quota_blocked) const {
  return !quota_blocked && (admission == AdmissionClass::kGuaranteed || config_.fair_share_preemption);
}

bool Pass::RememberedToFail(const Job& job, AdmissionClass admission, bool quota_blocked) {
  return MemoKind(job) >= 0 && Remembered(job.id, job.shape, job.spec.tenant, job.spec.priority, admission, quota_blocked);
}

bool Pass::Remembered(JobId id, uint32_t shape, TenantId tenant, int32_t priority, AdmissionClass admission,
                      bool quota_blocked) {
  if (!failed_memo_->Fails(id, VictimsMayBeBurstable(admission, quota_blocked))) return false;
  RecordRemembered(shape, admission, quota_blocked);
  // A job tried alone also leaves its tenant's attempt memoised, as TryPreempt's failure would
  // (a remembered run settled at once does not: only its own group's jobs could read it).
  failed_tenant_attempts_.TryEmplace({shape, tenant.value(), priority, static_cast<uint8_t>(admission), quota_blocked}, true);
  return true;
}

void Pass::RecordRemembered(uint32_t shape, AdmissionClass admission, bool quota_blocked) {
  failed_memo_->CountHit();
  // What TryPreempt leaves behind when every kind fails: reclaim memoised for the shape (when
  // it would have been tried).
  if (!quota_blocked && admission == AdmissionClass::kGuaranteed) failed_reclaim_[shape] = true;
}

const AdmissionResult* Pass::RunHeadRemembered(uint32_t tag, JobId head) {
  // What RememberedToFail(head, ...) decides, read from the run's group rather than the head
  // (a pass settles every waiting group): a run holds neither array elements nor jobs with
  // victims of their own (Triage cuts those out), so only the shape and whether the head is
  // a service's replica say whether the memo may hold it.
  const RunInfo& info = runs_[tag];
  const uint32_t shape = info.key.shape;
  if (!info.batch || ShapeMemoKind(shape, head) < 0 || state_.ServiceOf(head).valid()) return nullptr;
  const AdmissionResult& a = RunAdmission(tag, head);
  const bool quota_blocked = !a.fits;
  const AdmissionClass admission = quota_blocked ? AdmissionClass::kBurstable : a.admission;
  if (!failed_memo_->Fails(head, VictimsMayBeBurstable(admission, quota_blocked))) return nullptr;
  return &a;
}

const AdmissionResult& Pass::RunAdmission(uint32_t tag, JobId head) {
  RunInfo& info = runs_[tag];
  const TenantId tenant(info.key.tenant);
  // Kept with the run while the tenant's PathVersion holds (it is the same until then).
  if (const uint64_t version = PathVersion(tenant); version != info.admitted_version) {
    info.admitted = AdmitAs(tenant, ShapeDemand(info.key.shape, head), info.key.rank & 2);
    info.admitted_version = version;
  }
  return info.admitted;
}

uint32_t Pass::RememberedRunReason(uint32_t tag, JobId head, const AdmissionResult& a) {
  const RunInfo& info = runs_[tag];
  const uint32_t shape = info.key.shape;
  const bool quota_blocked = !a.fits;
  const AdmissionClass admission = quota_blocked ? AdmissionClass::kBurstable : a.admission;
  // The tenant's attempt is not entered: the only jobs that could read it are its group's, and
  // the run settles them all (a job of its key outside the run would search and fail alike).
  RecordRemembered(shape, admission, quota_blocked);
  failed_memo_->CountRunSettled();
  if (quota_blocked) {
    plan_.reasons.push_back(QuotaReason(a, state_.tenants(), state_.resource_names()));
    return static_cast<uint32_t>(plan_.reasons.size() - 1);
  }
  return ShapeReason(shape, head);  // nothing fits it now: the shape fails for every job this pass
}

bool Pass::SettleRemembered(const Band::RunRef& run) {
  // Admission as the head would meet it now; a guaranteed band's job that became burstable
  // would fail in the burstable band the same way.
  const JobId head(run.first->id);
  const AdmissionResult* a = RunHeadRemembered(run.tag, head);
  if (!a) return false;
  const uint32_t why = RememberedRunReason(run.tag, head, *a);
  for (const QueuedJob* q = run.first; q != run.last; ++q) PendingAgain(JobId(q->id), why);
  return true;
}

void Pass::RememberFailure(const Job& job, AdmissionClass admission, bool quota_blocked) {
  int k = MemoKind(job);
  if (k < 0) return;
  const DomainKind kind = k == 0 ? DomainKind::kRack : DomainKind::kZone;
  const bool with_burstable = VictimsMayBeBurstable(admission, quota_blocked);
  const ResourceId res = job.spec.gpu_resource;
  const int64_t need = job.demand.gpu / kGpuUnit;
  const size_t domains = state_.fleet().domains(kind).size();
  std::vector<int32_t> slack(domains);
  const std::vector<int64_t>& own = CandidateGpus(job, k);
  // Every burstable job's GPUs (of any model: an upper bound), as the state keeps them.
  const std::vector<int64_t>* burstable = with_burstable ? &state_.burstable_gpus(kind) : nullptr;
  for (size_t d = 0; d < domains; ++d) {
    int64_t b = view_.DomainFreeGpus(kind, static_cast<uint32_t>(d), res) + own[d];
    if (d < pass_placed_[k].size()) b += pass_placed_[k][d];
    if (burstable && d < burstable->size()) b += (*burstable)[d];
    if (b >= need) return;  // it could fit there some day without anything given back
    slack[d] = static_cast<int32_t>(need - 1 - b);
  }
  failed_memo_->Remember(job.id, job.shape, with_burstable, kind, std::move(slack));
}

// GPUs of the job's model per domain (0 rack, 1 zone) held by the running jobs its priority
// preemption could take: its tenant's, below its priority, not running in a reservation (the
// cooldown ignored: an upper bound). Built once per pass and (tenant, priority, model, kind).
const std::vector<int64_t>& Pass::CandidateGpus(const Job& job, int k) {
  const TenantId tenant = job.spec.tenant;
  const ResourceId res = job.spec.gpu_resource;
  CandidateKey key{tenant.value(), job.spec.priority, static_cast<uint16_t>(res), static_cast<uint8_t>(k)};
  auto it = candidate_gpus_.find(key);
  if (it != candidate_gpus_.end()) return it->second;
  const DomainKind kind = k == 0 ? DomainKind::kRack : DomainKind::kZone;
  std::vector<int64_t> gpus(state_.fleet().domains(kind).size(), 0);
  // The state keeps them by priority and model: the levels below the job's are summed.
  for (const ClusterState::RunningGpus& l : state_.running_gpus(tenant)) {
    if (l.priority >= job.spec.priority) break;
    if (l.res != res) continue;
    const std::vector<int64_t>& by = l.by_domain[k];
    for (size_t d = 0; d < by.size() && d < gpus.size(); ++d) gpus[d] += by[d];
  }
  return candidate_gpus_.emplace(key, std::move(gpus)).first->second;
}

void Pass::CountPlaced(const std::vector<TaskPlacement>& tasks) {
  const Fleet& fleet = state_.fleet();
  for (const TaskPlacement& p : tasks) {
    int gpus = std::popcount(p.gpu_mask);
    if (gpus == 0) continue;
    const Node& n = fleet.node(p.node);
    for (int k = 0; k < 2; ++k) {
      std::vector<int64_t>& v = pass_placed_[k];
      uint32_t d = k == 0 ? n.rack : n.zone;
      if (v.size() <= d) v.resize(d + 1, 0);
      v[d] += gpus;
    }
  }
}

}  // namespace allot
