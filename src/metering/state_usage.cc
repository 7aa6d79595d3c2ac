#include "metering/state_usage.h"

#include <algorithm>

namespace allot {

UsageClass ClassOf(const Job& job, AdmissionClass run_admission) {
  // A run restored from a format-2 snapshot has no class of its own: its job's last.
  AdmissionClass a = run_admission == AdmissionClass::kNone ? job.admission : run_admission;
  if (a == AdmissionClass::kReserved) return UsageClass::kReserved;
  if (job.best_effort) return UsageClass::kBestEffort;
  return a == AdmissionClass::kGuaranteed ? UsageClass::kGuaranteed : UsageClass::kBurstable;
}

UsageInterval RunInterval(const Job& j, int64_t start_ms, int64_t end_ms, AdmissionClass a, NodeId node) {
  UsageInterval iv;
  iv.job = j.id;
  iv.tenant = j.spec.tenant;
  iv.gpu_resource = j.demand.gpu > 0 ? j.demand.gpu_resource : kCpu;
  iv.topology = j.spec.topology;
  iv.gpu = j.demand.gpu;
  iv.cpu = j.demand.cpu;
  iv.memory = j.demand.memory;
  iv.usage_class = ClassOf(j, a);
  iv.node = node;
  iv.start_ms = start_ms;
  iv.end_ms = end_ms;
  return iv;
}

std::vector<UsageInterval> IntervalsFromState(const ClusterState& state, int64_t from_ms, int64_t to_ms,
                                              int64_t now_ms) {
  std::vector<UsageInterval> out;
  for (const Job& j : state.jobs()) {
    if (j.first_started_ms < 0 || j.first_started_ms >= to_ms) continue;
    bool ended = j.state == JobState::kFinished || j.state == JobState::kFailed;  // its last run closed
    if (ended && j.finished_ms <= from_ms) continue;
    auto add = [&](int64_t start, int64_t end, AdmissionClass a, NodeId node) {
      start = std::max(start, from_ms);
      end = std::min(end, to_ms);
      if (end > start) out.push_back(RunInterval(j, start, end, a, node));
    };
    for (const Job::RunSpan& r : j.ended_runs) add(r.start_ms, r.end_ms, r.admission, NodeId());
    NodeId first = j.placement.empty() ? NodeId() : j.placement.front().node;
    if (j.holds_resources()) {
      add(j.last_started_ms, now_ms, j.admission, first);
    } else if (ended) {
      add(j.last_started_ms, j.finished_ms, j.admission, first);
    }
  }
  return out;
}

}  // namespace allot
