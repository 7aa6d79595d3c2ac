// Reconciliation: what the scheduler held for each allocation (a job's run) against what the
// node agents say its tasks ran (TaskRunReported), and the differences beyond a tolerance.
//
// Both sides are in GPU units × ms, each task weighted by the GPU units it holds (a job with no
// GPU weighs kGpuUnit a task, so its task time is reconciled too):
//   scheduler  the run's GPUs × its held time [start, end)
//   agents     Σ over the run's reported tasks of the task's GPUs × (ended − started)
// An allocation is in the window when its run ended in [from, to): a run still open has no
// exits to compare yet. A run is compared when an agent reported it or it ran on an
// agent-managed node (Job::RunSpan::on_agents; the last run by the job's placement).
// Pure: `now` is not needed, nothing is read but the state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "state/cluster_state.h"

namespace allot {

struct ReconcileOptions {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  // A difference is listed when it exceeds both: tolerance_ms on every GPU the run held, and
  // tolerance_pct_milli thousandths of a percent of the scheduler's figure (0: no slack).
  int64_t tolerance_ms = 5000;
  int64_t tolerance_pct_milli = 0;
};

enum class Finding : uint8_t {
  kOverTolerance,  // reported and held differ by more than the tolerance
  kNoReport,       // the run ended and no agent reported any of its tasks
  kNoAllocation,   // a report names a run or task the scheduler never held
};
const char* FindingName(Finding f);  // "over-tolerance", "no-report", "no-allocation"

struct ReconcileRow {
  Finding finding = Finding::kOverTolerance;
  JobId job;
  int32_t run = 0;
  int32_t task = -1;          // kNoAllocation: the report's task; otherwise -1 (the whole run)
  int64_t start_ms = -1;      // the run's held span; -1 when there is none
  int64_t end_ms = -1;
  int64_t scheduler_units_ms = 0;
  int64_t agent_units_ms = 0;
  int32_t tasks = 0;           // the run's tasks
  int32_t tasks_reported = 0;  // of them, reported
  std::string node;           // kNoAllocation: the reporting node
  bool operator==(const ReconcileRow&) const = default;
};

struct ReconcileReport {
  int32_t allocations = 0;  // agent-run allocations compared in the window
  int32_t within = 0;       // of them, within the tolerance
  // By (job, run, task): the same state and options give the same rows.
  std::vector<ReconcileRow> rows;
};

ReconcileReport Reconcile(const ClusterState& state, const ReconcileOptions& options);

// units·ms → GPU-ms, rounded half away from zero.
int64_t UnitsMsToGpuMs(int64_t units_ms);

}  // namespace allot
