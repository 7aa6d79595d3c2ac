// Demand-driven MIG re-profiling: the third phase of a pass.
//
// A MIG task that found neither a free instance of its profile nor free slices to create one
// on is unmet demand. For each GPU model with unmet demand, GPUs whose free (unheld) instances
// block it are re-laid out: the held instances stay exactly where they are (running work is
// never disturbed), the free ones go, and instances of the demanded profiles are created in
// their place, largest profile first, each at the start that keeps the most choices open.
//
// Hysteresis: a GPU being laid out (ready_ms in the future; on an agent-managed node, until
// the node reports the planned layout: MigReady) or re-laid out within
// mig_relayout_hold_ms is left alone, and a GPU is only re-laid out when that creates an
// instance somebody is waiting for — never to tidy. The new instances are usable
// mig_relayout_delay_ms after the plan.
#include <algorithm>

#include "scheduler/pass.h"

namespace allot {

void Pass::Relayout() {
  const Fleet& fleet = state_.fleet();
  // Unmet demand per model, profiles largest first (compute, then memory, then index).
  std::map<ResourceId, std::vector<std::pair<uint8_t, int>>> by_model;
  std::map<ResourceId, std::pair<int64_t, int64_t>> least;  // the least CPU and memory a task needs
  for (const auto& [key, d] : mig_unmet_) {
    by_model[key.first].push_back({key.second, d.count});
    auto [it, fresh] = least.emplace(key.first, std::make_pair(d.cpu, d.memory));
    if (!fresh) it->second = {std::min(it->second.first, d.cpu), std::min(it->second.second, d.memory)};
  }
  for (auto& [res, demand] : by_model) {
    const MigGeometry* geo = nullptr;
    for (NodeId id : fleet.shared_nodes(Sharing::kMig)) {
      if (fleet.node(id).gpu_resource == res) geo = fleet.node(id).pool.mig;
    }
    if (!geo) continue;
    std::stable_sort(demand.begin(), demand.end(), [&](const auto& a, const auto& b) {
      const MigProfile& pa = geo->profiles[a.first];
      const MigProfile& pb = geo->profiles[b.first];
      if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
      return pa.memory_slices > pb.memory_slices;
    });
    // Candidate GPUs: idle ones first (the whole GPU can be laid out again), then by node/GPU.
    struct Gpu {
      NodeId node;
      int index;
      bool idle;
    };
    std::vector<Gpu> gpus;
    for (NodeId id : fleet.shared_nodes(Sharing::kMig)) {
      const Node& n = fleet.node(id);
      if (n.gpu_resource != res || !n.schedulable()) continue;
      const std::vector<GpuShareState>& shares = view_.Shares(id);
      // Instances already being laid out count against the demand: do not lay out twice.
      for (int i = 0; i < n.gpu_count; ++i) {
        if (MigReady(shares[i], now_)) continue;
        for (const MigSlot& s : shares[i].mig) {
          if (s.held) continue;
          for (auto& [profile, count] : demand) {
            if (profile == s.instance.profile && count > 0) --count;
          }
        }
      }
    }
    for (NodeId id : fleet.shared_nodes(Sharing::kMig)) {
      const Node& n = fleet.node(id);
      if (n.gpu_resource != res || !n.schedulable()) continue;
      // A node without the CPU and memory for any waiting task would gain nothing.
      if (view_.Free(id).cpu < least[res].first || view_.Free(id).memory < least[res].second) continue;
      const std::vector<GpuShareState>& shares = view_.Shares(id);
      for (int i = 0; i < n.gpu_count; ++i) {
        const GpuShareState& g = shares[i];
        if (!MigReady(g, now_)) continue;
        if (g.layout_ms >= 0 && now_ - g.layout_ms < config_.mig_relayout_hold_ms) continue;
        bool has_free = false;
        for (const MigSlot& s : g.mig) has_free |= !s.held;
        if (!has_free) continue;  // free slices alone were already offered to the placement
        gpus.push_back({id, i, g.idle()});
      }
    }
    std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) { return a.idle > b.idle; });
    for (const Gpu& gpu : gpus) {
      int left = 0;
      for (const auto& d : demand) left += d.second;
      if (left == 0) break;
      const GpuShareState& g = view_.Shares(gpu.node)[gpu.index];
      MigLayout layout;
      for (const MigSlot& s : g.mig) {
        if (s.held) layout.push_back(s.instance);
      }
      bool created = false;
      for (auto& [profile, count] : demand) {
        while (count > 0) {
          int best_start = -1, best_open = -1;
          for (int start : FreeMigStarts(*geo, layout, profile)) {
            layout.push_back({profile, static_cast<uint8_t>(start)});
            int open = OpenMigChoices(*geo, layout);
            layout.pop_back();
            if (open > best_open) {
              best_open = open;
              best_start = start;
            }
          }
          if (best_start < 0) break;
          layout.push_back({profile, static_cast<uint8_t>(best_start)});
          --count;
          created = true;
        }
      }
      if (!created) continue;
      std::sort(layout.begin(), layout.end(), [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
      plan_.relayouts.push_back({gpu.node, gpu.index, layout, now_ + config_.mig_relayout_delay_ms});
    }
  }
}

}  // namespace allot
