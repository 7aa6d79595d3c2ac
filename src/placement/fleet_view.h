// The fleet as one scheduling pass sees it: the real free capacity plus what the pass has
// tentatively taken (placements) or given back (simulated victim removal). Copy-on-touch, with
// an undo log so a trial placement or a preemption simulation can be rolled back exactly.
#pragma once

#include <vector>

#include "fleet/fleet.h"

namespace allot {

class FleetView {
 public:
  explicit FleetView(const Fleet& fleet) : fleet_(fleet) {}

  const Fleet& fleet() const { return fleet_; }
  const NodeFree& Free(NodeId n) const {
    int32_t s = Slot(n);
    return s < 0 ? fleet_.node(n).free : over_[s];
  }
  // REQUIRES: the GPUs in mask are free in the view.
  void Take(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory);
  // REQUIRES: the GPUs in mask are held in the view.
  void Give(NodeId n, uint64_t gpu_mask, int64_t cpu, int64_t memory);

  size_t Mark() const { return undo_.size(); }
  void Rollback(size_t mark);

  // Best fit: among schedulable nodes with GPU resource `res`, the one with the fewest free
  // GPUs that still holds `gpus`, cpu and memory; ties to the lowest node id. Invalid if none.
  NodeId BestFit(ResourceId res, int gpus, int64_t cpu, int64_t memory) const;
  // Lowest node in bucket (res, free == k) that fits cpu and memory; invalid if none.
  NodeId FirstInBucket(ResourceId res, int k, int64_t cpu, int64_t memory) const;

 private:
  int32_t Slot(NodeId n) const { return n.value() < slot_.size() ? slot_[n.value()] : -1; }
  int32_t Touch(NodeId n);
  void SetFree(int32_t slot, const NodeFree& f);
  Bitset& OverlayBucket(ResourceId res, int k);

  const Fleet& fleet_;
  std::vector<int32_t> slot_;      // node → index in over_, or -1
  std::vector<NodeFree> over_;
  std::vector<NodeId> over_node_;
  struct Undo { int32_t slot; NodeFree prev; };
  std::vector<Undo> undo_;
  Bitset touched_;                               // nodes whose free lives in over_
  std::vector<std::vector<Bitset>> ov_buckets_;  // [res][k]: touched nodes by effective free
};

}  // namespace allot
