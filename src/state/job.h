// A job: a gang of task groups, placed all together or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "fleet/labels.h"
#include "fleet/node.h"
#include "state/job_environment.h"
#include "state/sizing.h"

namespace allot {

enum class Topology : uint8_t { kNone, kNvlink, kRack, kZone };
const char* TopologyName(Topology t);
// The domain a topology keeps a gang or a reservation in. REQUIRES: t != kNone.
inline DomainKind DomainKindOf(Topology t) {
  return t == Topology::kNvlink ? DomainKind::kNvlink : t == Topology::kRack ? DomainKind::kRack : DomainKind::kZone;
}

// What a job is for. Configuration may restrict the pool kinds each kind may use
// (SchedulerConfig::kind_pools), e.g. inference on MIG/MPS, training on whole GPUs.
enum class JobKind : uint8_t { kBatch, kTraining, kInference, kInteractive };
inline constexpr int kJobKinds = 4;
const char* JobKindName(JobKind k);
// "batch", "training", "inference", "interactive" → the kind; nullopt otherwise.
std::optional<JobKind> ParseJobKind(std::string_view name);

// Named priority classes; any integer is allowed too.
inline constexpr int32_t kPriorityLow = 0;
inline constexpr int32_t kPriorityNormal = 100;
inline constexpr int32_t kPriorityHigh = 200;

// What each task of a group asks for. Whole GPUs: share == kWhole and gpu a multiple of
// kGpuUnit. A share of one GPU: share names the mechanism (mig / mps / timeslice), or the task
// asked a bare fraction ("gpus: 0.46", fractional) and submission picked the mechanism the
// pools of its GPU model offer. Submission also sets gpu to what the share is charged for
// quota and fairness: a MIG instance its compute slices / the GPU's, MPS its percentage, a
// time-slice replica 1/N.
struct TaskGroup {
  int count = 1;
  int64_t gpu = 0;     // GPU units per task (whole GPUs: a multiple of kGpuUnit)
  int64_t cpu = 0;     // millicores per task
  int64_t memory = 0;  // MiB per task
  ShareKind share = ShareKind::kWhole;
  bool fractional = false;   // asked as a fraction of a GPU
  uint8_t mig_profile = 0;   // kMig: index into the model's MIG profiles
  uint16_t percent = 0;      // kMps: active-thread percentage
  int64_t gpu_memory = 0;    // kMps: pinned device memory limit, MiB (0: in proportion)
  int gpus() const { return share == ShareKind::kWhole ? static_cast<int>(gpu / kGpuUnit) : 0; }
  bool shared() const { return share != ShareKind::kWhole || fractional; }
  bool operator==(const TaskGroup&) const = default;
};

// The widest a stored job may be: every reader's own limits (docs/scenario.md) lie within these,
// and a journal event or a snapshot beyond them is damaged. They keep a job's total demand
// (count × amount over every group) and its times (start + duration) far from int64 overflow.
inline constexpr size_t kMaxTaskGroups = 1'000;
inline constexpr int kMaxTasksPerGroup = 100'000;
inline constexpr int64_t kMaxGpuPerTask = 1'024 * kGpuUnit;         // GPU units
inline constexpr int64_t kMaxCpuPerTask = 1'000'000 * int64_t{1000};  // millicores
inline constexpr int64_t kMaxMemoryPerTaskMiB = int64_t{1} << 30;    // 1 PiB
inline constexpr int64_t kMaxJobTimeMs = int64_t{100} * 366 * 86'400'000;  // a duration or limit: 100 years

// Which element of an array a job is (docs/arrays.md). An array of N elements is N jobs named
// NAME-0 … NAME-(N-1), submitted together; at most `parallel` of them hold resources at once.
struct ArrayElement {
  std::string array;    // the array's name; "" for a job that is no element
  int32_t index = -1;   // 0 … count-1 (ALLOT_ARRAY_INDEX)
  int64_t frame = -1;   // a frame array's frame number (ALLOT_FRAME); -1 for a counted array
  int32_t count = 0;    // elements in the array
  int32_t parallel = 0; // at most this many elements run at once
  bool empty() const { return array.empty(); }
  bool operator==(const ArrayElement&) const = default;
};

// A pipeline's edge: the job waits until `job` (a job or an array of its tenant) has ended in
// `state` (docs/arrays.md). kFailed is met by any end but success (failed, cancelled, rejected).
enum class AfterState : uint8_t { kSucceeded, kFinished, kFailed };
const char* AfterStateName(AfterState s);
std::optional<AfterState> ParseAfterState(std::string_view name);
struct Dependency {
  std::string job;
  AfterState state = AfterState::kSucceeded;
  bool operator==(const Dependency&) const = default;
};

// The most runs a failed job is retried, and the most dependencies one job may name.
inline constexpr int32_t kMaxRetries = 100;
inline constexpr size_t kMaxDependencies = 100;
inline constexpr int32_t kMaxArrayElements = 100'000;

struct JobSpec {
  std::string name;
  TenantId tenant;
  ResourceId gpu_resource = kCpu;  // the GPU model every task uses; kCpu when none
  std::vector<TaskGroup> groups;
  Topology topology = Topology::kNone;
  JobKind kind = JobKind::kBatch;
  int32_t priority = kPriorityNormal;
  int64_t duration_ms = 0;             // work to do
  int64_t time_limit_ms = 0;           // declared limit; 0: the duration is the estimate
  int64_t min_runtime_ms = 0;          // protected from fair-share preemption this long
  int64_t checkpoint_interval_ms = 0;  // 0: cannot checkpoint
  int64_t grace_ms = 30000;            // signal → kill
  int64_t submit_ms = 0;
  // What each task runs (argv), launched by the node agent; empty: a job that only "runs" for
  // its duration on a simulated fleet.
  std::vector<std::string> command;
  // Where the command runs (image, volumes, variables, /dev/shm); empty without a command.
  JobEnvironment environment;
  // The tenant's reservation the job runs in (state/reservation.h), or empty: then it runs only
  // inside that reservation's windows, on its holds.
  std::string reservation;
  // Node labels every node of the job must satisfy (fleet/labels.h), sorted; empty: any node.
  Requirements require;
  // The task groups sized from a `model:` (state/sizing.h), by group index ascending; empty for
  // a job that asks its shares itself. Their groups' fields already hold the chosen allocation.
  std::vector<GroupSizing> sizing;
  // The array this job is an element of (empty: none); a failed run is retried this many
  // times before the job ends failed; the jobs it waits for.
  ArrayElement array;
  int32_t retries = 0;
  std::vector<Dependency> after;
  // The template the job was submitted from (docs/templates.md) and the tenant path it was found
  // at, or empty: a record of where its defaults came from (its fields already hold them).
  std::string template_name;
  std::string template_tenant;
  // The GPU memory each task may use (`vram:`), MiB; 0: not stated. An MPS share's memory limit;
  // on a time-slice share the node agent stops a task using more (docs/arrays.md).
  int64_t vram_mib = 0;

  bool operator==(const JobSpec&) const = default;
  // Every count, amount and time within the limits above, or what is not, naming the job and
  // the field. TotalDemand() may be called only on a spec that passes.
  Status CheckRanges() const;
  // Sum over every task.
  Demand TotalDemand() const;
  int TaskCount() const;
  // Some task asks a share of a GPU rather than whole GPUs.
  bool HasShares() const;
  // Some task asks a time-slice replica: the job runs best effort (always burstable).
  bool BestEffort() const;
};

// kFailed: a task exited unsuccessfully (code, signal, memory or time limit); see Job::reason.
enum class JobState : uint8_t { kPending, kRunning, kPreempting, kFinished, kRejected, kCancelled, kFailed };
const char* JobStateName(JobState s);

// kReserved: a job that names a reservation runs on that reservation's capacity in its window:
// admitted by the booking (no quota check), counted in usage but not against the guarantee,
// never a victim of reclaim, priority or fair-share preemption.
enum class AdmissionClass : uint8_t { kNone, kGuaranteed, kBurstable, kReserved };
const char* AdmissionClassName(AdmissionClass c);

// kReservation: lent work on a reservation's capacity, reclaimed for the reservation's job;
// kWindowEnd: a reservation's job stopped (with its grace) because its window ended.
// kInterference: a noisy-neighbour response (state/interference.h) moves the job at its next
// checkpoint, or requeues a victim to harden its share.
// kIsolation: an untrusted tenant's job on a node whose agent cannot confine tasks in every way
// (isolation=partial), moved off it.
enum class PreemptKind : uint8_t { kReclaim, kPriority, kFairShare, kReservation, kWindowEnd, kInterference, kIsolation };
inline constexpr PreemptKind kLastPreemptKind = PreemptKind::kIsolation;
const char* PreemptKindName(PreemptKind k);

// A pending job's place in the queue: queue time (submit, or requeue after a preemption), then id.
struct QueuedJob {
  int64_t queued_ms = INT64_MAX;
  uint32_t id = UINT32_MAX;
  auto operator<=>(const QueuedJob&) const = default;
};

struct Job {
  JobId id;
  JobSpec spec;
  Demand demand;  // spec.TotalDemand(), cached
  // Interned placement shape (GPU model, topology, task groups): jobs with equal shapes fit or
  // fail alike, so a pass memoises by it. Dense, from 0, assigned at submit.
  uint32_t shape = 0;
  bool has_shares = false;   // spec.HasShares(), cached
  bool best_effort = false;  // spec.BestEffort(), cached
  JobState state = JobState::kPending;
  AdmissionClass admission = AdmissionClass::kNone;  // of the current or last run
  int64_t first_started_ms = -1;
  int64_t last_started_ms = -1;
  int64_t finished_ms = -1;
  int32_t preemptions = 0;
  int64_t last_preempted_ms = -1;
  int64_t preempt_deadline_ms = -1;
  PreemptKind preempt_kind = PreemptKind::kReclaim;
  JobId preemptor;
  int64_t saved_work_ms = 0;  // progress kept across requeues (checkpoints)
  // Queue position: the submit time, or the requeue time after a preemption (as Kueue's
  // eviction timestamp), so the preemptor is not overtaken by its own victim.
  int64_t queued_ms = 0;
  // While active: when it is expected to free its resources (start + estimated run time, or
  // the preemption deadline). Backfill reads active jobs in this order.
  int64_t expected_end_ms = 0;
  std::vector<TaskPlacement> placement;  // current, or last if stopped
  std::string reason;  // why rejected or failed, or why last requeued
  int32_t requeues = 0;  // runs lost to node failures (not counted as preemptions)
  int32_t failures = 0;  // failed runs retried (spec.retries); the job ends failed after one more
  // The task groups as submitted while spec.groups holds a hardened share (a noisy-neighbour
  // response: state/interference.h); empty otherwise.
  std::vector<TaskGroup> own_groups;
  // Runs ended by a preemption or a cancel, [start, end) in ms: empty for most jobs. With the
  // last run (open while the job holds resources; last_started_ms to finished_ms once finished)
  // they are when the job held resources: what usage and metering count.
  struct RunSpan {
    int64_t start_ms;
    int64_t end_ms;
    AdmissionClass admission = AdmissionClass::kNone;  // of that run (metering prices by it)
    bool on_agents = false;  // a task of that run was on an agent-managed node (reconciliation)
    bool operator==(const RunSpan&) const = default;
  };
  std::vector<RunSpan> ended_runs;

  // Calls fn(start_ms, end_ms) for every run, the open one ending at `now_ms`.
  template <class F>
  void ForEachRun(int64_t now_ms, F&& fn) const {
    for (const RunSpan& r : ended_runs) fn(r.start_ms, r.end_ms);
    if (holds_resources()) {
      fn(last_started_ms, now_ms);
    } else if ((state == JobState::kFinished || state == JobState::kFailed) && last_started_ms >= 0) {
      fn(last_started_ms, finished_ms);
    }
  }

  bool holds_resources() const { return state == JobState::kRunning || state == JobState::kPreempting; }
  int64_t remaining_work_ms() const { return spec.duration_ms - saved_work_ms; }
  // What the scheduler may assume about the run time left (for backfill): the time limit if
  // declared, else the declared duration, less the work saved by earlier runs.
  // A command job or a service's replica with neither is taken to run for a year: backfill never
  // counts on its end.
  static constexpr int64_t kUnknownRuntimeMs = 365LL * 24 * 3600 * 1000;
  int64_t estimated_remaining_ms() const {
    // A service's replica (kind inference, no duration: only a service makes one) runs until
    // removed, command or not.
    if (spec.time_limit_ms == 0 && spec.duration_ms == 0 && (!spec.command.empty() || spec.kind == JobKind::kInference)) {
      return kUnknownRuntimeMs;
    }
    return (spec.time_limit_ms > 0 ? spec.time_limit_ms : spec.duration_ms) - saved_work_ms;
  }
};

// Asks the cache for the parts of a job a walk over many jobs reads (a victim order, the
// backfill walk): its tenant and model, priority and protections, demand, run times and task
// list, each on its own line of a 712-byte job. Changes nothing.
inline void PrefetchJob(const Job& j) {
  __builtin_prefetch(&j.spec.tenant);
  __builtin_prefetch(&j.spec.priority);
  __builtin_prefetch(&j.demand);
  __builtin_prefetch(&j.last_started_ms);
  __builtin_prefetch(&j.placement);
}

}  // namespace allot
