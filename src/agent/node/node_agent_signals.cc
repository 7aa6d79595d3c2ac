// NodeAgent's part in the noisy-neighbour loop (docs/noisy-neighbour.md): what it reports of
// the tasks on its shared GPUs, the MPS throttle allotd assigns a noisy neighbour, and the
// stated VRAM of time-slice tasks (docs/arrays.md).
#include <algorithm>

#include "agent/node/node_agent.h"

namespace allot {

void NodeAgent::AddTaskActivity(const std::vector<GpuSample>& samples, std::vector<GpuTelemetry>& gpus) {
  for (auto& [key, t] : tasks_) {
    if (t.exit || t.a.gpus.empty() || (t.a.share != ShareKind::kMps && t.a.share != ShareKind::kTimeslice)) continue;
    TaskGpuActivity activity;
    activity.job_id = t.a.job_id;
    activity.task = t.a.task;
    activity.run = t.a.run;
    t.latency.Read();
    activity.p99_us = t.latency.p99_us();
    activity.bad_latency_lines = t.latency.bad_lines();
    const int gpu = t.a.gpus[0];
    for (const GpuSample& s : samples) {
      if (s.index != gpu) continue;
      if (auto pids = runner_->Pids(key)) AttributeUtilization(s.process_utilization, *pids, activity);
    }
    for (GpuTelemetry& g : gpus) {
      if (g.index == gpu) g.tasks.push_back(activity);
    }
  }
}

void NodeAgent::EnforceVram(const std::vector<GpuSample>& samples) {
  for (auto& [key, t] : tasks_) {
    // An MPS share has the driver's pinned memory limit, a whole GPU or MIG instance its own
    // memory: only a time-slice share needs watching.
    if (t.exit || t.a.vram_mib <= 0 || t.a.share != ShareKind::kTimeslice || t.a.gpus.empty()) continue;
    for (const GpuSample& s : samples) {
      if (s.index != t.a.gpus[0]) continue;
      auto pids = runner_->Pids(key);
      if (!pids) continue;
      if (auto why = VramOverrun(s.processes, *pids, t.a.vram_mib)) {
        Log("task " + key + " (" + t.a.job + "): " + *why + "; stopping it");
        runner_->Kill(key, *why);
      }
    }
  }
}

void NodeAgent::ApplyThrottle(Local& t, const Assignment& a, int64_t now) {
  const int gpu = a.gpus.empty() ? -1 : a.gpus[0];
  if (gpu < 0 || gpu >= static_cast<int>(inventory_.gpus.size())) return;
  const std::string& uuid = inventory_.gpus[gpu].uuid;
  const int percent = a.mps_throttle_percent > 0 ? a.mps_throttle_percent : std::max(1, a.mps_percent);
  auto uid = MpsUid(a.tenant);
  Status s = uid ? mps_->SetServerActiveThreadPercentage({uuid, *uid}, percent) : uid.error();
  if (!s.ok()) {
    t.next_throttle_try = now + 5000;  // its server may not have started yet
    Log("task " + t.key + " (" + a.job + "): MPS active thread percentage " + std::to_string(percent) + ": " + s.message());
    return;
  }
  t.throttle_applied = a.mps_throttle_percent;
  Log("task " + t.key + " (" + a.job + "): tenant '" + a.tenant + "' MPS server on GPU " + std::to_string(gpu) +
      " set to " + std::to_string(percent) + "% active threads" +
      (a.mps_throttle_percent > 0 ? " (throttled as a noisy neighbour)" : " (throttle lifted)"));
}

}  // namespace allot
