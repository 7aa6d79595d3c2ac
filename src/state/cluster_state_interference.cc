// ClusterState::Apply for the noisy-neighbour responses (state/interference.h). The detector
// (scheduler/interference.h) decides; here only what the state can check is refused.
#include <algorithm>
#include <tuple>

#include "fleet/mig.h"
#include "state/cluster_state.h"

namespace allot {
namespace {

auto KeyOf(const InterferenceResponse& r) {
  return std::make_tuple(r.node.value(), r.gpu, r.neighbour.value(), r.neighbour_task, static_cast<int>(r.action));
}

std::string Ms(int64_t us) {
  std::string s = std::to_string(us / 1000);
  if (us % 1000 != 0) {
    std::string frac = std::to_string(1000 + us % 1000).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + " ms";
}

// "a 1g.10gb MIG instance", "a whole GPU"
std::string HeldBy(const TaskGroup& g) {
  if (g.share == ShareKind::kMig) return "a MIG instance (profile " + std::to_string(g.mig_profile) + ")";
  return g.gpus() == 1 ? "a whole GPU" : std::to_string(g.gpus()) + " whole GPUs";
}

}  // namespace

const char* InterferenceActionName(InterferenceAction a) {
  switch (a) {
    case InterferenceAction::kThrottle: return "throttle";
    case InterferenceAction::kMove: return "move";
    case InterferenceAction::kHarden: return "harden";
  }
  return "unknown";
}

std::string InterferenceResponse::Describe() const {
  const std::string n = "task " + std::to_string(neighbour_task) + " of job " + std::to_string(neighbour.value()) + " (the neighbour)";
  const std::string v = "task " + std::to_string(victim_task) + " of job " + std::to_string(victim.value()) + " (the victim)";
  std::string what;
  switch (action) {
    case InterferenceAction::kThrottle:
      what = "throttle of " + n + " to " + std::to_string(percent) + "% MPS active threads (its share: " +
             std::to_string(neighbour_percent) + "%)";
      break;
    case InterferenceAction::kMove:
      what = "move of " + n + " at its next checkpoint, kept off this GPU while in force,";
      break;
    case InterferenceAction::kHarden:
      what = "hardening of " + v + " to " + HeldBy(hardened) + " from its next start, away from " + n + ",";
      break;
  }
  return what + " on GPU " + std::to_string(gpu) + ": " + v + " had p99 " + Ms(p99_us) + " against its baseline " +
         Ms(baseline_p99_us) + " while the neighbour used " + std::to_string(neighbour_sm_percent) + "% SM and " +
         std::to_string(neighbour_memory_percent) + "% memory bandwidth";
}

int32_t ClusterState::ThrottleOf(NodeId node, JobId job, int32_t task, int32_t run) const {
  for (const InterferenceResponse& r : interference_) {
    if (r.node == node && r.neighbour == job && r.neighbour_task == task && r.neighbour_run == run &&
        r.action == InterferenceAction::kThrottle) {
      return r.percent;
    }
  }
  return 0;
}

const InterferenceResponse* ClusterState::HardeningOf(JobId victim) const {
  for (const InterferenceResponse& r : interference_) {
    if (r.action == InterferenceAction::kHarden && r.victim == victim) return &r;
  }
  return nullptr;
}

void ClusterState::ApplyHardening(Job& j) {
  const InterferenceResponse* h = HardeningOf(j.id);
  if (h && j.own_groups.empty()) {
    j.own_groups = j.spec.groups;
    j.spec.groups[h->victim_group] = h->hardened;
  } else if (!h && !j.own_groups.empty()) {
    j.spec.groups = std::move(j.own_groups);
    j.own_groups.clear();
  } else {
    return;
  }
  RefreshShape(j);
  if (reservation_ && reservation_->job == j.id) reservation_.reset();  // planned for the old shape
}

Status ClusterState::CheckInterference(const InterferenceResponse& r) const {
  auto bad = [&](const std::string& field, int64_t value, const std::string& expected) {
    return InvalidArgument("interference response: " + field + " " + std::to_string(value) + ": expected " + expected);
  };
  if (!r.node.valid() || r.node.value() >= fleet_.size()) return bad("node", r.node.value(), "a known node");
  const int gpus = fleet_.node(r.node).gpu_count;
  if (r.gpu < 0 || r.gpu >= gpus) return bad("gpu", r.gpu, "0 to " + std::to_string(gpus - 1));
  for (auto [field, id] : {std::pair{"victim", r.victim}, std::pair{"neighbour", r.neighbour}}) {
    if (!id.valid() || id.value() >= jobs_.size()) return bad(field, id.value(), "a known job");
  }
  if (r.victim == r.neighbour) return bad("neighbour", r.neighbour.value(), "a job other than the victim");
  if (r.action > kLastInterferenceAction) return bad("action", static_cast<int>(r.action), "0 (throttle), 1 (move) or 2 (harden)");
  if (r.action == InterferenceAction::kThrottle && (r.percent < 1 || r.percent > 100)) return bad("percent", r.percent, "1 to 100");
  if (r.action != InterferenceAction::kThrottle && r.percent != 0) return bad("percent", r.percent, "0 (only a throttle has one)");
  if (r.neighbour_percent < 0 || r.neighbour_percent > 100) return bad("neighbour_percent", r.neighbour_percent, "0 to 100");
  if (r.neighbour_sm_percent < 0 || r.neighbour_sm_percent > 100) return bad("neighbour_sm_percent", r.neighbour_sm_percent, "0 to 100");
  if (r.neighbour_memory_percent < 0 || r.neighbour_memory_percent > 100) {
    return bad("neighbour_memory_percent", r.neighbour_memory_percent, "0 to 100");
  }
  if (r.baseline_p99_us < 0 || r.p99_us < 0) return bad("p99_us", std::min(r.baseline_p99_us, r.p99_us), "0 or more");
  if (r.victim_task < 0 || r.neighbour_task < 0 || r.neighbour_run < 0) {
    return bad("task", std::min({r.victim_task, r.neighbour_task, r.neighbour_run}), "0 or more");
  }
  if (r.action != InterferenceAction::kHarden) {
    if (r.victim_group != -1) return bad("victim_group", r.victim_group, "-1 (only a hardening names one)");
    return Status::Ok();
  }
  // A hardening: the victim's group as it was submitted, and what it holds instead.
  const Job& v = jobs_[r.victim.value()];
  const std::vector<TaskGroup>& own = v.own_groups.empty() ? v.spec.groups : v.own_groups;
  if (r.victim_group < 0 || r.victim_group >= static_cast<int32_t>(own.size())) {
    return bad("victim_group", r.victim_group, "0 to " + std::to_string(static_cast<int64_t>(own.size()) - 1));
  }
  const TaskGroup& g = own[r.victim_group];
  const TaskGroup& h = r.hardened;
  if (!g.shared()) return bad("victim_group", r.victim_group, "a group holding a share of a GPU");
  if (h.count != g.count || h.cpu != g.cpu || h.memory != g.memory) {
    return bad("hardened.count", h.count, "the victim group's count, CPU and memory (" + std::to_string(g.count) + " tasks)");
  }
  if (h.share == ShareKind::kWhole) {
    if (h.fractional || h.gpu != kGpuUnit) return bad("hardened.gpu", h.gpu, std::to_string(kGpuUnit) + " (one whole GPU)");
  } else if (h.share == ShareKind::kMig) {
    const MigGeometry* geo = v.spec.gpu_resource < names_.size() && names_.Name(v.spec.gpu_resource).size() > 4
                                 ? FindMigGeometry(names_.Name(v.spec.gpu_resource).substr(4))
                                 : nullptr;
    if (!geo || h.mig_profile >= geo->profiles.size()) return bad("hardened.mig_profile", h.mig_profile, "a MIG profile of the job's GPU model");
    const int64_t charge = int64_t{geo->profiles[h.mig_profile].compute_slices} * kGpuUnit / geo->compute_slices;
    if (h.gpu != charge || h.fractional) return bad("hardened.gpu", h.gpu, std::to_string(charge) + " (the profile's charge)");
  } else {
    return bad("hardened.share", static_cast<int>(h.share), "a MIG instance or a whole GPU");
  }
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const InterferenceActed& e) {
  InterferenceResponse r = e.response;
  if (Status s = CheckInterference(r); !s.ok()) return s;
  // Only a task running on that GPU now can be acted on.
  const Job& n = jobs_[r.neighbour.value()];
  const bool there = n.holds_resources() && r.neighbour_task < static_cast<int32_t>(n.placement.size()) &&
                     n.placement[r.neighbour_task].node == r.node && (n.placement[r.neighbour_task].gpu_mask >> r.gpu & 1) &&
                     r.neighbour_run == static_cast<int32_t>(n.ended_runs.size());
  if (!there) {
    return FailedPrecondition("interference response: task " + std::to_string(r.neighbour_task) + " run " +
                              std::to_string(r.neighbour_run) + " of job " + std::to_string(r.neighbour.value()) +
                              " is not running on GPU " + std::to_string(r.gpu) + " of node '" + fleet_.node(r.node).name + "'");
  }
  if (r.action == InterferenceAction::kThrottle && n.placement[r.neighbour_task].share.kind != ShareKind::kMps) {
    return FailedPrecondition("interference response: a throttle needs an MPS share; task " +
                              std::to_string(r.neighbour_task) + " of job " + std::to_string(r.neighbour.value()) +
                              " has a " + ShareKindName(n.placement[r.neighbour_task].share.kind) + " share");
  }
  // The job a move or a hardening requeues: running there now, not already being stopped.
  const JobId moved = r.action == InterferenceAction::kHarden ? r.victim : r.neighbour;
  if (r.action != InterferenceAction::kThrottle) {
    const Job& m = jobs_[moved.value()];
    if (m.state != JobState::kRunning) {
      return FailedPrecondition("interference response: job '" + m.spec.name + "' is " + JobStateName(m.state) +
                                "; a " + InterferenceActionName(r.action) + " needs it running");
    }
  }
  if (r.action == InterferenceAction::kHarden) {
    const Job& v = jobs_[r.victim.value()];
    const int32_t task = r.victim_task;
    if (task >= static_cast<int32_t>(v.placement.size()) || v.placement[task].node != r.node || !(v.placement[task].gpu_mask >> r.gpu & 1)) {
      return FailedPrecondition("interference response: task " + std::to_string(task) + " of job '" + v.spec.name +
                                "' is not running on GPU " + std::to_string(r.gpu) + " of node '" + fleet_.node(r.node).name + "'");
    }
    if (!v.own_groups.empty() || HardeningOf(r.victim)) {
      return FailedPrecondition("interference response: job '" + v.spec.name + "' is already hardened");
    }
    int32_t first = 0;
    for (int32_t g = 0; g < r.victim_group; ++g) first += v.spec.groups[g].count;
    if (task < first || task >= first + v.spec.groups[r.victim_group].count) {
      return InvalidArgument("interference response: victim_group " + std::to_string(r.victim_group) + ": expected the group of task " +
                             std::to_string(task));
    }
  }
  r.since_ms = now;
  auto at = std::lower_bound(interference_.begin(), interference_.end(), r,
                             [](const InterferenceResponse& a, const InterferenceResponse& b) { return KeyOf(a) < KeyOf(b); });
  if (at != interference_.end() && KeyOf(*at) == KeyOf(r)) {
    if (r.action != InterferenceAction::kThrottle) {
      return FailedPrecondition("interference response: a " + std::string(InterferenceActionName(r.action)) +
                                " of that neighbour on that GPU is already in force");
    }
    *at = r;
  } else {
    interference_.insert(at, r);
  }
  if (r.action != InterferenceAction::kThrottle) {
    // Signalled like any preemption: it checkpoints within its grace, exits and is requeued.
    const Job& m = jobs_[moved.value()];
    Status s = Apply(now, JobPreemptionStarted{moved, PreemptKind::kInterference, moved, now + m.spec.grace_ms});
    if (!s.ok()) return s;  // unreachable: checked running above
  }
  return Status::Ok();
}

Status ClusterState::Apply(int64_t, const InterferenceCleared& e) {
  auto it = std::find_if(interference_.begin(), interference_.end(), [&](const InterferenceResponse& r) {
    return r.node == e.node && r.gpu == e.gpu && r.neighbour == e.neighbour && r.neighbour_task == e.neighbour_task &&
           r.action == e.action;
  });
  if (it == interference_.end()) {
    return NotFound("interference response: no " + std::string(InterferenceActionName(e.action)) + " for task " +
                    std::to_string(e.neighbour_task) + " of job " + std::to_string(e.neighbour.value()) + " on GPU " +
                    std::to_string(e.gpu) + " of node " + std::to_string(e.node.value()));
  }
  const JobId victim = it->victim;
  const bool hardening = it->action == InterferenceAction::kHarden;
  interference_.erase(it);
  // A lifted hardening: a victim waiting in the queue takes its own share again now; a running
  // one at its next requeue.
  if (hardening && jobs_[victim.value()].state == JobState::kPending) {
    Job& j = jobs_[victim.value()];
    ErasePending(j);  // its shape changes: so does its pending group
    ApplyHardening(j);
    AddPending(j);
  }
  return Status::Ok();
}

}  // namespace allot
