#include "daemon/history.h"

#include <algorithm>
#include <bit>
#include <map>

namespace allot {

HistorySample SampleHistory(const ClusterState& st, int64_t now_ms) {
  HistorySample s;
  s.time_ms = now_ms;
  std::map<std::string, HistorySample::Model> models;
  for (const Node& n : st.fleet().nodes()) {
    if (n.gpu_count == 0) continue;
    std::string model = st.resource_names().Name(n.gpu_resource).substr(4);  // "gpu/H100-80GB"
    HistorySample::Model& m = models[model];
    m.model = model;
    const int32_t free = std::popcount(n.free.gpu_mask);
    m.allocated += n.gpu_count - free;
    if (n.condition == NodeCondition::kReady) m.idle += free;
  }
  for (auto& [name, m] : models) s.fleet.push_back(std::move(m));

  const QuotaTree& tree = st.tenants();
  std::vector<int32_t> pending(tree.tenants().size(), 0);
  std::vector<int64_t> oldest(tree.tenants().size(), 0);
  for (JobId id : st.pending()) {
    const Job& j = st.job(id);
    const int64_t wait = std::max<int64_t>(0, now_ms - j.queued_ms);
    for (TenantId t = j.spec.tenant; t.valid(); t = tree.tenant(t).parent) {  // the job's tenant and its ancestors
      pending[t.value()] += 1;
      oldest[t.value()] = std::max(oldest[t.value()], wait);
    }
  }
  for (const Tenant& t : tree.tenants()) {
    if (t.id == tree.root() || t.removed) continue;
    int64_t units = 0;
    for (int i = kFirstGpu; i < st.resource_names().size(); ++i) units += t.usage[static_cast<ResourceId>(i)];
    s.tenants.push_back({t.id, t.path, units, pending[t.id.value()], oldest[t.id.value()]});
  }
  return s;
}

History::History(int64_t interval_ms)
    : interval_ms_(interval_ms),
      capacity_(static_cast<size_t>(std::clamp<int64_t>(kSpanMs / std::max<int64_t>(interval_ms, 1), 1, kMaxSamples))) {}

void History::Add(HistorySample s) {
  std::lock_guard lock(mu_);
  samples_.push_back(std::move(s));
  while (samples_.size() > capacity_) samples_.pop_front();
}

std::vector<HistorySample> History::Since(int64_t since_ms) const {
  std::lock_guard lock(mu_);
  auto first = std::find_if(samples_.begin(), samples_.end(), [&](const HistorySample& s) { return s.time_ms >= since_ms; });
  return {first, samples_.end()};
}

}  // namespace allot
