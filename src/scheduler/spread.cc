// Spread: the replicas of one service keep apart — no two on one node (rack, zone) while a
// placement that keeps them apart exists; otherwise they are placed as any job (docs/services.md).
#include "scheduler/pass.h"

namespace allot {

std::optional<std::vector<TaskPlacement>> Pass::PlaceSpread(const Job& job) {
  ServiceId sid = state_.ServiceOf(job.id);
  if (!sid.valid()) return std::nullopt;
  const Service& svc = state_.service(sid);
  if (svc.spec.spread == Spread::kNone) return std::nullopt;
  const Fleet& fleet = state_.fleet();
  // 1. Where the siblings are: running or exiting replicas, and those placed earlier in this pass.
  std::vector<NodeId> used;
  for (const ServiceReplica& r : svc.replicas) {
    const Job& j = state_.job(r.job);
    if (r.job == job.id || !j.holds_resources()) continue;
    for (const TaskPlacement& t : j.placement) used.push_back(t.node);
  }
  if (auto it = spread_placed_.find(sid.value()); it != spread_placed_.end()) used.insert(used.end(), it->second.begin(), it->second.end());
  if (used.empty()) return std::nullopt;
  // 2. The domains they occupy, then every node in those domains.
  Bitset excluded;
  excluded.Resize(fleet.size());
  if (svc.spec.spread == Spread::kNode) {
    for (NodeId n : used) excluded.Set(n.value());
  } else {
    DomainKind kind = svc.spec.spread == Spread::kRack ? DomainKind::kRack : DomainKind::kZone;
    std::vector<uint8_t> taken;
    for (NodeId n : used) {
      uint32_t d = fleet.DomainOf(fleet.node(n), kind);
      if (taken.size() <= d) taken.resize(d + 1);
      taken[d] = 1;
    }
    for (uint32_t i = 0; i < fleet.size(); ++i) {
      uint32_t d = fleet.DomainOf(fleet.node(NodeId(i)), kind);
      if (d < taken.size() && taken[d]) excluded.Set(i);
    }
  }
  // 3. The usual placement over the nodes left.
  view_.PushExcluded(&excluded);
  auto tasks = PlaceGang(view_, job.spec);
  view_.PopExcluded();
  return tasks;
}

}  // namespace allot
