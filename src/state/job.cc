#include "state/job.h"

namespace allot {

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
  }
  return "none";
}

const char* PreemptKindName(PreemptKind k) {
  switch (k) {
    case PreemptKind::kReclaim: return "reclaim";
    case PreemptKind::kPriority: return "priority";
    case PreemptKind::kFairShare: return "fair-share";
  }
  return "reclaim";
}

}  // namespace allot
