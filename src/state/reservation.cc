#include "state/reservation.h"

#include <algorithm>

#include "core/names.h"

namespace allot {

CapacityAsk ReservationSpec::Ask() const {
  CapacityAsk ask{gpu_resource, gpus, nodes, std::nullopt, require};
  if (topology != Topology::kNone) ask.within = DomainKindOf(topology);
  return ask;
}

size_t ReservationSpec::CurrentWindow(int64_t now) const {
  auto it = std::upper_bound(windows.begin(), windows.end(), now, [](int64_t t, const Window& w) { return t < w.end_ms; });
  return static_cast<size_t>(it - windows.begin());
}

const char* AcceptanceStateName(AcceptanceState s) {
  switch (s) {
    case AcceptanceState::kPending: return "pending";
    case AcceptanceState::kPassed: return "passed";
    case AcceptanceState::kFailed: return "failed";
    case AcceptanceState::kReplaced: return "replaced";
  }
  return "unknown";
}

const AcceptanceRecord* CapacityReservation::AcceptanceOf(size_t window, NodeId node) const {
  for (auto it = acceptance.rbegin(); it != acceptance.rend(); ++it) {
    if (static_cast<size_t>(it->window) == window && it->node == node) return &*it;
  }
  return nullptr;
}

__int128 CapacityReservation::BookedUnitMs(int64_t from, int64_t to) const {
  if (state == ReservationState::kCancelled) to = std::min(to, cancelled_ms);
  __int128 total = 0;
  for (size_t w = 0; w < spec.windows.size(); ++w) {
    const int64_t a = std::max(spec.windows[w].start_ms, from), b = std::min(spec.windows[w].end_ms, to);
    if (a >= b) continue;
    int64_t gpus = 0;
    for (const NodeHold& h : holds[w]) gpus += h.gpus;
    total += static_cast<__int128>(gpus) * kGpuUnit * (b - a);
    // Shrunk while open: what it held before each shrink is billed up to that shrink.
    for (const ReservationShrink& s : shrinks) {
      if (static_cast<size_t>(s.first_window) != w || s.gpus_before <= s.gpus_after) continue;
      const int64_t until = std::min(b, s.at_ms);
      if (until > a) total += static_cast<__int128>(s.gpus_before - s.gpus_after) * kGpuUnit * (until - a);
    }
  }
  return total;
}

int32_t CapacityReservation::CountOf(size_t window) const {
  int32_t count = spec.nodes > 0 ? spec.nodes : spec.gpus;
  for (auto s = shrinks.rbegin(); s != shrinks.rend(); ++s) {
    if (window < static_cast<size_t>(s->first_window)) count = s->count_before;
  }
  return count;
}

Status ReservationSpec::Check() const {
  if (Status s = CheckName("reservation name", name); !s.ok()) return s;
  const std::string where = "reservation '" + name + "' ";
  if (!tenant.valid()) return InvalidArgument(where + "tenant: none; expected a tenant");
  if (gpu_resource == kCpu || gpu_resource == kMemory) return InvalidArgument(where + "model: none; expected a GPU model");
  if ((gpus > 0) == (nodes > 0) || gpus < 0 || nodes < 0) {
    return InvalidArgument(where + "capacity: " + std::to_string(gpus) + " GPUs and " + std::to_string(nodes) +
                           " nodes; expected either GPUs or whole nodes, at least one");
  }
  if (topology > Topology::kZone) return InvalidArgument(where + "topology: out of range");
  if (require.size() > kMaxRequirements) {
    return InvalidArgument(where + "require: " + std::to_string(require.size()) + " conditions; expected at most " +
                           std::to_string(kMaxRequirements));
  }
  if (gpus > 100'000 || nodes > 10'000) {
    return InvalidArgument(where + "capacity: past 100000 GPUs or 10000 nodes");
  }
  if (windows.empty() || windows.size() > kMaxReservationWindows) {
    return InvalidArgument(where + "windows: " + std::to_string(windows.size()) + "; expected 1 to " +
                           std::to_string(kMaxReservationWindows));
  }
  for (size_t i = 0; i < windows.size(); ++i) {
    const Window& w = windows[i];
    const std::string at = where + "windows[" + std::to_string(i) + "]: ";
    if (w.start_ms < 0 || w.end_ms <= w.start_ms || w.end_ms > kMaxReservationAheadMs * 20) {
      return InvalidArgument(at + "[" + std::to_string(w.start_ms) + ", " + std::to_string(w.end_ms) +
                             ") ms; expected a start from 0 and a later end");
    }
    if (i > 0 && w.start_ms < windows[i - 1].end_ms) {
      return InvalidArgument(at + "starts before the window before it ends; expected windows in time order, apart");
    }
  }
  if (drain_before_ms < -1 || drain_before_ms > int64_t{30} * 24 * 3600 * 1000) {
    return InvalidArgument(where + "drain_before: " + std::to_string(drain_before_ms) + " ms; expected 0 to 30d");
  }
  if (orchestrator > Orchestrator::kHook) return InvalidArgument(where + "orchestrator: out of range");
  if (orchestrator != Orchestrator::kNone && nodes == 0) {
    return InvalidArgument(where + "orchestrator: '" + OrchestratorName(orchestrator) +
                           "' on a booking by GPUs; expected nodes: N (whole nodes) or orchestrator none");
  }
  return Status::Ok();
}

const char* OrchestratorName(Orchestrator o) {
  switch (o) {
    case Orchestrator::kNone: return "none";
    case Orchestrator::kSlurm: return "slurm";
    case Orchestrator::kHook: return "hook";
  }
  return "?";
}

std::optional<Orchestrator> ParseOrchestrator(std::string_view name) {
  if (name == "none") return Orchestrator::kNone;
  if (name == "slurm") return Orchestrator::kSlurm;
  if (name == "hook") return Orchestrator::kHook;
  return std::nullopt;
}

const char* ReservationStateName(ReservationState s) {
  return s == ReservationState::kConfirmed ? "confirmed" : "cancelled";
}

}  // namespace allot
