// GPU sharing as the fractional placement policies see it: a node's CPU and memory left and each
// GPU's free share in milli-GPU (1000 = a whole free GPU), and a pod (task) asking for `gpus`
// GPUs with `milli` of each. A request below 1000 milli is a shared GPU and asks for one GPU.
#pragma once

#include <array>
#include <cstdint>

namespace allot {

inline constexpr int kMaxShareGpus = 16;
inline constexpr int32_t kWholeGpuMilli = 1000;

struct ShareNode {
  uint8_t model = 0;          // index into the caller's model table
  int gpus = 0;               // GPUs on the node (≤ kMaxShareGpus)
  int64_t cpu_left = 0;       // millicores
  int64_t memory_left = 0;    // MiB
  std::array<int32_t, kMaxShareGpus> free{};  // per GPU, in device-index order
  uint64_t tags = 0;          // kinds of GPU pod placed here: bit 0 shared, bit g whole g-GPU

  int32_t IdleMilli() const {
    int32_t r = 0;
    for (int i = 0; i < gpus; ++i) r += free[i];
    return r;
  }
  int FullyFree() const {
    int n = 0;
    for (int i = 0; i < gpus; ++i) n += free[i] == kWholeGpuMilli;
    return n;
  }
  int CountAtLeast(int32_t m) const {
    int n = 0;
    for (int i = 0; i < gpus; ++i) n += free[i] >= m;
    return n;
  }
};

struct PodShape {
  int64_t cpu = 0;            // millicores
  int64_t memory = 0;         // MiB
  int32_t milli = 0;          // per GPU, 0..1000; 0 = no GPU
  int gpus = 0;               // GPUs asked for
  uint64_t models = 0;        // allowed model indexes as bits; 0 = any

  bool wants_gpu() const { return milli > 0 && gpus > 0; }
  bool shared() const { return gpus == 1 && milli < kWholeGpuMilli; }
  int64_t total_milli() const { return int64_t{milli} * gpus; }
  // Bit of ShareNode::tags this pod sets.
  uint64_t tag() const { return shared() ? 1 : (uint64_t{1} << (gpus < 63 ? gpus : 63)); }
};

// Feasibility: CPU and memory fit; a GPU pod needs a node of an allowed model with `gpus` GPUs
// each holding `milli` free.
inline bool Fits(const ShareNode& n, const PodShape& p) {
  if (p.cpu > n.cpu_left || p.memory > n.memory_left) return false;
  if (!p.wants_gpu()) return true;
  if (n.gpus == 0) return false;
  if (p.models != 0 && !(p.models >> n.model & 1)) return false;
  return n.CountAtLeast(p.milli) >= p.gpus;
}

// Takes the pod's share from the GPUs in `gpu_mask` (bit i = GPU i) and its CPU and memory.
// REQUIRES: Fits(n, p) and every GPU in the mask has `p.milli` free.
void Reserve(ShareNode& n, const PodShape& p, uint64_t gpu_mask);

// Best-fit GPU choice: the `gpus` GPUs with the least free that still hold `milli`, ties to the
// lower index (for a whole-GPU pod, the lowest-index fully free GPUs). 0 for a CPU-only pod.
uint64_t BestFitGpus(const ShareNode& n, const PodShape& p);

}  // namespace allot
