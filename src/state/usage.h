// Resource-time per tenant over a window of time, from the jobs' runs: what `/v1/usage` and
// `allot usage` show, and the raw material metering prices (issue 6).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/resources.h"
#include "state/cluster_state.h"

namespace allot {

// Amount × milliseconds, exact: a month of a 50,000-GPU fleet is ~3e20 GPU-unit·ms, past int64.
using ResourceTime = std::array<__int128, kMaxResources>;

struct WindowUsage {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  // By tenant id, over the tenant's whole subtree (deleted tenants' usage stays in their
  // ancestors'): resource amount × ms held within the window, and the jobs that held any.
  std::vector<ResourceTime> by_tenant;
  std::vector<int64_t> jobs;
};

// Usage in [from_ms, to_ms); runs still open count up to now_ms. Requires from_ms < to_ms.
WindowUsage UsageOver(const ClusterState& state, int64_t from_ms, int64_t to_ms, int64_t now_ms);

}  // namespace allot
