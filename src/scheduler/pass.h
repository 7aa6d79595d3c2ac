// One scheduling pass, as a short-lived object so its phases can share the pass's views.
// Internal to the scheduler.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/flat_map.h"
#include "placement/fleet_view.h"
#include "placement/gang.h"
#include "placement/score/scorer.h"
#include "policy/admission.h"
#include "policy/fair_queue.h"
#include "scheduler/config.h"
#include "scheduler/failed_attempts.h"
#include "scheduler/plan.h"
#include "state/cluster_state.h"
#include "state/dependency.h"

namespace allot {

class Pass {
 public:
  // `memo`: failed attempts remembered across passes over this state (nullptr: none).
  Pass(const ClusterState& state, int64_t now_ms, const SchedulerConfig& config, FailedAttempts* memo = nullptr);
  Plan Run();

 private:
  // Bands run in order: guaranteed before burstable, then higher priority first.
  struct BandKey {
    int admission_rank;  // 0 guaranteed, 1 burstable
    int32_t neg_priority;
    auto operator<=>(const BandKey&) const = default;
  };

  // Phase 1: reject what can never fit; sort the rest into bands.
  void Triage();
  // Phase 2: one band by hierarchical DRF.
  // What a band holds: runs of a pending group's jobs (slices of ClusterState::pending_groups,
  // tag: index in runs_) and single jobs (moved from a guaranteed band, or tried one by one).
  struct Band {
    struct RunRef {
      TenantId tenant;
      const QueuedJob* first;
      const QueuedJob* last;
      uint32_t tag;
    };
    std::vector<RunRef> runs;
    std::vector<JobId> jobs;
  };
  void RunBand(const BandKey& key, Band& band);
  // A run whose head the memo of failed attempts knows to fail, met once the pass's
  // reservation is decided: its jobs wait with the reason the head gets now, without going
  // through the fair queue (failed_attempts.cc). False (nothing done) when it is not such a run.
  bool SettleRemembered(const Band::RunRef& run);
  // Whether run `tag`'s next job `head` is remembered to fail (as RememberedToFail would say
  // of it now): its admission (RunAdmission's), or nullptr. Changes nothing but that cache.
  const AdmissionResult* RunHeadRemembered(uint32_t tag, JobId head);
  // The admission run `tag`'s next job `head` meets now: its group's from triage while its
  // tenant's PathVersion holds, else counted again and kept in the run the same way (so the
  // reference holds until the next call for that run).
  const AdmissionResult& RunAdmission(uint32_t tag, JobId head);
  // The reason such a head fails with (admission `a`), left in the pass's memos as its failure
  // would leave it (RecordRemembered).
  uint32_t RememberedRunReason(uint32_t tag, JobId head, const AdmissionResult& a);
  // The reason of a job of this shape that did not fit: computed once per pass (failed_why_).
  // (`some`, a job of that shape, is read only when the pass has no reason for it yet.)
  uint32_t ShapeReason(uint32_t shape, JobId some);
  // Why the job does not fit the view now, kept in failed_why_ (returns its index), and the
  // index of such a reason in plan_.reasons once given.
  int32_t ExplainFailure(const Job& job);
  uint32_t ReasonAt(int32_t failed);
  void TriageHeld(const Job& job, std::vector<int16_t>& allowed_pools);
  // Why the job may not run in the pools its tenant (`tenant_allowed`) or its kind
  // (`kind_allowed`) may use (0xF: any); empty when it may.
  std::string PoolRefusal(const Job& job, uint8_t tenant_allowed, uint8_t kind_allowed) const;
  // Why no node of the fleet could ever hold a job of this shape (computed once per shape per
  // pass), or nullptr when one could.
  const std::string* NeverFitsWhy(const Job& job) { return NeverFitsWhy(job.shape, job.id); }
  // The same for a group of that shape: its job `some` is read only the first time the pass
  // meets the shape.
  const std::string* NeverFitsWhy(uint32_t shape, JobId some);
  // The demand of every job of that shape (Job::demand depends on the shape only), read from
  // job `some` the first time the pass meets it. A group is triaged and settled without
  // reading its jobs (a pass visits every waiting group).
  const Demand& ShapeDemand(uint32_t shape, JobId some);
  std::vector<const Demand*> shape_demand_;
  // `tag`: the run the job was popped from (UINT32_MAX: a single job).
  void TryJob(const Job& job, const BandKey& band, uint32_t tag);
  void TryJobOnView(const Job& job, const BandKey& band, uint32_t tag);

  // Preemption (preemption.cc). Returns true when the job now waits for victims.
  bool TryPreempt(const Job& job, AdmissionClass admission, bool quota_blocked);
  bool FitsWith(const Job& job, const std::vector<JobId>& freed, bool check_quota);
  bool PriorityCannotFit(const Job& job, const std::vector<JobId>& exiting);
  bool FitsNow(const Job& job, bool check_quota);
  bool PlacesNow(const Job& job);
  void FreeVictim(JobId id, bool check_quota);
  void RestoreVictimUsage(JobId id);
  // Candidates in victim order, built once per pass; `first`: every one before it is claimed
  // (claims only grow in a pass, so later preemptors start there).
  struct CandidateOrder {
    std::vector<JobId> order;
    size_t first = 0;
  };
  // A preemptor's candidates in victim order: a given list, or the first `max` of a cached
  // order that no earlier preemptor of this pass claimed, read from the order only as far as
  // a search asks (the greedy usually stops at the first). Claims do not change while one
  // preemptor's search reads its list.
  class VictimList {
   public:
    explicit VictimList(std::vector<JobId> ids) : ids_(std::move(ids)) {}
    VictimList(CandidateOrder& order, const std::unordered_set<uint32_t>& claimed, size_t max);
    // Whether the list has an i-th candidate.
    bool Has(size_t i) {
      while (i >= ids_.size() && order_) Read();
      return i < ids_.size();
    }
    JobId operator[](size_t i) const { return ids_[i]; }
    // The whole list.
    const std::vector<JobId>& All() {
      while (order_) Read();
      return ids_;
    }

   private:
    void Read();  // one more entry of the order (order_ = nullptr at its end)
    std::vector<JobId> ids_;
    const std::vector<JobId>* order_ = nullptr;
    const std::unordered_set<uint32_t>* claimed_ = nullptr;
    size_t next_ = 0;
    size_t max_ = 0;
  };
  VictimList Unclaimed(CandidateOrder& candidates) const;
  VictimList ReclaimCandidates(const Job& job);
  VictimList PriorityCandidates(const Job& job);
  std::vector<JobId> FairShareCandidates(const Job& job) const;
  bool ChooseVictims(const Job& job, const std::vector<JobId>& own_exiting, VictimList candidates, bool check_quota,
                     bool placement_failed, std::vector<JobId>& chosen);
  bool GreedyVictims(const Job& job, VictimList& candidates, size_t limit, bool check_quota, bool placement_failed,
                     std::vector<JobId>& chosen);
  bool BetterVictims(const std::vector<JobId>& a, const std::vector<JobId>& b,
                     const std::unordered_map<uint32_t, size_t>& rank) const;
  int64_t WorkLost(const Job& j) const;

  void Pending(JobId job, std::string reason);
  // Arrays and pipelines (arrays.cc): why the job must wait for its dependencies ("" when they
  // are met; a dependency never met fails it), and why an element waits for its array's
  // parallel limit; ArrayPlaced counts an element placed in this pass.
  bool HeldByDependencies(const Job& job);
  // Triage: only the first (parallel - running) pending elements of an array, in id order, go
  // on to the queue; the rest wait at once (a 100000-frame array costs its parallel limit).
  bool HeldByArrayTriage(const Job& job);
  std::string ArrayHold(const Job& job);
  void ArrayPlaced(const Job& job);
  struct ArrayInPass;
  ArrayInPass& ArrayOf(const Job& job);
  // Spread (spread.cc): a service replica placed away from its siblings' nodes, racks or zones
  // when it fits there; nullopt (view unchanged) when it does not, or when it need not spread.
  std::optional<std::vector<TaskPlacement>> PlaceSpread(const Job& job);
  // The nodes placed in this pass, by service id: siblings placed earlier in the same pass.
  std::map<uint32_t, std::vector<NodeId>> spread_placed_;
  // A job pending for a reason already in plan_.reasons.
  void PendingAgain(JobId job, uint32_t why) { plan_.pending.push_back({job, why}); }
  AdmissionResult AdmitJob(const Job& job) const { return AdmitAs(job.spec.tenant, job.demand, job.best_effort); }
  // `room`: the room the tenant's path leaves now (RoomOnPath), read instead of the path when
  // the demand fits it.
  // (Inline: asked for every waiting group of every pass, its result read at once.)
  AdmissionResult AdmitAs(TenantId tenant, const Demand& demand, bool best_effort, const PathRoom* room = nullptr) const {
    std::optional<AdmissionResult> in_room = room ? AdmitInRoom(*room, demand) : std::nullopt;
    AdmissionResult a = in_room ? *in_room : Admit(usage_, tenant, demand);
    // Time-sliced work is best effort: it never holds a guarantee, so it is always reclaimable.
    if (a.fits && best_effort) a.admission = AdmissionClass::kBurstable;
    return a;
  }
  void CountUnmetMig(const Job& job);
  const Scorer* ShareScorer(ResourceId res);
  // EASY backfill (backfill.cc): the first job blocked for capacity gets a reservation at its
  // earliest start given the active jobs' expected ends; later jobs start only if they do
  // not delay it.
  void Reserve(const Job& job);
  std::optional<PlannedReservation> ComputeReservation(const Job& job);
  bool DelaysReservation(const Job& job, const std::vector<TaskPlacement>& tasks);
  // The fleet at the reservation's start as DelaysReservation asks of it: the view without
  // `tasks` (held in it now) and with every job expected to end by then given back. Built at
  // the pass's first such check, then kept by Commit; nullptr where it is not kept (drain
  // blocks or noisy-neighbour moves change the view in ways Commit does not follow).
  FleetView* AtReservationStart(const std::vector<TaskPlacement>& tasks);
  // What the active jobs and this pass's placements expected to end by `t` hold.
  std::vector<const std::vector<TaskPlacement>*> EndingBy(int64_t t) const;
  // Reservations of capacity (reserved.cc).
  void StopEndedReservedJobs();
  // Running jobs of untrusted tenants on isolation=partial nodes, signalled to move (kIsolation).
  void StopUnconfinedJobs();
  void PlaceReservedJobs();
  // Whether a job of tenant `t` is kept off isolation=partial nodes: the tenant is untrusted and
  // the fleet has such a node (TryJob, TryReservedJob).
  bool KeptOffPartial(TenantId t) const { return state_.fleet().partial_isolation_nodes() > 0 && state_.Untrusted(t); }
  // An untrusted tenant's job is kept off isolation=partial nodes, its holds there included.
  void TryReservedJob(const Job& job);
  void TryReservedJobOnView(const Job& job);
  // "; its tenant is untrusted: its hold on node 'x' may not be used …" for the job's holds on
  // isolation=partial nodes, or empty.
  std::string UnusableHolds(const Job& job, const std::vector<NodeHold>& holds) const;
  std::vector<GpuCap>& HoldCaps(const CapacityReservation& r, size_t window);
  bool ChooseLentVictims(const Job& job, const std::vector<GpuCap>& caps, const std::vector<JobId>& exiting,
                         std::vector<JobId>& chosen);
  void BlockDrainingHolds();
  std::optional<std::vector<TaskPlacement>> PlaceLent(const Job& job);
  std::string DrainNote(const Job& job) const;
  // A placement decided: usage, the gate, backfill's end times and the plan.
  void Commit(const Job& job, AdmissionClass admission, std::vector<TaskPlacement> tasks);

  // Phase 3 (relayout.cc): re-lays out MIG GPUs for the unmet MIG demand of this pass.
  void Relayout();

  // Failed attempts remembered across passes (failed_attempts.cc). MemoKind: the domain kind
  // (0 rack, 1 zone) the memo counts the job's chances in, or -1 when it may not hold it.
  // RememberedToFail: the job is known to fail placement and every preemption kind; the
  // pass's memos are left as TryPreempt leaves them when it fails. RememberFailure: after a
  // real failure, remembered when no domain could ever hold it without GPUs given back.
  int MemoKind(const Job& job) const;
  // MemoKind's part that depends on the shape only (-2: not known yet), for runs: a run holds
  // neither array elements nor jobs with victims of their own (Triage).
  std::vector<int8_t> shape_memo_kind_;
  int ShapeMemoKind(uint32_t shape, JobId some);
  bool VictimsMayBeBurstable(AdmissionClass admission, bool quota_blocked) const;
  bool RememberedToFail(const Job& job, AdmissionClass admission, bool quota_blocked);
  // RememberedToFail past MemoKind: job `id` of that shape, tenant and priority; then what
  // TryPreempt leaves behind when every kind fails (RecordRemembered).
  bool Remembered(JobId id, uint32_t shape, TenantId tenant, int32_t priority, AdmissionClass admission,
                  bool quota_blocked);
  void RecordRemembered(uint32_t shape, AdmissionClass admission, bool quota_blocked);
  void RememberFailure(const Job& job, AdmissionClass admission, bool quota_blocked);
  const std::vector<int64_t>& CandidateGpus(const Job& job, int k);
  void CountPlaced(const std::vector<TaskPlacement>& tasks);

  const ClusterState& state_;
  int64_t now_;
  const SchedulerConfig& config_;
  std::unique_ptr<PassGate> gate_;  // nullptr: nothing gated
  FailedAttempts* failed_memo_ = nullptr;  // set in Run when it may be used in this pass
  FailedAttempts* memo_given_ = nullptr;
  std::vector<int64_t> pass_placed_[2];    // GPUs placed in this pass, [rack, zone][domain]
  struct CandidateKey {
    uint32_t tenant;
    int32_t priority;
    uint16_t res;
    uint8_t kind;
    auto operator<=>(const CandidateKey&) const = default;
  };
  std::map<CandidateKey, std::vector<int64_t>> candidate_gpus_;  // see CandidateGpus
  struct ArrayInPass {
    int32_t running = 0;     // elements holding resources, with this pass's placements
    int32_t candidates = 0;  // pending elements triage may still send on
  };
  std::map<ClusterState::ArrayKey, ArrayInPass> arrays_;
  std::unordered_map<std::string, AfterCheck> after_checks_;  // by (tenant, dependencies): once per pass
  Plan plan_;
  FleetView view_;
  UsageOverlay usage_;
  // The bands' queue, cleared for each band (one table of tenants per pass, not per band).
  FairQueue queue_;
  std::map<BandKey, Band> bands_;
  std::unordered_set<uint32_t> claimed_;                      // victims chosen this pass
  // Memos by Job::shape (indexes up to state.shape_count()).
  std::vector<int8_t> never_fits_;                 // -1 unknown, 0 may fit, 1 never (reason in never_why_)
  std::unordered_map<uint32_t, std::string> never_why_;
  std::vector<int32_t> failed_shape_;              // -1, or index in failed_why_: did not fit this pass
  std::vector<std::string> failed_why_;
  std::vector<int32_t> failed_why_at_;             // its index in plan_.reasons once given (-1: not yet)
  std::vector<bool> failed_reclaim_;               // reclaim failed this pass
  // The last shape that fitted only where it would delay the reservation, and the view's mark
  // then. Placement reads the view and the shape alone, so on the same view a job of that shape
  // lands on the same GPUs and delays the reservation too, unless it ends by the reservation's
  // start (DelaysLikeTheLast). The reservation is decided once a pass, so is its reason.
  struct Delaying {
    uint32_t shape = UINT32_MAX;
    size_t mark = 0;
  };
  Delaying delaying_;
  bool DelaysLikeTheLast(const Job& job) const;
  // Whether the job's placement is decided by its shape and the view alone.
  bool PlacedByShape(const Job& job) const;
  int32_t delay_why_ = -1;  // index in plan_.reasons of the "would delay" reason, once given
  uint32_t DelayReason();
  // Noisy-neighbour moves in force: job → the GPUs it is kept off. While one such job is tried
  // memo_ is false and no shape memo is written (its failure says nothing of its shape).
  std::unordered_map<uint32_t, std::vector<std::pair<NodeId, int32_t>>> kept_off_;
  bool memo_ = true;
  struct Attempt {
    uint32_t shape;
    uint32_t tenant;
    int32_t priority;
    uint8_t admission;
    bool quota_blocked;
    bool operator==(const Attempt&) const = default;
  };
  struct AttemptHash {
    size_t operator()(const Attempt& a) const {
      uint64_t h = (uint64_t{a.shape} << 32) ^ (uint64_t{a.tenant} << 8) ^ static_cast<uint32_t>(a.priority) * 0x9E3779B97F4A7C15ULL;
      return static_cast<size_t>(h ^ (h >> 29) ^ (a.admission << 1) ^ a.quota_blocked);
    }
  };
  FlatMap<Attempt, bool, AttemptHash> failed_tenant_attempts_;  // priority/fair-share attempts that failed (a set)
  std::unordered_map<ResourceId, CandidateOrder> reclaim_order_;  // per GPU model, built once
  // Settled groups: jobs of one tenant, shape, band and priority that failed in this pass with
  // nothing left to try (placement and preemption memoised as failed, no victims of their
  // own). The next job of the group fails the same way for the same reason while the pass's
  // usage is unchanged (quota and class depend on the tenant's path only, and only a placement
  // changes usage in a band), so it is settled at once: settled_[key] = (PathVersion of the
  // tenant when settled,
  // index of the reason in plan_.reasons).
  struct GroupKey {
    uint32_t shape;
    uint32_t tenant;
    int32_t priority;
    uint8_t rank;  // band rank, and best effort in bit 1
    bool operator==(const GroupKey&) const = default;
  };
  struct GroupKeyHash {
    size_t operator()(const GroupKey& k) const {
      uint64_t h = (uint64_t{k.shape} << 32 | k.tenant) * 0x9E3779B97F4A7C15ULL;
      return static_cast<size_t>(h ^ (h >> 31) ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.priority)) << 3) ^ k.rank);
    }
  };
  struct Settled {
    uint64_t version;
    uint32_t why;
  };
  // Placements under each tenant in this pass, counted at the tenants whose usage bears on
  // admission (a max or a guarantee): their sum over a path changes when a placement could
  // have changed the admission of a job of its last tenant.
  std::vector<uint64_t> usage_version_;
  bool versions_moved_ = false;  // some usage_version_ is not 0
  std::vector<int8_t> inert_;  // -1 unknown, 1: no max, no guarantee
  bool Inert(TenantId t);
  uint64_t PathVersion(TenantId t) const {
    return versions_moved_ ? PathSum(t) : 0;  // no placement has moved a version yet (most passes)
  }
  uint64_t PathSum(TenantId t) const;
  // PathSum's sums by tenant, each as of `moves` (version_moves_: placements that moved a
  // version, counted from 1, so the 0 a pass starts with never matches).
  struct PathKept {
    uint64_t moves = 0;
    uint64_t version = 0;
  };
  mutable std::vector<PathKept> path_kept_;
  uint64_t version_moves_ = 0;
  // Index in settled_ by group key: the runs' keys are entered at the first look-up (most
  // passes try few jobs outside runs), then the keys of jobs tried alone.
  FlatMap<GroupKey, uint32_t, GroupKeyHash> settled_slot_;
  bool runs_indexed_ = false;
  std::vector<Settled> settled_;  // version UINT64_MAX: not settled
  // A job's group's slot (after Triage), and a run's while Triage makes them.
  uint32_t SettledSlot(const GroupKey& key);
  uint32_t RunSlot(const GroupKey& key);
  struct RunInfo {
    GroupKey key;
    uint32_t slot;  // in settled_
    bool batch;  // its jobs may be settled in batches (not when they hold shares)
    // Its group's admission at triage (or as RunAdmission last counted it), and the tenant's
    // PathVersion then: the same while that holds (only a placement on the path's tenants with
    // a max or a guarantee changes it).
    AdmissionResult admitted;
    uint64_t admitted_version;
  };
  std::vector<RunInfo> runs_;  // by run tag
  bool may_settle_ = false;  // no gate and no drain blocks: settling is sound
  std::unordered_map<uint64_t, CandidateOrder> priority_order_;   // per (tenant, priority), built once
  struct MigDemand {
    int count = 0;       // tasks without an instance
    int64_t cpu = 0;     // the least CPU and memory one of them needs on the node
    int64_t memory = 0;
  };
  std::map<std::pair<ResourceId, uint8_t>, MigDemand> mig_unmet_;  // by (GPU model, MIG profile)
  // Backfill: whether the first job blocked for capacity was met, this pass's placements by
  // expected end (plan indexes), and the nodes of the reservation in force.
  bool reservation_tried_ = false;
  std::vector<std::pair<int64_t, uint32_t>> pass_ends_;
  std::optional<FleetView> at_start_;  // see AtReservationStart
  std::unordered_set<uint32_t> reserved_nodes_;
  // Reservations: jobs that name one (set aside by triage), what each open reservation's holds
  // have left this pass, and the held GPUs kept free for windows in their drain period.
  std::vector<JobId> reserved_pending_;
  std::unordered_map<uint32_t, std::vector<GpuCap>> hold_caps_;
  struct DrainBlock {
    NodeId node;
    uint64_t gpu_mask;  // taken in the view
    int64_t start_ms;   // the window's start
  };
  std::vector<DrainBlock> drain_blocks_;  // latest start first
  std::unordered_set<uint64_t> failed_lent_;  // (shape, usable blocks) that did not fit this pass
  std::map<ResourceId, std::unique_ptr<Scorer>> share_scorers_;  // by GPU model, built on first use  // (GPU model, MIG profile) → tasks without an instance
};

}  // namespace allot
