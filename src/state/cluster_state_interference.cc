// ClusterState::Apply for the noisy-neighbour responses (state/interference.h). The detector
// (scheduler/interference.h) decides; here only what the state can check is refused.
#include <algorithm>
#include <tuple>

#include "state/cluster_state.h"

namespace allot {
namespace {

auto KeyOf(const InterferenceResponse& r) {
  return std::make_tuple(r.node.value(), r.gpu, r.neighbour.value(), r.neighbour_task);
}

}  // namespace

const char* InterferenceActionName(InterferenceAction a) {
  switch (a) {
    case InterferenceAction::kThrottle: return "throttle";
  }
  return "unknown";
}

std::string InterferenceResponse::Describe() const {
  auto ms = [](int64_t us) {
    std::string s = std::to_string(us / 1000);
    if (us % 1000 != 0) {
      std::string frac = std::to_string(1000 + us % 1000).substr(1);
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      s += "." + frac;
    }
    return s + " ms";
  };
  return std::string(InterferenceActionName(action)) + " of task " + std::to_string(neighbour_task) + " of job " +
         std::to_string(neighbour.value()) + " (the neighbour) to " + std::to_string(percent) +
         "% MPS active threads (its share: " + std::to_string(neighbour_percent) + "%) on GPU " + std::to_string(gpu) +
         ": task " + std::to_string(victim_task) + " of job " + std::to_string(victim.value()) + " (the victim) had p99 " +
         ms(p99_us) + " against its baseline " + ms(baseline_p99_us) + " while the neighbour used " +
         std::to_string(neighbour_sm_percent) + "% SM and " + std::to_string(neighbour_memory_percent) +
         "% memory bandwidth";
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
  if (r.action != InterferenceAction::kThrottle) return bad("action", static_cast<int>(r.action), "0 (throttle)");
  if (r.percent < 1 || r.percent > 100) return bad("percent", r.percent, "1 to 100");
  if (r.neighbour_percent < 0 || r.neighbour_percent > 100) return bad("neighbour_percent", r.neighbour_percent, "0 to 100");
  if (r.neighbour_sm_percent < 0 || r.neighbour_sm_percent > 100) return bad("neighbour_sm_percent", r.neighbour_sm_percent, "0 to 100");
  if (r.neighbour_memory_percent < 0 || r.neighbour_memory_percent > 100) {
    return bad("neighbour_memory_percent", r.neighbour_memory_percent, "0 to 100");
  }
  if (r.baseline_p99_us < 0 || r.p99_us < 0) return bad("p99_us", std::min(r.baseline_p99_us, r.p99_us), "0 or more");
  if (r.victim_task < 0 || r.neighbour_task < 0 || r.neighbour_run < 0) {
    return bad("task", std::min({r.victim_task, r.neighbour_task, r.neighbour_run}), "0 or more");
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
  r.since_ms = now;
  auto at = std::lower_bound(interference_.begin(), interference_.end(), r,
                             [](const InterferenceResponse& a, const InterferenceResponse& b) { return KeyOf(a) < KeyOf(b); });
  if (at != interference_.end() && KeyOf(*at) == KeyOf(r)) {
    *at = r;
  } else {
    interference_.insert(at, r);
  }
  return Status::Ok();
}

Status ClusterState::Apply(int64_t, const InterferenceCleared& e) {
  auto it = std::find_if(interference_.begin(), interference_.end(), [&](const InterferenceResponse& r) {
    return r.node == e.node && r.gpu == e.gpu && r.neighbour == e.neighbour && r.neighbour_task == e.neighbour_task;
  });
  if (it == interference_.end()) {
    return NotFound("interference response: none for task " + std::to_string(e.neighbour_task) + " of job " +
                    std::to_string(e.neighbour.value()) + " on GPU " + std::to_string(e.gpu) + " of node " +
                    std::to_string(e.node.value()));
  }
  interference_.erase(it);
  return Status::Ok();
}

}  // namespace allot
