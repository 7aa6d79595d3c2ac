// Weighted dominant shares, compared exactly. A share is a fraction usage / (capacity × weight);
// fractions are compared by cross-multiplying in 128 bits, never as doubles.
#pragma once

#include <compare>
#include <cstdint>

#include "core/resources.h"
#include "tenancy/usage_overlay.h"

namespace allot {

struct Share {
  int64_t num = 0;  // usage (resource units) × 1000
  int64_t den = 1;  // capacity × milli-weight

  std::strong_ordering operator<=>(const Share& o) const {
    __int128 l = static_cast<__int128>(num) * o.den;
    __int128 r = static_cast<__int128>(o.num) * den;
    return l <=> r;
  }
  bool operator==(const Share& o) const { return (*this <=> o) == std::strong_ordering::equal; }
  double ToDouble() const { return static_cast<double>(num) / static_cast<double>(den); }
};

// max over resources r with capacity[r] > 0 of usage_t[r] / capacity[r], divided by t's weight.
Share WeightedDominantShare(const UsageOverlay& usage, TenantId t, const Resources& capacity, int resource_count);

}  // namespace allot
