// ClusterState: fleet + tenancy + jobs + allocations. apply(Event) is the only mutation; it
// validates first and changes nothing when it refuses an event.
#pragma once

#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/chunked_set.h"
#include "core/id_set.h"
#include "core/resources.h"
#include "core/sorted_vector_map.h"
#include "core/status.h"
#include "fleet/fleet.h"
#include "state/event.h"
#include "state/job.h"
#include "state/reservation.h"
#include "tenancy/quota_tree.h"

namespace allot {

class ClusterState {
 public:
  // Applies one event at event.time_ms. On error, state is unchanged.
  Status apply(const Event& event);

  const ResourceNames& resource_names() const { return names_; }
  const Fleet& fleet() const { return fleet_; }
  const QuotaTree& tenants() const { return tenants_; }
  const AccessTable& access() const { return access_; }
  // The audit log, in order; each record names the previous one's hash.
  const std::vector<AuditRecord>& audit() const { return audit_; }
  const std::string& last_audit_hash() const { return audit_.empty() ? kNoHash : audit_.back().hash; }
  const Job& job(JobId id) const { return jobs_[id.value()]; }
  const std::vector<Job>& jobs() const { return jobs_; }
  // Job names are unique within a tenant (by id, so a moved tenant keeps its jobs' names);
  // two tenants may each have a job of the same name.
  JobId FindJob(TenantId tenant, std::string_view name) const;
  // Every job of that name, in any tenant, by id. Callers filter by what the asker may see.
  std::vector<JobId> JobsNamed(std::string_view name) const;
  // The elements of the tenant's array of that name, by index; empty when there is none.
  const std::vector<JobId>& ArrayElements(TenantId tenant, std::string_view name) const;
  // Every array: (tenant, name) → its elements by index.
  using ArrayKey = std::pair<uint32_t, std::string>;
  const std::map<ArrayKey, std::vector<JobId>>& arrays() const { return arrays_; }

  // Jobs waiting to be placed, and jobs holding resources (running or preempting), by id.
  const IdSet<JobId>& pending() const { return pending_; }
  // The pending jobs again, grouped by what decides their fate in a pass: tenant, shape,
  // priority, kind, best effort, shares, and whether they name a reservation. Each group is in
  // queue order (queue time, then id), so a pass reads groups, not every waiting job.
  struct PendingKey {
    uint32_t tenant;
    uint32_t shape;
    int32_t priority;
    uint8_t kind;
    uint8_t flags;  // kBestEffort | kShares | kNamesReservation | kHeld (dependencies or an array)
    static constexpr uint8_t kBestEffort = 1, kShares = 2, kNamesReservation = 4, kHeld = 8;
    auto operator<=>(const PendingKey&) const = default;
  };
  static PendingKey PendingKeyOf(const Job& j);
  // A group's jobs in queue order: those of `jobs` from `head` on. Jobs leave mostly from the
  // front (placed in queue order), so leaving moves the head, and the vector is compacted once
  // the head passes half of it: draining a group costs O(1) a job, not O(size).
  class PendingGroup {
   public:
    const QueuedJob* begin() const { return jobs_.data() + head_; }
    const QueuedJob* end() const { return jobs_.data() + jobs_.size(); }
    const QueuedJob* data() const { return begin(); }
    const QueuedJob& front() const { return jobs_[head_]; }
    size_t size() const { return jobs_.size() - head_; }
    bool empty() const { return size() == 0; }
    void Insert(QueuedJob q);
    void Erase(QueuedJob q);

   private:
    std::vector<QueuedJob> jobs_;
    size_t head_ = 0;
  };
  // In key order, walked by every pass (flat: a walk reads memory in order).
  using PendingGroups = SortedVectorMap<PendingKey, PendingGroup>;
  const PendingGroups& pending_groups() const { return pending_groups_; }
  const IdSet<JobId>& active() const { return active_; }
  // Active jobs admitted as burstable and still running (reclaim candidates).
  const IdSet<JobId>& burstable_running() const { return burstable_running_; }
  // Active jobs running in a reservation (admitted kReserved) and not yet signalled.
  const IdSet<JobId>& reserved_running() const { return reserved_running_; }
  // Jobs signalled and not yet exited.
  const IdSet<JobId>& preempting() const { return preempting_; }
  // The victims signalled for `preemptor` that have not exited yet, by id.
  std::vector<JobId> victims_of(JobId preemptor) const;
  bool has_victims(JobId preemptor) const;
  // (preemptor, victim) for every signalled victim, by preemptor.
  const std::set<std::pair<JobId, JobId>>& victims_by_preemptor() const { return preempting_by_preemptor_; }
  // Running (not preempting) jobs submitted to exactly this tenant, lowest priority first
  // (then by id), so priority preemption reads only the jobs below the preemptor. A sorted
  // vector a tenant (a few dozen jobs each; changed at every placement and exit).
  struct RunningEntry {
    int32_t priority;
    JobId id;
    auto operator<=>(const RunningEntry&) const = default;
  };
  const std::vector<RunningEntry>& running_in(TenantId t) const;
  // Whole GPUs held by the jobs of running_in(t) that are not in a capacity reservation, by
  // (priority, the node's GPU model), lowest priority first, per rack and zone: what the
  // tenant's priority preemption could ever free below a priority (Pass::CandidateGpus), read
  // without walking its jobs. Derived: kept by placements and releases, rebuilt on restore.
  struct RunningGpus {
    int32_t priority;
    ResourceId res;
    std::vector<int64_t> by_domain[2];  // [rack, zone][domain]; may be shorter than the fleet's list
  };
  const std::vector<RunningGpus>& running_gpus(TenantId t) const;

  // How many distinct job shapes have been interned (Job::shape < shape_count()).
  uint32_t shape_count() const { return static_cast<uint32_t>(shape_ids_.size()); }

  // The id the next JobSubmitted will get.
  JobId next_job_id() const { return JobId(static_cast<uint32_t>(jobs_.size())); }

  // MPS task shapes submitted so far, per GPU model: (model, percent, CPU, memory) → tasks. The
  // workload a fragmentation-aware share policy plans for.
  using MpsShape = std::tuple<ResourceId, uint16_t, int64_t, int64_t>;
  const std::map<MpsShape, int64_t>& mps_shapes() const { return mps_shapes_; }

  // Active jobs by (expected end, id): what frees up when, for backfill.
  const ChunkedSet<std::pair<int64_t, JobId>>& active_by_end() const { return active_by_end_; }
  // The backfill reservation, if any: set by ReservationSet, cleared when its job leaves the
  // queue (placed, rejected, cancelled).
  struct Reservation {
    JobId job;
    int64_t start_ms = 0;
    int64_t made_ms = 0;
    std::vector<TaskPlacement> tasks;
  };
  const std::optional<Reservation>& reservation() const { return reservation_; }

  // Reservations of capacity (state/reservation.h), by id; cancelled ones stay as records.
  const std::vector<CapacityReservation>& reservations() const { return reservations_; }
  // The confirmed reservation of that name in the tenant, or an invalid id.
  ReservationId FindReservation(TenantId tenant, std::string_view name) const;
  // What a reservation of `spec` asks of the book: spec.Ask(), confined to nodes that can
  // confine tasks in every way when its tenant is untrusted.
  CapacityAsk AskOf(const ReservationSpec& spec) const;
  // Why a job that names a reservation cannot run in it (no such confirmed reservation of its
  // tenant; tasks not whole GPUs of its model; more GPUs than it holds), or empty.
  std::string ReservationMisfit(const JobSpec& spec) const;
  // GPUs of other work on reservation `r`'s holds of window `window` now: on each hold node, what
  // jobs outside the reservation hold beyond the GPUs the node keeps unheld (lent capacity).
  int64_t LentGpus(ReservationId r, size_t window) const;
  // Whole GPUs the jobs of reservation `r` hold on `node` (running or exiting).
  int32_t GpusInReservationOn(ReservationId r, NodeId node) const;
  // Registered SSH keys (state/ssh_key.h), by id; removed ones stay as records.
  const std::vector<SshKeyRecord>& ssh_keys() const { return ssh_keys_; }
  // The lines of the tenant's keys not removed, in id order.
  std::vector<std::string> SshKeyLinesOf(TenantId tenant) const;
  // Job templates (state/job_template.h) by (tenant id, name).
  using TemplateKey = std::pair<uint32_t, std::string>;
  const std::map<TemplateKey, JobTemplate>& templates() const { return templates_; }
  // The template `name` defined at `tenant` itself (not an ancestor), or nullptr.
  const JobTemplate* FindTemplate(TenantId tenant, const std::string& name) const;
  // Every confirmed reservation's windows and holds, conflict-free.
  const ReservationBook& book() const { return book_; }
  // The book's key of window `window` of reservation `r`.
  static BookingId BookingOf(ReservationId r, size_t window) {
    return BookingId(static_cast<uint32_t>(r.value() * kMaxReservationWindows + window));
  }
  // The reservation a booking of the book belongs to (BookingOf's inverse).
  static ReservationId ReservationOf(BookingId b) {
    return ReservationId(b.value() / static_cast<uint32_t>(kMaxReservationWindows));
  }

  // Whether a node agent registered the node (NodeRegistered): its jobs run as real processes
  // and it is declared lost when the agent stops heartbeating.
  bool agent_managed(NodeId n) const { return n.value() < agent_managed_.size() && agent_managed_[n.value()]; }
  bool agents_registered() const { return !agent_managed_.empty(); }
  // The jobs holding resources on `node`, by id (indexed: a node agent asks for them often).
  std::vector<JobId> JobsOn(NodeId node) const;

  // The tenant or one of its ancestors is marked untrusted.
  bool Untrusted(TenantId t) const;
  // The pool kinds (bit 1 << Sharing) the tenant may use: the intersection along its path,
  // and only exclusive and MIG pools when untrusted.
  uint8_t AllowedPools(TenantId t) const;

  // Budgets, budget warnings given, and the ledger (state/billing_state.h).
  const BillingState& billing() const { return billing_; }

  // Tasks' exits as their agents reported them (TaskRunReported), in the order recorded.
  struct TaskRunReport {
    JobId job;
    int32_t run = 0;
    int32_t task = 0;
    NodeId node;
    int64_t started_ms = 0;   // by the agent's clock
    int64_t ended_ms = 0;
    int64_t recorded_ms = 0;  // when allotd recorded it (the event's time)
    bool operator==(const TaskRunReport&) const = default;
  };
  const std::vector<TaskRunReport>& task_reports() const { return task_reports_; }
  bool TaskReported(JobId job, int32_t run, int32_t task) const {
    return task_reported_.count({job.value(), run, task}) > 0;
  }

  // The noisy-neighbour responses in force (state/interference.h), by (node, gpu, neighbour,
  // neighbour_task).
  const std::vector<InterferenceResponse>& interference() const { return interference_; }
  // The throttle in force on that task run (its active thread percentage), or 0.
  int32_t ThrottleOf(NodeId node, JobId job, int32_t task, int32_t run) const;
  // The hardening in force for `victim` (kHarden), or nullptr.
  const InterferenceResponse* HardeningOf(JobId victim) const;

  // Inference services (state/service.h), by id; deleted ones stay as records.
  const std::vector<Service>& services() const { return services_; }
  const Service& service(ServiceId id) const { return services_[id.value()]; }
  // The service of that name in the tenant that is not deleted, or an invalid id.
  ServiceId FindService(TenantId tenant, std::string_view name) const;
  // The service the job is a linked replica of, or an invalid id.
  ServiceId ServiceOf(JobId job) const {
    return job.value() < service_of_job_.size() ? service_of_job_[job.value()] : ServiceId();
  }

  // Checks usage == sum of allocations, nothing over-committed, free == capacity - held.
  Status VerifyInvariants() const;
  // Room for `n` more jobs (a simulator knows its trace's size up front): the job table and the
  // name index then neither move nor hold two copies as jobs come. A hint; changes nothing.
  void ReserveJobs(size_t n);

  // What a cross-pass memo of failed attempts (scheduler/failed_attempts.h) reads to know
  // whether capacity could have come back since it last looked. Derived, in-memory only.
  // change_epoch() changes on every applied event other than those that can only take
  // capacity or touch nothing a placement reads (submissions, placements, preemption signals,
  // rejections, the backfill reservation, tokens, audit, ledger, keys, templates, reports) and
  // the releases counted below; on a restore; and is unique to this object's history (a fresh
  // or restored state never reuses one).
  uint64_t change_epoch() const { return change_epoch_; }
  // How many times a job's shape changed after its submission (a noisy-neighbour hardening
  // put on or lifted as it was requeued), since this state was built. Derived, in-memory only.
  uint64_t shape_changes() const { return shape_changes_; }
  // Whole GPUs given back by jobs leaving nodes (finished, stopped, failed, cancelled), summed
  // since this state was built, per domain of `kind` (kRack or kZone; indexed by domain, may be
  // shorter than the fleet's domain list: missing ones are 0).
  const std::vector<int64_t>& released_gpus(DomainKind kind) const {
    return released_gpus_[kind == DomainKind::kZone ? 1 : 0];
  }
  // Whole GPUs held by the burstable running jobs (burstable_running), per domain of `kind`
  // (kRack or kZone; may be shorter than the fleet's domain list).
  const std::vector<int64_t>& burstable_gpus(DomainKind kind) const {
    return burstable_gpus_[kind == DomainKind::kZone ? 1 : 0];
  }

 private:
  // The snapshot codec (state/snapshot.cc) writes and restores the primary state below and
  // leaves the indexes to RebuildIndexes.
  friend class SnapshotCodec;
  // After a restore: recomputes every index (job sets, the fleet's holds, tenant usage) from
  // jobs_. Fails naming the job whose placement does not fit; the state is then unusable.
  Status RebuildIndexes();

  Status Apply(int64_t now, const NodeAdded& e);
  Status Apply(int64_t now, const NodeConditionChanged& e);
  Status Apply(int64_t now, const TenantUpserted& e);
  Status Apply(int64_t now, const JobSubmitted& e);
  Status Apply(int64_t now, const JobRejected& e);
  Status Apply(int64_t now, const JobPlaced& e);
  Status Apply(int64_t now, const JobPreemptionStarted& e);
  Status Apply(int64_t now, const JobStopped& e);
  Status Apply(int64_t now, const JobFinished& e);
  Status Apply(int64_t now, const JobCancelled& e);
  Status Apply(int64_t now, const MigRelayout& e);
  Status Apply(int64_t now, const MigLayoutReported& e);
  Status Apply(int64_t now, const ReservationSet& e);
  Status Apply(int64_t now, const TokenIssued& e);
  Status Apply(int64_t now, const TokenRevoked& e);
  Status Apply(int64_t now, const AuditRecorded& e);
  Status Apply(int64_t now, const TenantRemoved& e);
  Status Apply(int64_t now, const TenantMoved& e);
  Status Apply(int64_t now, const NodeRegistered& e);
  Status Apply(int64_t now, const NodeFailed& e);
  Status Apply(int64_t now, const JobFailed& e);
  Status Apply(int64_t now, const BudgetSet& e);
  Status Apply(int64_t now, const BudgetWarned& e);
  Status Apply(int64_t now, const LedgerAppended& e);
  Status Apply(int64_t now, const TaskRunReported& e);
  Status Apply(int64_t now, const ReservationBooked& e);
  Status Apply(int64_t now, const ReservationCancelled& e);
  Status Apply(int64_t now, const ReservationEndSet& e);
  Status Apply(int64_t now, const ReservationNodeAccepted& e);
  Status Apply(int64_t now, const ReservationHoldMoved& e);
  Status Apply(int64_t now, const SshKeyAdded& e);
  Status Apply(int64_t now, const SshKeyRemoved& e);
  Status Apply(int64_t now, const ReservationShrunk& e);
  Status Apply(int64_t now, const InterferenceActed& e);
  Status Apply(int64_t now, const InterferenceCleared& e);
  Status Apply(int64_t now, const ServiceCreated& e);
  Status Apply(int64_t now, const ServiceReplicaAdded& e);
  Status Apply(int64_t now, const ServiceReplicaRestarted& e);
  Status Apply(int64_t now, const ServiceReplicaRemoved& e);
  Status Apply(int64_t now, const ServiceScaled& e);
  Status Apply(int64_t now, const ServiceUpdated& e);
  Status Apply(int64_t now, const ServiceDeleted& e);
  // The live service `id` and, when `job` is valid, its replica record of that job.
  Result<Service*> MutableService(ServiceId id);
  void LinkReplica(JobId job, ServiceId service);
  // After a restore: service_of_job_ from services_.
  void RebuildServices();
  Status Apply(int64_t now, const TemplateSaved& e);
  Status Apply(int64_t now, const TemplateRemoved& e);
  // Refuses a template whose tenant, name, description or fields could never be one (apply and restore).
  Status CheckTemplate(const JobTemplate& t) const;
  // Refuses a response whose node, GPU, jobs or numbers are out of range (apply and restore).
  Status CheckInterference(const InterferenceResponse& r) const;
  // A job back in the queue takes the hardened share a response in force gives it, or its own
  // groups again once none is (state/interference.h, kHarden).
  void ApplyHardening(Job& j);
  // After spec.groups changed: the cached demand, flags and the interned shape.
  void RefreshShape(Job& j);
  uint32_t InternShape(const JobSpec& s);
  Result<CapacityReservation*> MutableReservation(ReservationId id);
  // `count`: the GPUs or nodes the window must hold (CapacityReservation::CountOf); the spec's by default.
  Status CheckHolds(const ReservationSpec& spec, size_t window, const std::vector<NodeHold>& holds,
                    std::optional<int32_t> count = std::nullopt) const;
  // After a restore: the book and the names index from reservations_.
  Status RebuildReservations();

  Result<Job*> MutableJob(JobId id);
  // pending_ and pending_groups_ together.
  void AddPending(const Job& job);
  void ErasePending(const Job& job);
  void ReleaseResources(Job& job);
  // Adds the job to (or removes it from) jobs_on_node_ for every node of its placement.
  void IndexOnNodes(const Job& job, bool add);
  // An array element follows the elements before it (same array, next index, same count and
  // parallel) and its array's name is no job's; a job's name is no array's; each dependency
  // names a job or array of its tenant other than itself (state/dependency.h).
  Status CheckArrayAndAfter(const JobSpec& s) const;
  // Requeues every job holding resources on `node` (see NodeFailed).
  void RequeueJobsOn(NodeId node, int64_t now, const std::string& reason);
  // Whether a task of the job's current placement is on an agent-managed node.
  bool OnAgents(const Job& job) const;
  // The floors (QuotaTree::OwnGuarantee) of every tenant in the orgs the paths lie in, by
  // (tenant, resource), nonzero only; and the changes between two of them recorded at `now`.
  using FloorMap = std::map<std::pair<uint32_t, ResourceId>, int64_t>;
  FloorMap FloorsOfOrgs(std::initializer_list<std::string_view> paths) const;
  void RecordFloorChanges(int64_t now, const FloorMap& before, const FloorMap& after);

  ResourceNames names_;
  Fleet fleet_;
  std::vector<uint8_t> agent_managed_;  // by node id; 1: registered by an agent
  QuotaTree tenants_;
  AccessTable access_;
  std::vector<AuditRecord> audit_;
  static inline const std::string kNoHash;
  std::vector<Job> jobs_;
  // The jobs of each name, one per tenant, by id: the first with its tenant beside it (a name
  // is most often in one tenant, and FindJob, asked at every submission, then reads neither a
  // list nor a job), the others in a list.
  struct NamedJobs {
    JobId first;
    TenantId first_tenant;
    std::vector<JobId> more;
  };
  std::unordered_map<std::string, NamedJobs> jobs_by_name_;
  void IndexName(const Job& j);
  std::map<ArrayKey, std::vector<JobId>> arrays_;  // rebuilt
  std::unordered_map<std::string, uint32_t> shape_ids_;
  IdSet<JobId> pending_;
  PendingGroups pending_groups_;
  IdSet<JobId> active_;
  // By node id: the active jobs with a task there, sorted and unique (a few per node: a sorted
  // vector, not a tree node per job and node).
  std::vector<std::vector<JobId>> jobs_on_node_;
  IdSet<JobId> burstable_running_;
  IdSet<JobId> reserved_running_;
  IdSet<JobId> preempting_;
  std::set<std::pair<JobId, JobId>> preempting_by_preemptor_;  // (preemptor, victim)
  std::vector<std::vector<RunningEntry>> running_by_tenant_;  // each sorted
  // Enters or takes a job's entry in running_by_tenant_ (taking: whether it was there).
  void AddRunning(const Job& j);
  bool TakeRunning(const Job& j);
  std::vector<std::vector<RunningGpus>> running_gpus_;  // by tenant; see running_gpus
  // Adds (+1) or takes (-1) a job of running_in its tenant to or from running_gpus.
  void CountRunningGpus(const Job& j, int sign);
  ChunkedSet<std::pair<int64_t, JobId>> active_by_end_;
  std::map<MpsShape, int64_t> mps_shapes_;
  std::optional<Reservation> reservation_;
  std::vector<CapacityReservation> reservations_;
  std::vector<SshKeyRecord> ssh_keys_;
  std::vector<InterferenceResponse> interference_;
  std::vector<Service> services_;
  std::vector<ServiceId> service_of_job_;  // by job id; rebuilt
  std::map<TemplateKey, JobTemplate> templates_;
  std::map<std::pair<uint32_t, std::string>, ReservationId> reservation_by_name_;  // confirmed; rebuilt
  ReservationBook book_;  // rebuilt
  BillingState billing_;
  static uint64_t NextEpoch();
  uint64_t change_epoch_ = NextEpoch();
  uint64_t shape_changes_ = 0;
  std::vector<int64_t> released_gpus_[2];   // [rack, zone][domain]
  std::vector<int64_t> burstable_gpus_[2];  // [rack, zone][domain]
  // Adds (sign +1) or takes (-1) the whole GPUs of the job's placement to its racks and zones.
  void CountGpus(std::vector<int64_t> (&by_domain)[2], const Job& j, int sign) const;
  std::vector<TaskRunReport> task_reports_;
  std::set<std::tuple<uint32_t, int32_t, int32_t>> task_reported_;  // (job, run, task); rebuilt
};

}  // namespace allot
