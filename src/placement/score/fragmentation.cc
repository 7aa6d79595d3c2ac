#include "placement/score/fragmentation.h"

#include <cmath>
#include <utility>

namespace allot {

double Fragmentation(const ShareNode& n, const Workload& workload) {
  double q1 = 0, q2 = 0, q4 = 0, xl = 0, xr = 0, no_access = 0;
  double idle = n.IdleMilli();
  for (const TypicalPod& t : workload) {
    const PodShape& k = t.shape;
    if (k.milli == 0) {
      (n.cpu_left >= k.cpu ? xl : xr) += t.p * idle;
      continue;
    }
    if (k.models != 0 && !(k.models >> n.model & 1)) {
      no_access += t.p * idle;
      continue;
    }
    bool fits_gpu = n.CountAtLeast(k.milli) >= k.gpus;
    bool fits_cpu = n.cpu_left >= k.cpu;
    if (fits_gpu && fits_cpu) {
      int32_t small = 0;  // idle share on GPUs too small for this pod
      for (int i = 0; i < n.gpus; ++i) {
        if (n.free[i] < k.milli) small += n.free[i];
      }
      q2 += t.p * small;
    } else if (!fits_gpu && !fits_cpu) {
      q1 += t.p * idle;
    } else if (!fits_gpu) {
      q2 += t.p * idle;
    } else {
      q4 += t.p * idle;
    }
  }
  return q1 + q2 + q4 + xl + xr + no_access;
}

ShareNode After(ShareNode n, const PodShape& p, uint64_t gpu_mask) {
  n.cpu_left -= p.cpu;
  if (p.wants_gpu()) {
    for (int i = 0; i < n.gpus; ++i) {
      if (gpu_mask >> i & 1) n.free[i] -= p.milli;
    }
  }
  return n;
}

int64_t FragmentationScorer::ScoreDelta(double before, const ShareNode& after) const {
  double delta = before - Frag(after);
  return static_cast<int64_t>(100 * (1 / (1 + std::exp(-delta / 1000))));
}

std::pair<int, int64_t> FragmentationScorer::BestSharedGpu(const ShareNode& n, const PodShape& p) const {
  double before = Frag(n);
  int64_t best = INT64_MIN;
  int best_gpu = -1;
  for (int i = 0; i < n.gpus; ++i) {
    if (n.free[i] < p.milli) continue;
    if (skip_equal_gpus_) {
      bool seen = false;
      for (int j = 0; j < i && !seen; ++j) seen = n.free[j] == n.free[i];
      if (seen) continue;
    }
    int64_t s = ScoreDelta(before, After(n, p, uint64_t{1} << i));
    if (s > best) {
      best = s;
      best_gpu = i;
    }
  }
  return {best_gpu, best};
}

int64_t FragmentationScorer::Score(const ShareNode& n, const PodShape& p) const {
  if (p.shared()) return BestSharedGpu(n, p).second;
  return ScoreDelta(Frag(n), After(n, p, BestFitGpus(n, p)));
}

uint64_t FragmentationScorer::ChooseGpus(const ShareNode& n, const PodShape& p, Rng&) const {
  if (!p.shared()) return BestFitGpus(n, p);
  int gpu = BestSharedGpu(n, p).first;
  return gpu < 0 ? 0 : uint64_t{1} << gpu;
}

}  // namespace allot
