#include "state/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <type_traits>

#include "core/quantity.h"
#include "core/sorted_vector.h"
#include "state/domain_gpus.h"
#include "state/share_request.h"

namespace allot {

namespace {

// A placement's MPS shares name the job's tenant (TaskShare::tenant is derived, not journalled).
void StampShares(std::vector<TaskPlacement>& placement, TenantId tenant) {
  for (TaskPlacement& p : placement)
    if (p.share.kind == ShareKind::kMps) p.share.tenant = tenant;
}

}  // namespace

Status ClusterState::apply(const Event& event) {
  Status s = std::visit([&](const auto& e) { return Apply(event.time_ms, e); }, event.body);
  if (s.ok()) {
    // Events that give capacity back only through ReleaseResources (counted there), or that
    // take capacity, or that no placement or preemption decision reads, keep the epoch.
    bool keeps = std::visit(
        [](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          return std::is_same_v<T, JobSubmitted> || std::is_same_v<T, JobRejected> || std::is_same_v<T, JobPlaced> ||
                 std::is_same_v<T, JobPreemptionStarted> || std::is_same_v<T, JobStopped> ||
                 std::is_same_v<T, JobFinished> || std::is_same_v<T, JobCancelled> || std::is_same_v<T, JobFailed> ||
                 std::is_same_v<T, ReservationSet> || std::is_same_v<T, TokenIssued> ||
                 std::is_same_v<T, TokenRevoked> || std::is_same_v<T, AuditRecorded> ||
                 std::is_same_v<T, BudgetWarned> || std::is_same_v<T, LedgerAppended> ||
                 std::is_same_v<T, TaskRunReported> || std::is_same_v<T, SshKeyAdded> ||
                 std::is_same_v<T, SshKeyRemoved> || std::is_same_v<T, TemplateSaved> ||
                 std::is_same_v<T, TemplateRemoved>;
        },
        event.body);
    if (!keeps) change_epoch_ = NextEpoch();
  }
  return s;
}

uint64_t ClusterState::NextEpoch() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void ClusterState::CountGpus(std::vector<int64_t> (&by_domain)[2], const Job& j, int sign) const {
  for (const TaskPlacement& p : j.placement) {
    int gpus = std::popcount(p.gpu_mask);
    if (gpus == 0 || !p.node.valid() || p.node.value() >= fleet_.size()) continue;
    domain_gpus::Add(by_domain, fleet_.node(p.node), int64_t{sign} * gpus);
  }
}

const std::vector<ClusterState::RunningEntry>& ClusterState::running_in(TenantId t) const {
  static const std::vector<RunningEntry> kEmpty;
  return t.value() < running_by_tenant_.size() ? running_by_tenant_[t.value()] : kEmpty;
}

const std::vector<ClusterState::RunningGpus>& ClusterState::running_gpus(TenantId t) const {
  static const std::vector<RunningGpus> kEmpty;
  return t.value() < running_gpus_.size() ? running_gpus_[t.value()] : kEmpty;
}

void ClusterState::CountRunningGpus(const Job& j, int sign) {
  if (j.admission == AdmissionClass::kReserved) return;
  if (running_gpus_.size() <= j.spec.tenant.value()) running_gpus_.resize(tenants_.size());
  domain_gpus::AddToLevels(running_gpus_[j.spec.tenant.value()], fleet_, j, sign);
}

std::vector<JobId> ClusterState::victims_of(JobId preemptor) const {
  std::vector<JobId> out;
  for (auto it = preempting_by_preemptor_.lower_bound({preemptor, JobId(0)});
       it != preempting_by_preemptor_.end() && it->first == preemptor; ++it) {
    out.push_back(it->second);
  }
  return out;
}

ClusterState::PendingKey ClusterState::PendingKeyOf(const Job& j) {
  uint8_t flags = (j.best_effort ? PendingKey::kBestEffort : 0) | (j.has_shares ? PendingKey::kShares : 0) |
                  (j.spec.reservation.empty() ? 0 : PendingKey::kNamesReservation) |
                  (j.spec.after.empty() && j.spec.array.empty() ? 0 : PendingKey::kHeld);
  return {j.spec.tenant.value(), j.shape, j.spec.priority, static_cast<uint8_t>(j.spec.kind), flags};
}

void ClusterState::PendingGroup::Insert(QueuedJob q) {
  auto from = jobs_.begin() + static_cast<std::ptrdiff_t>(head_);
  jobs_.insert(std::lower_bound(from, jobs_.end(), q), q);
}

void ClusterState::PendingGroup::Erase(QueuedJob q) {
  auto from = jobs_.begin() + static_cast<std::ptrdiff_t>(head_);
  auto at = std::lower_bound(from, jobs_.end(), q);
  if (at == jobs_.end() || *at != q) return;
  if (at != from) {
    jobs_.erase(at);
    return;
  }
  ++head_;
  if (head_ == jobs_.size()) {
    jobs_.clear();
    head_ = 0;
  } else if (head_ * 2 >= jobs_.size()) {
    jobs_.erase(jobs_.begin(), jobs_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

void ClusterState::AddPending(const Job& j) {
  pending_.insert(j.id);
  pending_groups_[PendingKeyOf(j)].Insert({j.queued_ms, j.id.value()});
}

void ClusterState::ErasePending(const Job& j) {
  pending_.erase(j.id);
  auto it = pending_groups_.find(PendingKeyOf(j));
  if (it == pending_groups_.end()) return;
  it->second.Erase({j.queued_ms, j.id.value()});
  if (it->second.empty()) pending_groups_.erase(it);
}

bool ClusterState::has_victims(JobId preemptor) const {
  if (preempting_by_preemptor_.empty()) return false;
  auto it = preempting_by_preemptor_.lower_bound({preemptor, JobId(0)});
  return it != preempting_by_preemptor_.end() && it->first == preemptor;
}

JobId ClusterState::FindJob(TenantId tenant, std::string_view name) const {
  auto it = jobs_by_name_.find(std::string(name));
  if (it == jobs_by_name_.end()) return JobId();
  if (it->second.first_tenant == tenant) return it->second.first;
  for (JobId id : it->second.more) {
    if (jobs_[id.value()].spec.tenant == tenant) return id;
  }
  return JobId();
}

void ClusterState::ReserveJobs(size_t n) {
  jobs_.reserve(jobs_.size() + n);
  jobs_by_name_.reserve(jobs_by_name_.size() + n);
}

void ClusterState::IndexName(const Job& j) {
  auto [it, added] = jobs_by_name_.try_emplace(j.spec.name);
  if (added) {
    it->second.first = j.id;
    it->second.first_tenant = j.spec.tenant;
  } else {
    it->second.more.push_back(j.id);
  }
}

const std::vector<JobId>& ClusterState::ArrayElements(TenantId tenant, std::string_view name) const {
  static const std::vector<JobId> kNone;
  auto it = arrays_.find({tenant.value(), std::string(name)});
  return it == arrays_.end() ? kNone : it->second;
}

std::vector<JobId> ClusterState::JobsNamed(std::string_view name) const {
  auto it = jobs_by_name_.find(std::string(name));
  if (it == jobs_by_name_.end()) return {};
  std::vector<JobId> out{it->second.first};
  out.insert(out.end(), it->second.more.begin(), it->second.more.end());
  return out;
}

Result<Job*> ClusterState::MutableJob(JobId id) {
  if (!id.valid() || id.value() >= jobs_.size()) {
    return Err(NotFound("job id " + std::to_string(id.value()) + " does not exist"));
  }
  return &jobs_[id.value()];
}

Status ClusterState::Apply(int64_t, const NodeAdded& e) {
  auto id = fleet_.AddNode(e.spec, names_);
  return id ? Status::Ok() : id.error();
}

Status ClusterState::Apply(int64_t, const NodeConditionChanged& e) {
  if (!e.node.valid() || e.node.value() >= fleet_.size()) return NotFound("node does not exist");
  fleet_.SetCondition(e.node, e.condition);
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const NodeRegistered& e) {
  NodeId id = fleet_.Find(e.spec.name);
  if (!id.valid()) {
    auto added = fleet_.AddNode(e.spec, names_);
    if (!added) return added.error();
    fleet_.SetCondition(*added, NodeCondition::kAccepting);
    fleet_.SetAgentManaged(*added);
    agent_managed_.resize(fleet_.size());
    agent_managed_[added->value()] = 1;
    return Status::Ok();
  }
  // The inventory must match what the fleet holds (the MIG layout is share state, not inventory).
  // Nor are the labels: a restarted agent may report a new driver; they replace the old ones.
  if (Status s = CheckLabels("node '" + e.spec.name + "' labels", e.spec.labels); !s.ok()) return s;
  NodeSpec known = fleet_.SpecOf(id, names_);
  NodeSpec now_spec = e.spec;
  now_spec.mig_layout.clear();
  known.labels.clear();
  now_spec.labels.clear();
  if (!(known == now_spec)) {
    return Conflict("node '" + e.spec.name + "' is registered with another inventory (" + std::to_string(known.gpu_count) +
                    " × " + (known.gpu_model.empty() ? "no GPU" : known.gpu_model) + ", " + SharingName(known.sharing) +
                    " pool, zone '" + known.zone + "', rack '" + known.rack + "'); it now reports " +
                    std::to_string(e.spec.gpu_count) + " × " + (e.spec.gpu_model.empty() ? "no GPU" : e.spec.gpu_model) + ", " +
                    SharingName(e.spec.sharing) + " pool, zone '" + e.spec.zone + "', rack '" + e.spec.rack +
                    "': drain it and repair the node, or register it under a new name");
  }
  RequeueJobsOn(id, now, "requeued: the agent of node '" + e.spec.name + "' restarted");
  fleet_.SetLabels(id, e.spec.labels);
  fleet_.SetCondition(id, NodeCondition::kAccepting);
  fleet_.SetAgentManaged(id);
  agent_managed_.resize(fleet_.size());
  agent_managed_[id.value()] = 1;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const NodeFailed& e) {
  if (!e.node.valid() || e.node.value() >= fleet_.size()) return NotFound("node does not exist");
  if (e.condition != NodeCondition::kDown && e.condition != NodeCondition::kRepair &&
      e.condition != NodeCondition::kAccepting) {
    return InvalidArgument(std::string("node failure: condition '") + NodeConditionName(e.condition) +
                           "': expected down, repair or accepting");
  }
  RequeueJobsOn(e.node, now, "requeued: node '" + fleet_.node(e.node).name + "' " + e.reason);
  fleet_.SetCondition(e.node, e.condition);
  return Status::Ok();
}

std::vector<JobId> ClusterState::JobsOn(NodeId node) const {
  if (node.value() >= jobs_on_node_.size()) return {};
  return jobs_on_node_[node.value()];
}

void ClusterState::RequeueJobsOn(NodeId node, int64_t now, const std::string& reason) {
  for (JobId id : JobsOn(node)) {
    Job& j = jobs_[id.value()];
    // The work checkpointed during the run is kept (a simulated job's, by its interval; a
    // command job keeps what it wrote to its checkpoint directory, which the agent preserves).
    int64_t ran = (j.state == JobState::kPreempting ? j.last_preempted_ms : now) - j.last_started_ms;
    if (j.spec.checkpoint_interval_ms > 0 && ran > 0) {
      j.saved_work_ms = std::min(j.spec.duration_ms, j.saved_work_ms + ran / j.spec.checkpoint_interval_ms *
                                                                            j.spec.checkpoint_interval_ms);
    }
    ReleaseResources(j);
    j.ended_runs.push_back({j.last_started_ms, now, j.admission, OnAgents(j)});
    j.state = JobState::kPending;
    j.preempt_deadline_ms = -1;
    j.requeues += 1;
    j.reason = reason;
    ApplyHardening(j);
    AddPending(j);  // at its old queue place: queued_ms is kept
  }
}

Status ClusterState::Apply(int64_t now, const JobFailed& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (e.reason.empty()) return InvalidArgument("job failure: reason: must not be empty");
  if (j.state == JobState::kPending && j.first_started_ms < 0 && !j.spec.after.empty()) {
    // A dependency that can never be met (planned by the pass): the job never runs.
    ErasePending(j);
    if (reservation_ && reservation_->job == j.id) reservation_.reset();
    j.state = JobState::kFailed;
    j.finished_ms = now;
    j.reason = e.reason;
    return Status::Ok();
  }
  if (!j.holds_resources()) return FailedPrecondition("job '" + j.spec.name + "' is not running");
  ReleaseResources(j);
  if (j.failures < j.spec.retries) {
    // Retried: requeued at its old queue place, as after a lost node; the failed run is metered.
    j.ended_runs.push_back({j.last_started_ms, now, j.admission, OnAgents(j)});
    j.failures += 1;
    j.state = JobState::kPending;
    j.preempt_deadline_ms = -1;
    j.reason = "retry " + std::to_string(j.failures) + " of " + std::to_string(j.spec.retries) + " after: " + e.reason;
    ApplyHardening(j);
    AddPending(j);
    return Status::Ok();
  }
  j.state = JobState::kFailed;
  j.finished_ms = now;
  j.reason = e.reason;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const TenantUpserted& e) {
  FloorMap before = FloorsOfOrgs({e.spec.path});
  auto id = tenants_.Upsert(e.spec, names_);
  if (!id) return id.error();
  RecordFloorChanges(now, before, FloorsOfOrgs({e.spec.path}));
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const TenantRemoved& e) {
  TenantId id = tenants_.Find(e.path);
  if (id.valid()) {
    int waiting = 0;
    for (JobId j : pending_) waiting += job(j).spec.tenant == id;
    if (waiting > 0) {
      return Conflict("tenant '" + e.path + "' has " + std::to_string(waiting) +
                      " pending job(s): cancel them first");
    }
    int booked = 0;
    for (const CapacityReservation& r : reservations_) {
      booked += r.spec.tenant == id && r.state == ReservationState::kConfirmed && r.spec.windows.back().end_ms > now;
    }
    if (booked > 0) {
      return Conflict("tenant '" + e.path + "' has " + std::to_string(booked) +
                      " reservation(s) still to come: cancel them first");
    }
  }
  FloorMap before = FloorsOfOrgs({e.path});
  auto removed = tenants_.Remove(e.path);
  if (!removed) return removed.error();
  access_.RevokeScope(*removed);
  // Its templates go with it: a tenant made later at that path is a new tenant.
  templates_.erase(templates_.lower_bound({removed->value(), std::string()}), templates_.lower_bound({removed->value() + 1, std::string()}));
  RecordFloorChanges(now, before, FloorsOfOrgs({e.path}));
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const TenantMoved& e) {
  FloorMap before = FloorsOfOrgs({e.path, e.to});
  auto moved = tenants_.Move(e.path, e.to, names_);
  if (!moved) return moved.error();
  RecordFloorChanges(now, before, FloorsOfOrgs({e.path, e.to}));
  return Status::Ok();
}

bool ClusterState::Untrusted(TenantId t) const {
  const Tenant& x = tenants_.tenant(t);
  if (!x.removed) return x.path_untrusted;  // derived by the tree; a tombstone's is not kept
  for (TenantId a = t; a.valid(); a = tenants_.tenant(a).parent) {
    if (tenants_.tenant(a).trust == Trust::kUntrusted) return true;
  }
  return false;
}

uint8_t ClusterState::AllowedPools(TenantId t) const {
  const Tenant& x = tenants_.tenant(t);
  uint8_t allowed = x.path_pools;
  if (x.removed) {
    allowed = 0xF;
    for (TenantId a = t; a.valid(); a = tenants_.tenant(a).parent) allowed &= tenants_.tenant(a).pools;
  }
  if (Untrusted(t)) allowed &= (1u << static_cast<int>(Sharing::kExclusive)) | (1u << static_cast<int>(Sharing::kMig));
  return allowed;
}

Status ClusterState::Apply(int64_t now, const TokenIssued& e) {
  TokenRecord r = e.record;
  r.issued_ms = now;
  r.revoked = false;
  return access_.Issue(r, tenants_);
}

Status ClusterState::Apply(int64_t, const TokenRevoked& e) { return access_.Revoke(e.hash); }

Status ClusterState::Apply(int64_t, const AuditRecorded& e) {
  if (e.record.prev_hash != last_audit_hash()) {
    return FailedPrecondition("audit record does not follow the last one (prev_hash '" + e.record.prev_hash + "', last '" +
                              last_audit_hash() + "')");
  }
  if (e.record.hash.size() != 64) return InvalidArgument("audit record hash: expected 64 hex digits");
  audit_.push_back(e.record);
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ReservationSet& e) {
  if (!e.job.valid()) {
    reservation_.reset();
    return Status::Ok();
  }
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  if ((*job)->state != JobState::kPending) return FailedPrecondition("job '" + (*job)->spec.name + "' is not pending");
  reservation_ = Reservation{e.job, e.start_ms, now, e.tasks};
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const MigRelayout& e) {
  return fleet_.Relayout(e.node, e.gpu, e.layout, now, e.ready_ms);
}

Status ClusterState::Apply(int64_t, const MigLayoutReported& e) {
  return fleet_.SetNodeMigLayout(e.node, e.gpu, e.layout);
}

Status ClusterState::Apply(int64_t, const JobSubmitted& e) {
  const JobSpec& s = e.spec;
  if (s.name.empty()) return InvalidArgument("job name: must not be empty");
  if (!s.tenant.valid() || s.tenant.value() >= tenants_.size() || s.tenant == tenants_.root() ||
      tenants_.tenant(s.tenant).removed) {
    return NotFound("job '" + s.name + "' tenant: does not exist");
  }
  if (FindJob(s.tenant, s.name).valid()) {
    return Conflict("job '" + s.name + "' already exists in tenant '" + tenants_.tenant(s.tenant).path + "'");
  }
  if (Status r = s.CheckRanges(); !r.ok()) return r;
  if (Status r = CheckArrayAndAfter(s); !r.ok()) return r;
  if (s.TotalDemand().gpu > 0 && (s.gpu_resource < kFirstGpu || s.gpu_resource >= names_.size())) {
    return InvalidArgument("job '" + s.name + "' tasks.gpu_model: no GPU model of the fleet is named");
  }
  Job job;
  job.id = next_job_id();
  job.spec = s;
  if (Status r = ResolveShares(job.spec, fleet_, names_, AllowedPools(s.tenant)); !r.ok()) return r;
  job.demand = job.spec.TotalDemand();
  job.has_shares = job.spec.HasShares();
  for (const TaskGroup& g : job.spec.groups) {
    if (g.share == ShareKind::kMps) mps_shapes_[{job.spec.gpu_resource, g.percent, g.cpu, g.memory}] += g.count;
  }
  job.best_effort = job.spec.BestEffort();
  job.queued_ms = s.submit_ms;
  job.shape = InternShape(job.spec);
  IndexName(job);
  if (!s.array.empty()) arrays_[{s.tenant.value(), s.array.array}].push_back(job.id);
  jobs_.push_back(std::move(job));
  AddPending(jobs_.back());
  return Status::Ok();
}

uint32_t ClusterState::InternShape(const JobSpec& s) {
  std::string shape = std::to_string(s.gpu_resource) + '|' + std::to_string(static_cast<int>(s.topology));
  for (const TaskGroup& g : s.groups) {
    shape += '|' + std::to_string(g.count) + 'x' + std::to_string(g.gpu) + ',' + std::to_string(g.cpu) + ',' +
             std::to_string(g.memory);
    if (g.shared()) {
      shape += ',' + std::to_string(static_cast<int>(g.share)) + ',' + std::to_string(g.mig_profile) + ',' +
               std::to_string(g.percent) + ',' + std::to_string(g.gpu_memory);
    }
  }
  // Jobs that require node labels fit only where those are: the requirement is part of the shape.
  if (!s.require.empty()) shape += "|require:" + FormatRequirements(s.require);
  return shape_ids_.emplace(std::move(shape), static_cast<uint32_t>(shape_ids_.size())).first->second;
}

void ClusterState::RefreshShape(Job& j) {
  j.demand = j.spec.TotalDemand();
  j.has_shares = j.spec.HasShares();
  j.best_effort = j.spec.BestEffort();
  const uint32_t was = j.shape;
  j.shape = InternShape(j.spec);
  shape_changes_ += j.shape != was;
}

Status ClusterState::Apply(int64_t now, const JobRejected& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (j.state != JobState::kPending) return FailedPrecondition("job '" + j.spec.name + "' is not pending");
  j.state = JobState::kRejected;
  j.reason = e.reason;
  j.finished_ms = now;
  ErasePending(j);
  if (reservation_ && reservation_->job == j.id) reservation_.reset();
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const JobPlaced& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (j.state != JobState::kPending) return FailedPrecondition("job '" + j.spec.name + "' is not pending");
  if (e.admission == AdmissionClass::kNone || e.admission > AdmissionClass::kReserved) {
    return InvalidArgument("job placed without an admission class");
  }
  if ((e.admission == AdmissionClass::kReserved) != !j.spec.reservation.empty()) {
    return InvalidArgument("job '" + j.spec.name + "': the reserved class is for jobs that name a reservation, and only them");
  }
  // The tenant of MPS shares is the job's, not journalled (TaskShare::tenant).
  std::vector<TaskPlacement> placement = e.placement;
  StampShares(placement, j.spec.tenant);
  if (static_cast<int>(placement.size()) != j.spec.TaskCount()) {
    return InvalidArgument("job '" + j.spec.name + "' placement: one entry per task expected");
  }
  // Validate the whole gang before touching anything: per node, the sum of what is asked;
  // shares are tried in order on a copy of each GPU's share state.
  std::map<uint32_t, NodeFree> need;
  std::map<std::pair<uint32_t, int>, GpuShareState> trial;
  // Each task holds what its group asked for: the GPUs or share, the CPU and memory.
  std::vector<const TaskGroup*> group_of;
  for (const TaskGroup& g : j.spec.groups) group_of.insert(group_of.end(), g.count, &g);
  for (size_t k = 0; k < placement.size(); ++k) {
    const TaskPlacement& p = placement[k];
    const TaskGroup& g = *group_of[k];
    bool matches = p.cpu == g.cpu && p.memory == g.memory && p.share.kind == g.share;
    if (g.share == ShareKind::kWhole) matches &= std::popcount(p.gpu_mask) == g.gpus();
    if (g.share == ShareKind::kMig) matches &= p.share.mig.profile == g.mig_profile;
    if (g.share == ShareKind::kMps) matches &= p.share.percent == g.percent && p.share.memory == g.gpu_memory;
    if (!matches) {
      return InvalidArgument("job '" + j.spec.name + "' placement: task " + std::to_string(k) +
                             " does not hold what its task group asks");
    }
    if (!p.node.valid() || p.node.value() >= fleet_.size()) return NotFound("placement node does not exist");
    const Node& nd = fleet_.node(p.node);
    NodeFree& n = need[p.node.value()];
    if (p.share.kind != ShareKind::kWhole) {
      if (!nd.shared() || std::popcount(p.gpu_mask) != 1 || p.gpu_index() >= nd.gpu_count) {
        return InvalidArgument("job '" + j.spec.name + "': a share must name one GPU of a shared node");
      }
      auto key = std::make_pair(p.node.value(), p.gpu_index());
      auto it = trial.find(key);
      if (it == trial.end()) it = trial.emplace(key, fleet_.shares(p.node)[p.gpu_index()]).first;
      std::string why;
      if (!CanHold(nd.pool, it->second, p.share, now, &why)) {
        return FailedPrecondition("job '" + j.spec.name + "': node '" + nd.name + "' GPU " +
                                  std::to_string(p.gpu_index()) + ": " + why);
      }
      Hold(it->second, p.share);
    } else {
      if (nd.shared() && p.gpu_mask != 0) {
        return InvalidArgument("job '" + j.spec.name + "': node '" + nd.name + "' gives GPUs as shares only");
      }
      if (n.gpu_mask & p.gpu_mask) return InvalidArgument("placement gives one GPU to two tasks");
      n.gpu_mask |= p.gpu_mask;
    }
    n.cpu += p.cpu;
    n.memory += p.memory;
  }
  for (const auto& [node, n] : need) {
    const Node& nd = fleet_.node(NodeId(node));
    if ((nd.free.gpu_mask & n.gpu_mask) != n.gpu_mask || nd.free.cpu < n.cpu || nd.free.memory < n.memory) {
      return FailedPrecondition("job '" + j.spec.name + "': node '" + nd.name + "' lacks the resources");
    }
    if (n.gpu_mask != 0 && nd.gpu_resource != j.spec.gpu_resource) {
      return FailedPrecondition("job '" + j.spec.name + "': node '" + nd.name + "' has another GPU model");
    }
  }
  for (const auto& [key, g] : trial) {
    if (fleet_.node(NodeId(key.first)).gpu_resource != j.spec.gpu_resource) {
      return FailedPrecondition("job '" + j.spec.name + "': node '" + fleet_.node(NodeId(key.first)).name +
                                "' has another GPU model");
    }
  }
  for (const TaskPlacement& p : placement) fleet_.Allocate(p);
  tenants_.AddUsage(j.spec.tenant, j.demand, e.admission == AdmissionClass::kGuaranteed, +1);
  j.state = JobState::kRunning;
  j.admission = e.admission;
  j.placement = std::move(placement);
  IndexOnNodes(j, true);
  if (j.first_started_ms < 0) j.first_started_ms = now;
  j.last_started_ms = now;
  j.expected_end_ms = now + j.estimated_remaining_ms();
  ErasePending(j);
  active_.insert(j.id);
  active_by_end_.insert({j.expected_end_ms, j.id});
  if (reservation_ && reservation_->job == j.id) reservation_.reset();
  if (e.admission == AdmissionClass::kBurstable) {
    burstable_running_.insert(j.id);
    CountGpus(burstable_gpus_, j, +1);
  }
  if (e.admission == AdmissionClass::kReserved) reserved_running_.insert(j.id);
  AddRunning(j);
  CountRunningGpus(j, +1);
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const JobPreemptionStarted& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (j.state != JobState::kRunning) return FailedPrecondition("job '" + j.spec.name + "' is not running");
  if (e.kind > kLastPreemptKind) return InvalidArgument("job '" + j.spec.name + "' preempted with an unknown kind");
  j.state = JobState::kPreempting;
  if (burstable_running_.erase(j.id)) CountGpus(burstable_gpus_, j, -1);
  reserved_running_.erase(j.id);
  if (TakeRunning(j)) CountRunningGpus(j, -1);
  preempting_.insert(j.id);
  preempting_by_preemptor_.insert({e.preemptor, j.id});
  j.preemptions += 1;
  j.last_preempted_ms = now;
  j.preempt_deadline_ms = e.deadline_ms;
  active_by_end_.erase({j.expected_end_ms, j.id});
  j.expected_end_ms = e.deadline_ms;
  active_by_end_.insert({j.expected_end_ms, j.id});
  j.preempt_kind = e.kind;
  j.preemptor = e.preemptor;
  return Status::Ok();
}

void ClusterState::IndexOnNodes(const Job& j, bool add) {
  if (jobs_on_node_.size() < fleet_.size()) jobs_on_node_.resize(fleet_.size());
  for (const TaskPlacement& p : j.placement) {
    // A job with several tasks on the node is there once.
    std::vector<JobId>& on = jobs_on_node_[p.node.value()];
    if (add) {
      InsertSorted(on, j.id);
    } else {
      EraseSorted(on, j.id);
    }
  }
}

void ClusterState::AddRunning(const Job& j) {
  if (running_by_tenant_.size() <= j.spec.tenant.value()) running_by_tenant_.resize(tenants_.size());
  InsertSorted(running_by_tenant_[j.spec.tenant.value()], RunningEntry{j.spec.priority, j.id});
}

bool ClusterState::TakeRunning(const Job& j) {
  if (j.spec.tenant.value() >= running_by_tenant_.size()) return false;
  return EraseSorted(running_by_tenant_[j.spec.tenant.value()], RunningEntry{j.spec.priority, j.id});
}

void ClusterState::ReleaseResources(Job& j) {
  CountGpus(released_gpus_, j, +1);
  IndexOnNodes(j, false);
  for (const TaskPlacement& p : j.placement) fleet_.Release(p);
  tenants_.AddUsage(j.spec.tenant, j.demand, j.admission == AdmissionClass::kGuaranteed, -1);
  active_.erase(j.id);
  active_by_end_.erase({j.expected_end_ms, j.id});
  if (burstable_running_.erase(j.id)) CountGpus(burstable_gpus_, j, -1);
  reserved_running_.erase(j.id);
  if (preempting_.erase(j.id)) preempting_by_preemptor_.erase({j.preemptor, j.id});
  if (TakeRunning(j)) CountRunningGpus(j, -1);
}

Status ClusterState::Apply(int64_t now, const JobStopped& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (!j.holds_resources()) return FailedPrecondition("job '" + j.spec.name + "' holds no resources");
  if (e.saved_work_ms < 0 || e.saved_work_ms > j.spec.duration_ms) {
    return InvalidArgument("job '" + j.spec.name + "' saved work out of range");
  }
  ReleaseResources(j);
  j.ended_runs.push_back({j.last_started_ms, now, j.admission, OnAgents(j)});
  j.state = JobState::kPending;
  j.saved_work_ms = e.saved_work_ms;
  j.preempt_deadline_ms = -1;
  j.queued_ms = now;
  ApplyHardening(j);
  AddPending(j);
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const JobFinished& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (!j.holds_resources()) return FailedPrecondition("job '" + j.spec.name + "' is not running");
  ReleaseResources(j);
  j.state = JobState::kFinished;
  j.saved_work_ms = j.spec.duration_ms;
  j.finished_ms = now;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const JobCancelled& e) {
  auto job = MutableJob(e.job);
  if (!job) return job.error();
  Job& j = **job;
  if (j.state == JobState::kPending) {
    ErasePending(j);
    if (reservation_ && reservation_->job == j.id) reservation_.reset();
  } else if (j.holds_resources()) {
    ReleaseResources(j);
    j.ended_runs.push_back({j.last_started_ms, now, j.admission, OnAgents(j)});
  } else {
    return FailedPrecondition("job '" + j.spec.name + "' has already ended (" + JobStateName(j.state) + ")");
  }
  j.state = JobState::kCancelled;
  j.finished_ms = now;
  return Status::Ok();
}

Status ClusterState::RebuildIndexes() {
  change_epoch_ = NextEpoch();
  for (Job& j : jobs_) StampShares(j.placement, j.spec.tenant);  // not in the snapshot
  for (auto& v : released_gpus_) v.clear();
  for (auto& v : burstable_gpus_) v.clear();
  running_by_tenant_.assign(tenants_.size(), {});
  running_gpus_.assign(tenants_.size(), {});
  jobs_by_name_.reserve(jobs_.size());
  for (const Job& j : jobs_) {
    if (FindJob(j.spec.tenant, j.spec.name).valid()) return Internal("job '" + j.spec.name + "' appears twice in its tenant");
    IndexName(j);
    if (!j.spec.array.empty()) arrays_[{j.spec.tenant.value(), j.spec.array.array}].push_back(j.id);
    if (j.state == JobState::kPending) AddPending(j);
    if (!j.holds_resources()) continue;
    // What Apply(JobPlaced) checked when the job was placed, checked again before the fleet's
    // REQUIREs: each task on an existing node, whole GPUs free, a share on one GPU of a shared
    // node, a MIG instance in the GPU's layout and not yet held.
    for (const TaskPlacement& p : j.placement) {
      bool ok = p.node.valid() && p.node.value() < fleet_.size();
      if (ok) {
        const Node& n = fleet_.node(p.node);
        ok = p.share.kind == ShareKind::kWhole
                 ? !n.shared() && (n.free.gpu_mask & p.gpu_mask) == p.gpu_mask
                 : n.shared() && std::popcount(p.gpu_mask) == 1 && p.gpu_index() < n.gpu_count;
      }
      if (ok && p.share.kind == ShareKind::kMig) {
        ok = false;
        for (const MigSlot& s : fleet_.shares(p.node)[p.gpu_index()].mig) ok |= s.instance == p.share.mig && !s.held;
      }
      if (!ok) return Internal("job '" + j.spec.name + "' holds a placement the fleet cannot give it");
      fleet_.Allocate(p);
    }
    tenants_.AddUsage(j.spec.tenant, j.demand, j.admission == AdmissionClass::kGuaranteed, +1);
    active_.insert(j.id);
    IndexOnNodes(j, true);
    active_by_end_.insert({j.expected_end_ms, j.id});
    if (j.state == JobState::kRunning) {
      if (j.admission == AdmissionClass::kBurstable) {
        burstable_running_.insert(j.id);
        CountGpus(burstable_gpus_, j, +1);
      }
      if (j.admission == AdmissionClass::kReserved) reserved_running_.insert(j.id);
      AddRunning(j);
      CountRunningGpus(j, +1);
    } else {
      preempting_.insert(j.id);
      preempting_by_preemptor_.insert({j.preemptor, j.id});
    }
  }
  RebuildServices();
  return RebuildReservations();
}

}  // namespace allot
