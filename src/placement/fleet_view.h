// The fleet as one scheduling pass sees it: the real free capacity plus what the pass has
// tentatively taken (placements) or given back (simulated victim removal). Copy-on-touch, with
// an undo log so a trial placement or a preemption simulation can be rolled back exactly.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <vector>

#include "core/flat_map.h"
#include "fleet/fleet.h"

namespace allot {
class Scorer;
}

namespace allot {

class FleetView {
 public:
  // `now_ms`: MIG instances still being laid out (ready_ms > now) are not usable.
  explicit FleetView(const Fleet& fleet, int64_t now_ms = 0) : fleet_(fleet), now_ms_(now_ms) {}

  const Fleet& fleet() const { return fleet_; }
  int64_t now_ms() const { return now_ms_; }
  // The scorer that places MPS shares of a GPU model, if the pass has one (else packing).
  void SetShareScorer(std::function<const Scorer*(ResourceId)> f) { share_scorer_ = std::move(f); }
  const Scorer* ShareScorer(ResourceId res) const { return share_scorer_ ? share_scorer_(res) : nullptr; }
  const NodeFree& Free(NodeId n) const {
    int32_t s = Slot(n);
    return s < 0 ? fleet_.node(n).free : over_[s];
  }
  // REQUIRES: the GPUs in mask are free in the view.
  void Take(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory);
  // REQUIRES: the GPUs in mask are held in the view.
  void Give(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory);
  // A task's placement, whole GPUs or a share. REQUIRES: it fits (Take) / is held (Give).
  void Take(const TaskPlacement& p);
  void Give(const TaskPlacement& p);
  // Gives back every task of `batches` (each held in the view): the view ends as after Give
  // of each, but a node's whole-GPU tasks are summed first and given back at once, so a node
  // holding many of them changes once (a backfill walk gives back most of the fleet).
  void GiveAll(const std::vector<const std::vector<TaskPlacement>*>& batches);
  // The share state of a shared node's GPUs as the view sees them.
  const std::vector<GpuShareState>& Shares(NodeId n) const {
    int32_t s = Slot(n);
    return s < 0 || share_over_[s].empty() ? fleet_.shares(n) : share_over_[s];
  }

  size_t Mark() const { return undo_.size(); }
  void Rollback(size_t mark);

  // Free GPUs of `res` on the schedulable nodes of domain `d`, as the view sees them.
  int64_t DomainFreeGpus(DomainKind kind, uint32_t d, ResourceId res) const {
    if (kind == DomainKind::kNvlink && !fleet_.has_multi_node_nvlink()) {
      // One node per NVLink domain: read the node (the view keeps no per-domain delta).
      const Node& n = fleet_.node(fleet_.domains(kind)[d].nodes.front());
      return n.schedulable() && !n.shared() && n.gpu_resource == res ? Free(n.id).gpus() : 0;
    }
    int64_t v = fleet_.DomainFreeGpus(kind, d, res);
    const auto& by_res = dom_delta_[static_cast<int>(kind)];
    return res < by_res.size() && !by_res[res].empty() ? v + by_res[res][d] : v;
  }

  // Room for tasks of `size` GPUs (> 0) on the schedulable nodes of rack or zone `d` with GPUs
  // of `res`, as the view sees them: Σ over those nodes of ⌊free GPUs / size⌋, read from the
  // fleet's count of nodes by free GPUs and the view's changes to it, not from the nodes.
  int64_t DomainRoom(DomainKind kind, uint32_t d, ResourceId res, int size) const;

  // Free GPUs of `res` on all schedulable nodes (the sum over zones).
  int64_t TotalFreeGpus(ResourceId res) const {
    int64_t total = 0;
    for (uint32_t z = 0; z < fleet_.domains(DomainKind::kZone).size(); ++z) total += DomainFreeGpus(DomainKind::kZone, z, res);
    return total;
  }
  // Most free GPUs of `res` on one schedulable node; 0 if none.
  int MaxFreeGpus(ResourceId res) const;

  // Best fit: among schedulable nodes with GPU resource `res`, the one with the fewest free
  // GPUs that still holds `gpus`, cpu and memory; ties to the lowest node id. Invalid if none.
  // With `eligible`, only nodes in it (a job's `require`; see Eligible).
  NodeId BestFit(ResourceId res, int gpus, int64_t cpu, int64_t memory, const Bitset* eligible = nullptr) const;
  // Lowest node in bucket (res, free == k) that fits cpu and memory (and is in `eligible`, when
  // given); invalid if none.
  NodeId FirstInBucket(ResourceId res, int k, int64_t cpu, int64_t memory, const Bitset* eligible = nullptr) const;

  // The nodes whose labels satisfy `req`, whatever their condition; nullptr when `req` is empty
  // (every node). Computed once per distinct requirement for the life of the view (labels change
  // only through events, never during a pass), so a pass pays one scan of the fleet per
  // requirement its jobs name and nothing for jobs without one.
  const Bitset* Eligible(const Requirements& req) const;
  // Until popped, Eligible also leaves out these nodes (a service replica's spread: the nodes,
  // racks or zones its siblings use; an untrusted tenant's job: the nodes labelled
  // isolation=partial). Exclusions nest. REQUIRES: `excluded` outlives its push.
  void PushExcluded(const Bitset* excluded) { excluded_.push_back(excluded); }
  void PopExcluded() {
    excluded_.pop_back();
    if (excluded_.empty()) excluded_scratch_.clear();
  }

  // GPUs (node, index) the job being placed must not take a share of: the noisy-neighbour moves
  // in force for it (state/interference.h). Set by the pass around one job; none otherwise.
  void SetKeptOff(const std::vector<std::pair<NodeId, int32_t>>* gpus) { kept_off_ = gpus; }
  bool KeptOff(NodeId n, int gpu) const {
    if (kept_off_ == nullptr) return false;
    for (const auto& [node, g] : *kept_off_) {
      if (node == n && g == gpu) return true;
    }
    return false;
  }

 private:
  const Bitset* EligibleMemo(const Requirements& req) const;
  int32_t Slot(NodeId n) const { return n.value() < slot_.size() ? slot_[n.value()] : -1; }
  // The node's slot in the overlay, made at its first change in the view (TouchNew).
  int32_t Touch(NodeId n) {
    if (n.value() < slot_.size()) {
      if (const int32_t s = slot_[n.value()]; s >= 0) return s;
    }
    return TouchNew(n);
  }
  int32_t TouchNew(NodeId n);
  void SetFree(int32_t slot, const NodeFree& f);
  // Per (GPU model, free GPUs k): the touched nodes the view has in bucket k and how many they
  // are, and how many touched nodes the fleet's own bucket k holds (the view no longer reads
  // them there). Counted so that best fit skips an empty bucket without reading its words.
  struct OverlayBucket {
    Bitset nodes;
    int32_t count = 0;
    int32_t touched_in_fleet = 0;
  };
  OverlayBucket& Overlay(ResourceId res, int k) {
    // Every change of a touched node asks for two buckets: those made already are found here.
    if (res < ov_buckets_.size() && static_cast<size_t>(k) < ov_buckets_[res].size()) {
      OverlayBucket& b = ov_buckets_[res][k];
      if (!b.nodes.empty_storage()) return b;
    }
    return MakeOverlay(res, k);
  }
  OverlayBucket& MakeOverlay(ResourceId res, int k);
  // Sets or clears node `n` in `b`, keeping its count. REQUIRES: `n` is not in it yet (on) / it
  // is (off): a touched node is in exactly the bucket of its free GPUs in the view.
  static void OverlayMark(OverlayBucket& b, NodeId n, bool on);

  void TakeShare(const TaskPlacement& p, int sign);
  // GiveAll's sums by node (used: some task of the node is in the sum), and their nodes.
  struct GiveSum {
    uint64_t gpu_mask = 0;
    int64_t cpu = 0;
    int64_t memory = 0;
    bool used = false;
  };
  std::vector<GiveSum> give_sum_;
  std::vector<NodeId> give_nodes_;

  const Fleet& fleet_;
  int64_t now_ms_ = 0;
  std::function<const Scorer*(ResourceId)> share_scorer_;
  std::vector<int32_t> slot_;      // node → index in over_, or -1
  std::vector<NodeFree> over_;
  std::vector<NodeId> over_node_;
  // By slot: what SetFree changes when the node's free GPUs change, found at its first change
  // (FindCounts) so that later ones do not read the node or hash its domains again. kIndexed:
  // schedulable and not shared (in the capacity index); delta: its domain in dom_delta_[kind][res]
  // (kNone: none kept); hist: its rack's and zone's in hist_delta_.
  struct SlotCounts {
    static constexpr uint32_t kNone = UINT32_MAX;
    enum State : uint8_t { kUnknown, kIndexed, kNotIndexed };
    State state = kUnknown;
    ResourceId res = kCpu;
    uint32_t delta[3] = {kNone, kNone, kNone};
    uint32_t hist[2] = {0, 0};
  };
  std::vector<SlotCounts> counts_;
  void FindCounts(int32_t slot, SlotCounts& c);
  struct Undo { int32_t slot; NodeFree prev; int32_t share_prev = -1; };
  std::vector<std::vector<GpuShareState>> share_over_;   // by slot; empty for exclusive nodes
  std::vector<std::vector<GpuShareState>> share_saved_;  // states an undo restores
  std::vector<Undo> undo_;
  Bitset touched_;                               // nodes whose free lives in over_
  std::vector<std::vector<OverlayBucket>> ov_buckets_;  // [res][k]
  // [kind][res][domain]: free GPUs vs the fleet, made per model at its first change (a pass
  // changes one or two models' counts: 200 racks each, not 200 × kMaxResources).
  std::vector<std::vector<int32_t>> dom_delta_[3];
  // Nodes by free GPUs vs the fleet's count (Fleet::DomainFreeHistogram), for the racks and
  // zones the view changed: key (kind, domain * kMaxResources + res) → index in hist_delta_.
  struct HashU64 {
    size_t operator()(uint64_t k) const { return static_cast<size_t>(k); }
  };
  FlatMap<uint64_t, uint32_t, HashU64> hist_slot_;
  std::vector<std::array<int32_t, Fleet::kFreeSlots>> hist_delta_;
  mutable std::deque<std::pair<Requirements, Bitset>> eligible_;  // Eligible's memo (stable addresses)
  const std::vector<std::pair<NodeId, int32_t>>* kept_off_ = nullptr;
  std::vector<const Bitset*> excluded_;
  mutable std::deque<Bitset> excluded_scratch_;  // Eligible's answers while excluded_ holds any
};

}  // namespace allot
