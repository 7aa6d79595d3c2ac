// Arrays and pipelines read from the state (docs/arrays.md): whether a job's dependencies are
// met, can never be met, or are still to come; and an array's progress. Pure: the pass and the
// API read them, the pass turns "never" into a JobFailed.
#pragma once

#include <string>

#include "state/cluster_state.h"

namespace allot {

enum class AfterStatus : uint8_t { kMet, kWaiting, kNever };

struct AfterCheck {
  AfterStatus status = AfterStatus::kMet;
  // kWaiting: "waiting for X to succeed"; kNever: "dependency X ended failed (…); expected
  // succeeded". Names the first dependency not met, in the order the job lists them.
  std::string why;
};

// The job's dependencies against the state now. A dependency on an array is on all its
// elements: succeeded once every element succeeded, finished once every element ended, failed
// once every element ended and one did not succeed.
AfterCheck CheckAfter(const ClusterState& state, const Job& job);

// An array's elements by state. done: succeeded; failed: failed, cancelled or rejected;
// running: holding resources; pending: waiting (retries: failed runs retried so far).
struct ArrayProgress {
  int32_t count = 0;
  int32_t parallel = 0;
  int32_t done = 0;
  int32_t running = 0;
  int32_t failed = 0;
  int32_t pending = 0;
  int32_t retries = 0;
  bool frames = false;
  // "succeeded", "failed" (all ended, some not successfully), "running" or "pending".
  const char* state() const;
};
ArrayProgress ProgressOf(const ClusterState& state, const std::vector<JobId>& elements);

}  // namespace allot
