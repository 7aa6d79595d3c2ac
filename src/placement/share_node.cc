#include "placement/share_node.h"

#include "core/status.h"

namespace allot {

void Reserve(ShareNode& n, const PodShape& p, uint64_t gpu_mask) {
  n.cpu_left -= p.cpu;
  n.memory_left -= p.memory;
  if (!p.wants_gpu()) return;
  for (int i = 0; i < n.gpus; ++i) {
    if (!(gpu_mask >> i & 1)) continue;
    ALLOT_CHECK(n.free[i] >= p.milli);
    n.free[i] -= p.milli;
  }
  n.tags |= p.tag();
}

uint64_t BestFitGpus(const ShareNode& n, const PodShape& p) {
  if (!p.wants_gpu()) return 0;
  uint64_t chosen = 0;
  for (int k = 0; k < p.gpus; ++k) {
    int best = -1;
    for (int i = 0; i < n.gpus; ++i) {
      if ((chosen >> i & 1) || n.free[i] < p.milli) continue;
      if (best < 0 || n.free[i] < n.free[best]) best = i;
    }
    if (best < 0) return 0;
    chosen |= uint64_t{1} << best;
  }
  return chosen;
}

}  // namespace allot
