#include "state/usage.h"

#include <algorithm>

namespace allot {

WindowUsage UsageOver(const ClusterState& state, int64_t from_ms, int64_t to_ms, int64_t now_ms) {
  const QuotaTree& tree = state.tenants();
  WindowUsage out;
  out.from_ms = from_ms;
  out.to_ms = to_ms;
  out.by_tenant.assign(tree.size(), ResourceTime{});
  out.jobs.assign(tree.size(), 0);
  // Each job to its own tenant, then up the parent links (ids say nothing of order after a move).
  std::vector<ResourceTime> own(tree.size(), ResourceTime{});
  std::vector<int64_t> own_jobs(tree.size(), 0);
  for (const Job& j : state.jobs()) {
    if (j.last_started_ms < 0) continue;  // never ran
    int64_t held_ms = 0;
    j.ForEachRun(now_ms, [&](int64_t start, int64_t end) {
      held_ms += std::max<int64_t>(0, std::min(end, to_ms) - std::max(start, from_ms));
    });
    if (held_ms == 0) continue;
    Resources amounts;
    AddDemand(amounts, j.demand);
    ResourceTime& t = own[j.spec.tenant.value()];
    for (int r = 0; r < kMaxResources; ++r) t[r] += static_cast<__int128>(amounts[r]) * held_ms;
    ++own_jobs[j.spec.tenant.value()];
  }
  for (const Tenant& leaf : tree.tenants()) {
    const ResourceTime& t = own[leaf.id.value()];
    if (own_jobs[leaf.id.value()] == 0) continue;
    for (TenantId a = leaf.id; a.valid(); a = tree.tenant(a).parent) {
      for (int r = 0; r < kMaxResources; ++r) out.by_tenant[a.value()][r] += t[r];
      out.jobs[a.value()] += own_jobs[leaf.id.value()];
    }
  }
  return out;
}

}  // namespace allot
