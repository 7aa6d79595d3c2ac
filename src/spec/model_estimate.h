// The GPU memory a model's task needs (docs/sizing.md): pure integer arithmetic on the model as
// written, the same on every machine.
//
//   weights   = parameters × bits per weight / 8
//   KV cache  = 2 × layers × hidden × context × batch × 2 bytes (1 byte at fp8), when layers
//               and hidden are known; in fine-tuning it stands for the activations kept per token
//   training  = finetune: parameters × (bytes per weight + 12): gradients at the weights'
//               precision, an fp32 master copy and Adam's two fp32 moments;
//               lora: adapters of 1% of the parameters × 16 bytes (weights, gradients, Adam)
//   overhead  = 20% of the above (activations, fragmentation) + 512 MiB (CUDA context)
//
// Each term is rounded up to a MiB on its own, so the total is their sum as shown.
#pragma once

#include <cstdint>

#include "state/sizing.h"

namespace allot {

inline constexpr int64_t kSizingContextMiB = 512;  // CUDA context and runtime
inline constexpr int64_t kSizingOverheadPercent = 20;
inline constexpr int64_t kLoraAdapterPercent = 1;
// A term past this is clamped (the readers' bounds let a KV cache reach 10^20 bytes); a total
// past kMaxSizingEstimateMiB is refused where the model is read.
inline constexpr int64_t kMaxSizingEstimateMiB = int64_t{1} << 30;  // 1 PiB

MemoryEstimate EstimateMemory(const ModelWorkload& m);

}  // namespace allot
