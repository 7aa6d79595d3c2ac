// The autoscaler: how many replicas a service wants for the load its replicas report
// (docs/services.md), after Knative's KPA (../shared/reference/SERVING.md):
//
//   stable  = the mean total load over the stable window (60 s), panic = over the panic window (6 s)
//   want    = ceil(stable / target per replica)
//   panic   when ceil(panic / target) ≥ panic_threshold (2×) × the replicas running: scale up to
//           ceil(panic / target) at once and scale down not at all, until a stable window passes
//           without that
//   down    slowly: never below the highest count wanted over the last scale_down_delay (60 s)
//
// clamped to [min_replicas, max_replicas]. Pure: samples and time come in; allotd feeds it the
// agents' heartbeats, the simulator a scenario's scripted load, and both journal its decision as
// ServiceScaled.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "state/service.h"

namespace allot {

struct ScaleDecision {
  int32_t desired = 0;
  bool panic = false;
  std::string why;  // "load 41.0 over 6s is 2.1× what 2 replicas take at target 10: panic, 5 replicas"
};

class Autoscaler {
 public:
  // The service's total load (thousandths: the sum of its replicas' newest reports) at `now`.
  // Samples older than the stable window are dropped.
  void Observe(int64_t now, int64_t load_milli, int64_t stable_window_ms);
  // The replicas wanted at `now`, given the count wanted so far and how many run. Updates the
  // panic state and the recent recommendations (the scale-down delay).
  ScaleDecision Decide(const ServiceSpec& spec, int32_t current, int32_t running, int64_t now);
  bool panicking() const { return panic_since_ms_ >= 0; }
  size_t samples() const { return samples_.size(); }

 private:
  // The mean of the samples in (now - window, now], thousandths; -1 when there are none.
  int64_t Mean(int64_t now, int64_t window_ms) const;

  std::deque<std::pair<int64_t, int64_t>> samples_;  // (time, load), oldest first
  std::deque<std::pair<int64_t, int32_t>> wanted_;   // (time, recommendation), oldest first
  int64_t panic_since_ms_ = -1;                      // -1: not in panic mode
  int64_t last_panic_ms_ = -1;                       // the last time the panic condition held
};

}  // namespace allot
