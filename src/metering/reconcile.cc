#include "metering/reconcile.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace allot {
namespace {

// GPU units of each task in placement order; kGpuUnit each for a job holding no GPU.
std::vector<int64_t> TaskWeights(const Job& j) {
  std::vector<int64_t> w;
  bool gpus = j.demand.gpu > 0;
  for (const TaskGroup& g : j.spec.groups) {
    for (int i = 0; i < g.count; ++i) w.push_back(gpus ? g.gpu : kGpuUnit);
  }
  return w;
}

// Whether run `run` of `j` ran on agent-managed nodes: an ended run says so itself; the last
// is judged by the job's placement.
bool AgentRun(const ClusterState& st, const Job& j, int32_t run) {
  if (run >= 0 && static_cast<size_t>(run) < j.ended_runs.size()) return j.ended_runs[run].on_agents;
  return std::any_of(j.placement.begin(), j.placement.end(),
                     [&](const TaskPlacement& p) { return st.agent_managed(p.node); });
}

struct RunSpan {
  int64_t start_ms = -1, end_ms = -1;
  bool open = false;
};

// Run `run` of `j`: an ended run, the last (closed or open), or none (start -1).
RunSpan SpanOf(const Job& j, int32_t run) {
  size_t ended = j.ended_runs.size();
  if (run >= 0 && static_cast<size_t>(run) < ended) return {j.ended_runs[run].start_ms, j.ended_runs[run].end_ms, false};
  if (static_cast<size_t>(run) != ended || j.last_started_ms < 0) return {};
  if (j.holds_resources()) return {j.last_started_ms, -1, true};
  if (j.state == JobState::kFinished || j.state == JobState::kFailed) return {j.last_started_ms, j.finished_ms, false};
  return {};  // pending again, cancelled or rejected: run `ended` has not happened
}

bool Over(int64_t held, int64_t reported, int64_t units, const ReconcileOptions& o) {
  __int128 diff = static_cast<__int128>(held) - reported;
  if (diff < 0) diff = -diff;
  __int128 abs_slack = static_cast<__int128>(o.tolerance_ms) * units;
  // diff > held × pct_milli / 100000, cross-multiplied so nothing is rounded.
  bool over_pct = diff * 100000 > static_cast<__int128>(held) * o.tolerance_pct_milli;
  return diff > abs_slack && over_pct;
}

}  // namespace

const char* FindingName(Finding f) {
  switch (f) {
    case Finding::kOverTolerance: return "over-tolerance";
    case Finding::kNoReport: return "no-report";
    case Finding::kNoAllocation: return "no-allocation";
  }
  return "?";
}

int64_t UnitsMsToGpuMs(int64_t units_ms) {
  int64_t half = kGpuUnit / 2;
  return units_ms >= 0 ? (units_ms + half) / kGpuUnit : -((-units_ms + half) / kGpuUnit);
}

ReconcileReport Reconcile(const ClusterState& st, const ReconcileOptions& o) {
  // Reports by (job, run) → their indexes into task_reports().
  std::map<std::pair<uint32_t, int32_t>, std::vector<size_t>> by_run;
  const auto& reports = st.task_reports();
  for (size_t i = 0; i < reports.size(); ++i) by_run[{reports[i].job.value(), reports[i].run}].push_back(i);

  ReconcileReport out;
  // 1. Every run that ended in the window and ran on agents (or was reported by one).
  for (const Job& j : st.jobs()) {
    if (j.first_started_ms < 0) continue;
    std::vector<int64_t> weights;  // made for the first run compared
    int64_t units = 0;
    int32_t runs = static_cast<int32_t>(j.ended_runs.size()) + 1;
    for (int32_t run = 0; run < runs; ++run) {
      RunSpan span = SpanOf(j, run);
      if (span.start_ms < 0 || span.open || span.end_ms < o.from_ms || span.end_ms >= o.to_ms) continue;
      auto it = by_run.find({j.id.value(), run});
      if (it == by_run.end() && !AgentRun(st, j, run)) continue;  // a simulated run: nothing to compare
      if (weights.empty()) {
        weights = TaskWeights(j);
        for (int64_t w : weights) units += w;
      }
      ReconcileRow row;
      row.job = j.id;
      row.run = run;
      row.start_ms = span.start_ms;
      row.end_ms = span.end_ms;
      row.tasks = static_cast<int32_t>(weights.size());
      row.scheduler_units_ms = units * (span.end_ms - span.start_ms);
      if (it != by_run.end()) {
        for (size_t i : it->second) {
          const ClusterState::TaskRunReport& t = reports[i];
          if (t.task >= row.tasks) continue;  // listed below, as a report without an allocation
          row.agent_units_ms += weights[t.task] * (t.ended_ms - t.started_ms);
          row.tasks_reported += 1;
        }
      }
      out.allocations += 1;
      if (row.tasks_reported == 0) {
        row.finding = Finding::kNoReport;
      } else if (Over(row.scheduler_units_ms, row.agent_units_ms, units, o)) {
        row.finding = Finding::kOverTolerance;
      } else {
        out.within += 1;
        continue;
      }
      out.rows.push_back(row);
    }
  }
  // 2. Reports recorded in the window that name no run or task the scheduler held.
  for (const ClusterState::TaskRunReport& t : reports) {
    if (t.recorded_ms < o.from_ms || t.recorded_ms >= o.to_ms) continue;
    const Job& j = st.job(t.job);
    RunSpan span = SpanOf(j, t.run);
    if (span.start_ms >= 0 && t.task < j.spec.TaskCount()) continue;
    ReconcileRow row;
    row.finding = Finding::kNoAllocation;
    row.job = t.job;
    row.run = t.run;
    row.task = t.task;
    row.node = st.fleet().node(t.node).name;
    row.tasks = j.spec.TaskCount();
    std::vector<int64_t> weights = TaskWeights(j);
    row.agent_units_ms = (t.task < row.tasks ? weights[t.task] : 0) * (t.ended_ms - t.started_ms);
    out.rows.push_back(row);
  }
  // 3. One order: job, run, task (a run's own row, task -1, first), then finding.
  std::sort(out.rows.begin(), out.rows.end(), [](const ReconcileRow& a, const ReconcileRow& b) {
    return std::tie(a.job, a.run, a.task, a.finding) < std::tie(b.job, b.run, b.task, b.finding);
  });
  return out;
}

}  // namespace allot
