#include "placement/fleet_view.h"

namespace allot {

int32_t FleetView::TouchNew(NodeId n) {
  if (slot_.empty()) {
    slot_.assign(fleet_.size(), -1);
    touched_.Resize(fleet_.size());
  }
  int32_t& s = slot_[n.value()];
  if (s < 0) {
    s = static_cast<int32_t>(over_.size());
    const Node& node = fleet_.node(n);
    over_.push_back(node.free);
    over_node_.push_back(n);
    counts_.emplace_back();
    share_over_.emplace_back();
    if (node.shared()) share_over_.back() = fleet_.shares(n);
    touched_.Set(n.value());
    if (node.schedulable() && !node.shared()) {
      // The fleet's bucket for the node (Fleet::IndexInsert) loses it to the overlay's.
      OverlayBucket& b = Overlay(node.gpu_resource, node.free.gpus());
      b.touched_in_fleet += 1;
      OverlayMark(b, n, true);
    }
  }
  return s;
}

int64_t FleetView::DomainRoom(DomainKind kind, uint32_t d, ResourceId res, int size) const {
  const int32_t* base = fleet_.DomainFreeHistogram(kind, d, res);
  ALLOT_CHECK(base != nullptr && size > 0);
  size_t i = size_t{d} * kMaxResources + res;
  const uint32_t* slot = hist_slot_.Find((uint64_t{static_cast<uint8_t>(kind)} << 40) | i);
  const int32_t* delta = slot ? hist_delta_[*slot].data() : nullptr;
  int64_t room = 0;
  for (int k = size; k < Fleet::kFreeSlots; ++k) {
    int64_t nodes = base[k] + (delta ? delta[k] : 0);
    room += nodes * (k / size);
  }
  return room;
}

void FleetView::OverlayMark(OverlayBucket& b, NodeId n, bool on) {
  if (on) b.nodes.Set(n.value());
  else b.nodes.Clear(n.value());
  b.count += on ? 1 : -1;
}

FleetView::OverlayBucket& FleetView::MakeOverlay(ResourceId res, int k) {
  if (ov_buckets_.size() <= res) ov_buckets_.resize(res + 1);
  auto& per = ov_buckets_[res];
  if (per.size() <= static_cast<size_t>(k)) per.resize(k + 1);
  OverlayBucket& b = per[k];
  if (b.nodes.empty_storage()) b.nodes.Resize(fleet_.size());
  return b;
}

void FleetView::SetFree(int32_t slot, const NodeFree& f) {
  const int before = over_[slot].gpus(), after = f.gpus();
  if (before != after) {
    SlotCounts& c = counts_[slot];
    if (c.state == SlotCounts::kUnknown) FindCounts(slot, c);
    if (c.state == SlotCounts::kIndexed) {
      // A touched node is in its overlay bucket for over_[slot] (Touch).
      const NodeId n = over_node_[slot];
      OverlayMark(Overlay(c.res, before), n, false);
      OverlayMark(Overlay(c.res, after), n, true);
      for (int kind = 0; kind < 3; ++kind) {
        if (c.delta[kind] == SlotCounts::kNone) continue;
        dom_delta_[kind][c.res][c.delta[kind]] += after - before;
        if (kind == 0) continue;  // NVLink domains keep no histogram
        std::array<int32_t, Fleet::kFreeSlots>& h = hist_delta_[c.hist[kind - 1]];
        h[before] -= 1;
        h[after] += 1;
      }
    }
  }
  over_[slot] = f;
}

void FleetView::FindCounts(int32_t slot, SlotCounts& c) {
  const Node& node = fleet_.node(over_node_[slot]);
  c.res = node.gpu_resource;
  if (!node.schedulable() || node.shared()) {
    c.state = SlotCounts::kNotIndexed;
    return;
  }
  c.state = SlotCounts::kIndexed;
  if (node.gpu_count == 0) return;
  for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
    if (kind == DomainKind::kNvlink && !fleet_.has_multi_node_nvlink()) continue;
    const int k = static_cast<int>(kind);
    auto& by_res = dom_delta_[k];
    if (by_res.size() <= node.gpu_resource) by_res.resize(node.gpu_resource + 1);
    if (by_res[node.gpu_resource].empty()) by_res[node.gpu_resource].assign(fleet_.domains(kind).size(), 0);
    const uint32_t d = fleet_.DomainOf(node, kind);
    c.delta[k] = d;
    if (kind == DomainKind::kNvlink) continue;
    const size_t i = size_t{d} * kMaxResources + node.gpu_resource;
    auto [h, added] = hist_slot_.TryEmplace((uint64_t{static_cast<uint8_t>(kind)} << 40) | i, static_cast<uint32_t>(hist_delta_.size()));
    if (added) hist_delta_.emplace_back().fill(0);
    c.hist[k - 1] = *h;
  }
}

void FleetView::Take(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory) {
  int32_t s = Touch(n);
  NodeFree f = over_[s];
  ALLOT_CHECK((f.gpu_mask & gpu_mask) == gpu_mask);
  undo_.push_back({s, f});
  f.gpu_mask &= ~gpu_mask;
  f.cpu -= cpu;
  f.memory -= memory;
  SetFree(s, f);
}

void FleetView::Give(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory) {
  int32_t s = Touch(n);
  NodeFree f = over_[s];
  ALLOT_CHECK((f.gpu_mask & gpu_mask) == 0);
  undo_.push_back({s, f});
  f.gpu_mask |= gpu_mask;
  f.cpu += cpu;
  f.memory += memory;
  SetFree(s, f);
}

void FleetView::Take(const TaskPlacement& p) {
  if (p.share.kind == ShareKind::kWhole) return Take(p.node, p.gpu_mask, p.cpu, p.memory);
  TakeShare(p, +1);
}

void FleetView::Give(const TaskPlacement& p) {
  if (p.share.kind == ShareKind::kWhole) return Give(p.node, p.gpu_mask, p.cpu, p.memory);
  TakeShare(p, -1);
}

void FleetView::GiveAll(const std::vector<const std::vector<TaskPlacement>*>& batches) {
  if (give_sum_.size() < fleet_.size()) give_sum_.resize(fleet_.size());
  for (const std::vector<TaskPlacement>* tasks : batches) {
    for (const TaskPlacement& p : *tasks) {
      if (p.share.kind != ShareKind::kWhole) {
        TakeShare(p, -1);
        continue;
      }
      GiveSum& s = give_sum_[p.node.value()];
      if (!s.used) give_nodes_.push_back(p.node);
      s.used = true;
      s.gpu_mask |= p.gpu_mask;
      s.cpu += p.cpu;
      s.memory += p.memory;
    }
  }
  for (NodeId n : give_nodes_) {
    GiveSum& s = give_sum_[n.value()];
    Give(n, s.gpu_mask, s.cpu, s.memory);
    s = GiveSum{};
  }
  give_nodes_.clear();
}

void FleetView::TakeShare(const TaskPlacement& p, int sign) {
  int32_t s = Touch(p.node);
  NodeFree f = over_[s];
  undo_.push_back({s, f, static_cast<int32_t>(share_saved_.size())});
  share_saved_.push_back(share_over_[s]);
  GpuShareState& g = share_over_[s][p.gpu_index()];
  if (sign > 0) {
    Hold(g, p.share);
    f.gpu_mask &= ~p.gpu_mask;
  } else {
    Drop(g, p.share);
    if (g.idle()) f.gpu_mask |= p.gpu_mask;
  }
  f.cpu -= sign * p.cpu;
  f.memory -= sign * p.memory;
  SetFree(s, f);
}

void FleetView::Rollback(size_t mark) {
  while (undo_.size() > mark) {
    Undo u = undo_.back();
    undo_.pop_back();
    SetFree(u.slot, u.prev);
    if (u.share_prev >= 0) {
      share_over_[u.slot] = std::move(share_saved_[u.share_prev]);
      share_saved_.pop_back();
    }
  }
}

NodeId FleetView::FirstInBucket(ResourceId res, int k, int64_t cpu, int64_t memory, const Bitset* eligible) const {
  const Bitset* base = fleet_.index().Bucket(res, k);
  const OverlayBucket* over = nullptr;
  if (res < ov_buckets_.size() && static_cast<size_t>(k) < ov_buckets_[res].size()) over = &ov_buckets_[res][k];
  // Counted first: on a full fleet most buckets hold no node, and the words need not be read.
  if (base && fleet_.index().Count(res, k) == (over ? over->touched_in_fleet : 0)) base = nullptr;
  const Bitset* ov = over && over->count > 0 ? &over->nodes : nullptr;
  size_t words = base ? base->words() : 0;
  if (ov && ov->words() > words) words = ov->words();
  for (size_t w = 0; w < words; ++w) {
    uint64_t bits = (base ? base->word(w) & ~touched_.word(w) : 0) | (ov ? ov->word(w) : 0);
    if (eligible) bits &= eligible->word(w);
    while (bits) {
      uint32_t i = static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits));
      bits &= bits - 1;
      const NodeFree& f = Free(NodeId(i));
      if (f.cpu >= cpu && f.memory >= memory) return NodeId(i);
    }
  }
  return NodeId();
}

int FleetView::MaxFreeGpus(ResourceId res) const {
  for (int k = fleet_.index().MaxGpus(res); k > 0; --k) {
    if (FirstInBucket(res, k, 0, 0).valid()) return k;
  }
  return 0;
}

NodeId FleetView::BestFit(ResourceId res, int gpus, int64_t cpu, int64_t memory, const Bitset* eligible) const {
  if (gpus == 0) {
    // Without GPUs: CPU-only nodes first, then GPU nodes with the fewest free GPUs (any model),
    // so CPU work does not fragment idle GPU nodes.
    NodeId n = FirstInBucket(kCpu, 0, cpu, memory, eligible);
    if (n.valid()) return n;
    for (int k = 0; k <= kMaxGpusPerNode; ++k) {
      bool any_model = false;
      for (int r = kFirstGpu; r < kMaxResources; ++r) {
        if (k > fleet_.index().MaxGpus(static_cast<ResourceId>(r))) continue;
        any_model = true;
        n = FirstInBucket(static_cast<ResourceId>(r), k, cpu, memory, eligible);
        if (n.valid()) return n;
      }
      if (!any_model && k > 0) break;
    }
    return NodeId();
  }
  int max = fleet_.index().MaxGpus(res);
  for (int k = gpus; k <= max; ++k) {
    NodeId n = FirstInBucket(res, k, cpu, memory, eligible);
    if (n.valid()) return n;
  }
  return NodeId();
}

const Bitset* FleetView::Eligible(const Requirements& req) const {
  if (!excluded_.empty()) {
    // Kept until the exclusion is cleared: callers hold the pointer through a placement.
    const Bitset* base = nullptr;
    if (!req.empty()) base = EligibleMemo(req);
    Bitset& out = excluded_scratch_.emplace_back();
    out.Resize(fleet_.size());
    for (uint32_t i = 0; i < fleet_.size(); ++i) {
      if ((!base || base->Test(i)) &&
          std::none_of(excluded_.begin(), excluded_.end(), [i](const Bitset* x) { return x->Test(i); }))
        out.Set(i);
    }
    return &out;
  }
  return EligibleMemo(req);
}

const Bitset* FleetView::EligibleMemo(const Requirements& req) const {
  if (req.empty()) return nullptr;
  for (const auto& [r, bits] : eligible_) {
    if (r == req) return &bits;
  }
  Bitset bits;
  bits.Resize(fleet_.size());
  for (uint32_t i = 0; i < fleet_.size(); ++i) {
    if (Satisfies(fleet_.labels(NodeId(i)), req)) bits.Set(i);
  }
  eligible_.emplace_back(req, std::move(bits));
  return &eligible_.back().second;
}

}  // namespace allot
