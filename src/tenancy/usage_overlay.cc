#include "tenancy/usage_overlay.h"

namespace allot {

void UsageOverlay::Add(TenantId t, const Demand& d, bool guaranteed, int sign) {
  if (slot_.empty()) slot_.assign(tree_.size(), -1);
  for (TenantId a = t; a.valid(); a = tree_.tenant(a).parent) {
    int32_t& s = slot_[a.value()];
    if (s < 0) {
      s = static_cast<int32_t>(delta_.size());
      delta_.emplace_back();
    }
    AddDemand(delta_[s].usage, d, sign);
    if (guaranteed) AddDemand(delta_[s].guaranteed, d, sign);
  }
}

}  // namespace allot
