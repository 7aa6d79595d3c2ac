// A gate pending jobs pass before they may start, opened once per scheduling pass over the
// state it plans on. Budgets are one (metering/budget_gate.h); the pass knows only this
// interface, so the simulator and the daemon hold the same jobs when given the same gate.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "state/cluster_state.h"

namespace allot {

class PassGate {
 public:
  virtual ~PassGate() = default;
  // Why `job` must wait ("" when it may go on), were it admitted as `admission`. Called in the
  // pass's order; deterministic for the same state, now and calls.
  virtual std::string Hold(const Job& job, AdmissionClass admission) = 0;
  // `job` was placed in this pass: later Holds count it.
  virtual void Placed(const Job& job, AdmissionClass admission) = 0;
  // Events to journal with the plan (budget warnings), in a deterministic order.
  virtual std::vector<EventBody> Notices() = 0;
};

class PassGateFactory {
 public:
  virtual ~PassGateFactory() = default;
  // nullptr when nothing is gated (no budgets): the pass then costs nothing more.
  virtual std::unique_ptr<PassGate> Open(const ClusterState& state, int64_t now_ms) const = 0;
};

}  // namespace allot
