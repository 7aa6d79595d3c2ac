// Whole GPUs counted per rack and zone, as ClusterState keeps them (released, burstable and each
// tenant's running GPUs by priority). Internal to state/cluster_state*.cc.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "state/cluster_state.h"

namespace allot::domain_gpus {

// Adds `gpus` to node `n`'s rack and zone in by_domain [rack, zone] (grown as needed).
inline void Add(std::vector<int64_t> (&by_domain)[2], const Node& n, int64_t gpus) {
  for (int k = 0; k < 2; ++k) {
    std::vector<int64_t>& v = by_domain[k];
    const uint32_t d = k == 0 ? n.rack : n.zone;
    if (v.size() <= d) v.resize(d + 1, 0);
    v[d] += gpus;
  }
}

// Adds `sign` × the whole GPUs of each of job `j`'s tasks (on a node of the fleet) to
// `levels` at (the job's priority, the node's GPU model), keeping them in that order.
inline void AddToLevels(std::vector<ClusterState::RunningGpus>& levels, const Fleet& fleet, const Job& j, int sign) {
  for (const TaskPlacement& p : j.placement) {
    const int gpus = std::popcount(p.gpu_mask);
    if (gpus == 0 || !p.node.valid() || p.node.value() >= fleet.size()) continue;
    const Node& n = fleet.node(p.node);
    auto at = std::lower_bound(levels.begin(), levels.end(), std::pair{j.spec.priority, n.gpu_resource},
                               [](const ClusterState::RunningGpus& l, const std::pair<int32_t, ResourceId>& k) {
                                 return std::pair{l.priority, l.res} < k;
                               });
    if (at == levels.end() || at->priority != j.spec.priority || at->res != n.gpu_resource) {
      at = levels.insert(at, ClusterState::RunningGpus{j.spec.priority, n.gpu_resource, {}});
    }
    Add(at->by_domain, n, int64_t{sign} * gpus);
  }
}

}  // namespace allot::domain_gpus
