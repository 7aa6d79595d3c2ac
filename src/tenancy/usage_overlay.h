// Tenant usage as seen during one scheduling pass: the tree's usage plus what the pass has
// tentatively placed or simulated removing. Sparse: only touched tenants carry a delta, so a
// pass that places nothing costs nothing.
#pragma once

#include <vector>

#include "tenancy/quota_tree.h"

namespace allot {

class UsageOverlay {
 public:
  explicit UsageOverlay(const QuotaTree& tree) : tree_(tree) {}

  const QuotaTree& tree() const { return tree_; }
  int64_t Usage(TenantId t, ResourceId r) const {
    int32_t s = Slot(t);
    return tree_.tenant(t).usage[r] + (s < 0 ? 0 : delta_[s].usage[r]);
  }
  int64_t GuaranteedUsage(TenantId t, ResourceId r) const {
    int32_t s = Slot(t);
    return tree_.tenant(t).guaranteed_usage[r] + (s < 0 ? 0 : delta_[s].guaranteed[r]);
  }
  // Adds (sign +1) or removes (-1) a demand at `t` and every ancestor.
  void Add(TenantId t, const Demand& d, bool guaranteed, int sign);

 private:
  struct Delta {
    Resources usage;
    Resources guaranteed;
  };
  int32_t Slot(TenantId t) const {
    return t.value() < slot_.size() ? slot_[t.value()] : -1;
  }

  const QuotaTree& tree_;
  std::vector<int32_t> slot_;
  std::vector<Delta> delta_;
};

}  // namespace allot
