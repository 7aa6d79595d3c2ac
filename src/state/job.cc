#include "state/job.h"

#include "core/names.h"

namespace allot {

namespace {

Status OutOfRange(const std::string& job, const std::string& field, int64_t value, int64_t lo, int64_t hi) {
  return InvalidArgument("job '" + job + "' " + field + ": " + std::to_string(value) + " is out of range; expected " +
                         std::to_string(lo) + " to " + std::to_string(hi));
}

}  // namespace

Status JobSpec::CheckRanges() const {
  if (groups.empty()) return InvalidArgument("job '" + name + "' tasks: at least one task is required");
  if (reservation.size() > kMaxNameBytes) {
    return InvalidArgument("job '" + name + "' reservation: a name of " + std::to_string(reservation.size()) +
                           " characters; expected at most " + std::to_string(kMaxNameBytes));
  }
  if (require.size() > kMaxRequirements) {
    return OutOfRange(name, "require", static_cast<int64_t>(require.size()), 0, kMaxRequirements);
  }
  if (groups.size() > kMaxTaskGroups) {
    return OutOfRange(name, "tasks (groups)", static_cast<int64_t>(groups.size()), 1, kMaxTaskGroups);
  }
  for (const TaskGroup& g : groups) {
    if (g.count < 1 || g.count > kMaxTasksPerGroup) return OutOfRange(name, "tasks.count", g.count, 1, kMaxTasksPerGroup);
    if (g.gpu < 0 || g.gpu > kMaxGpuPerTask) return OutOfRange(name, "tasks.gpu (units)", g.gpu, 0, kMaxGpuPerTask);
    if (g.cpu < 0 || g.cpu > kMaxCpuPerTask) return OutOfRange(name, "tasks.cpu (millicores)", g.cpu, 0, kMaxCpuPerTask);
    if (g.memory < 0 || g.memory > kMaxMemoryPerTaskMiB) {
      return OutOfRange(name, "tasks.memory (MiB)", g.memory, 0, kMaxMemoryPerTaskMiB);
    }
    if (g.gpu_memory < 0 || g.gpu_memory > kMaxMemoryPerTaskMiB) {
      return OutOfRange(name, "tasks.gpu_memory (MiB)", g.gpu_memory, 0, kMaxMemoryPerTaskMiB);
    }
  }
  for (size_t i = 0; i < sizing.size(); ++i) {
    const int32_t g = sizing[i].group;
    if (g < 0 || static_cast<size_t>(g) >= groups.size() || (i > 0 && g <= sizing[i - 1].group)) {
      return OutOfRange(name, "sizing.group", g, i == 0 ? 0 : sizing[i - 1].group + 1, static_cast<int64_t>(groups.size()) - 1);
    }
  }
  if (retries < 0 || retries > kMaxRetries) return OutOfRange(name, "retries", retries, 0, kMaxRetries);
  // Up to 1Ti of GPU memory per task, as the readers take it (vram:, mps.memory).
  if (vram_mib < 0 || vram_mib > 1024 * 1024) return OutOfRange(name, "vram_mib", vram_mib, 0, 1024 * 1024);
  if (after.size() > kMaxDependencies) return OutOfRange(name, "after (dependencies)", static_cast<int64_t>(after.size()), 0, kMaxDependencies);
  for (const Dependency& d : after) {
    if (d.job.empty() || d.job.size() > kMaxNameBytes) {
      return InvalidArgument("job '" + name + "' after.job: a name of " + std::to_string(d.job.size()) +
                             " characters; expected 1 to " + std::to_string(kMaxNameBytes));
    }
    if (static_cast<int>(d.state) > static_cast<int>(AfterState::kFailed)) return InvalidArgument("job '" + name + "' after.state: unknown");
  }
  if (!array.empty()) {
    if (array.array.size() > kMaxNameBytes) return InvalidArgument("job '" + name + "' array: name too long");
    if (array.count < 1 || array.count > kMaxArrayElements) return OutOfRange(name, "array.count", array.count, 1, kMaxArrayElements);
    if (array.index < 0 || array.index >= array.count) return OutOfRange(name, "array.index", array.index, 0, array.count - 1);
    if (array.parallel < 1 || array.parallel > array.count) return OutOfRange(name, "array.parallel", array.parallel, 1, array.count);
    if (array.frame < -1 || array.frame > kMaxJobTimeMs) return OutOfRange(name, "array.frame", array.frame, -1, kMaxJobTimeMs);
    if (name != array.array + "-" + std::to_string(array.index)) {
      return InvalidArgument("job '" + name + "' array: element " + std::to_string(array.index) + " of '" + array.array +
                             "' must be named '" + array.array + "-" + std::to_string(array.index) + "'");
    }
  }
  const std::pair<const char*, int64_t> times[] = {{"duration", duration_ms},
                                                   {"time_limit", time_limit_ms},
                                                   {"min_runtime", min_runtime_ms},
                                                   {"checkpoint_interval", checkpoint_interval_ms},
                                                   {"grace", grace_ms}};
  for (const auto& [field, ms] : times) {
    if (ms < 0 || ms > kMaxJobTimeMs) return OutOfRange(name, std::string(field) + " (ms)", ms, 0, kMaxJobTimeMs);
  }
  return Status::Ok();
}

Demand JobSpec::TotalDemand() const {
  Demand d;
  d.gpu_resource = gpu_resource;
  for (const TaskGroup& g : groups) {
    d.gpu += g.gpu * g.count;
    d.cpu += g.cpu * g.count;
    d.memory += g.memory * g.count;
  }
  return d;
}

int JobSpec::TaskCount() const {
  int n = 0;
  for (const TaskGroup& g : groups) n += g.count;
  return n;
}

bool JobSpec::HasShares() const {
  for (const TaskGroup& g : groups) if (g.shared()) return true;
  return false;
}

bool JobSpec::BestEffort() const {
  for (const TaskGroup& g : groups) if (g.share == ShareKind::kTimeslice) return true;
  return false;
}

const char* JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kBatch: return "batch";
    case JobKind::kTraining: return "training";
    case JobKind::kInference: return "inference";
    case JobKind::kInteractive: return "interactive";
  }
  return "batch";
}

std::optional<JobKind> ParseJobKind(std::string_view name) {
  for (int i = 0; i < kJobKinds; ++i) {
    if (name == JobKindName(static_cast<JobKind>(i))) return static_cast<JobKind>(i);
  }
  return std::nullopt;
}

const char* TopologyName(Topology t) {
  switch (t) {
    case Topology::kNone: return "none";
    case Topology::kNvlink: return "nvlink";
    case Topology::kRack: return "rack";
    case Topology::kZone: return "zone";
  }
  return "none";
}

const char* AfterStateName(AfterState s) {
  switch (s) {
    case AfterState::kSucceeded: return "succeeded";
    case AfterState::kFinished: return "finished";
    case AfterState::kFailed: return "failed";
  }
  return "succeeded";
}

std::optional<AfterState> ParseAfterState(std::string_view name) {
  if (name == "succeeded") return AfterState::kSucceeded;
  if (name == "finished") return AfterState::kFinished;
  if (name == "failed") return AfterState::kFailed;
  return std::nullopt;
}

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kPending: return "pending";
    case JobState::kRunning: return "running";
    case JobState::kPreempting: return "preempting";
    case JobState::kFinished: return "finished";
    case JobState::kRejected: return "rejected";
    case JobState::kCancelled: return "cancelled";
    case JobState::kFailed: return "failed";
  }
  return "pending";
}

const char* AdmissionClassName(AdmissionClass c) {
  switch (c) {
    case AdmissionClass::kNone: return "none";
    case AdmissionClass::kGuaranteed: return "guaranteed";
    case AdmissionClass::kBurstable: return "burstable";
    case AdmissionClass::kReserved: return "reserved";
  }
  return "none";
}

const char* PreemptKindName(PreemptKind k) {
  switch (k) {
    case PreemptKind::kReclaim: return "reclaim";
    case PreemptKind::kPriority: return "priority";
    case PreemptKind::kFairShare: return "fair-share";
    case PreemptKind::kReservation: return "reservation";
    case PreemptKind::kWindowEnd: return "window-end";
    case PreemptKind::kInterference: return "interference";
    case PreemptKind::kIsolation: return "isolation";
  }
  return "reclaim";
}

}  // namespace allot
