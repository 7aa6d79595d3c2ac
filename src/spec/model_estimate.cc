#include "spec/model_estimate.h"

namespace allot {
namespace {

using U128 = unsigned __int128;
constexpr U128 kMiB = 1024 * 1024;

// Bytes → MiB, rounded up and clamped to kMaxSizingEstimateMiB.
int64_t CeilMiB(U128 bytes) {
  U128 mib = (bytes + kMiB - 1) / kMiB;
  return mib > static_cast<U128>(kMaxSizingEstimateMiB) ? kMaxSizingEstimateMiB : static_cast<int64_t>(mib);
}

}  // namespace

MemoryEstimate EstimateMemory(const ModelWorkload& m) {
  MemoryEstimate e;
  const U128 params = static_cast<U128>(m.parameters);
  const int bits = ModelPrecisionBits(m.precision);
  // Bits first, then bytes: an int4 weight is half a byte.
  e.weights_mib = CeilMiB((params * bits + 7) / 8);
  if (m.layers > 0 && m.hidden > 0) {
    // Weight-only quantisation (int8, int4) keeps the cache in 16 bits; fp8 serving keeps it in 8.
    const U128 kv_bytes = m.precision == ModelPrecision::kFp8 ? 1 : 2;
    e.kv_cache_mib = CeilMiB(U128{2} * static_cast<U128>(m.layers) * static_cast<U128>(m.hidden) *
                             static_cast<U128>(m.context) * static_cast<U128>(m.batch) * kv_bytes);
  }
  switch (m.mode) {
    case ModelMode::kInference: break;
    case ModelMode::kFinetune: e.training_mib = CeilMiB(params * (static_cast<U128>(bits / 8) + 12)); break;
    case ModelMode::kLora: e.training_mib = CeilMiB((params * kLoraAdapterPercent + 99) / 100 * 16); break;
  }
  const int64_t sum = e.weights_mib + e.kv_cache_mib + e.training_mib;
  e.overhead_mib = (sum * kSizingOverheadPercent + 99) / 100 + kSizingContextMiB;
  return e;
}

}  // namespace allot
