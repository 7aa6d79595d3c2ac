#include "policy/drf.h"

namespace allot {

Share WeightedDominantShare(const UsageOverlay& usage, TenantId t, const Resources& capacity, int resource_count) {
  int64_t weight = usage.tree().tenant(t).weight;
  Share best{0, 1};
  for (int i = 0; i < resource_count; ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    if (capacity[r] <= 0) continue;
    // usage / capacity / (weight / 1000)  =  usage × 1000 / (capacity × weight)
    Share s{usage.Usage(t, r) * kMilli, capacity[r] * weight};
    if (s > best) best = s;
  }
  return best;
}

}  // namespace allot
