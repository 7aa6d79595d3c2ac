#include "fleet/capacity_index.h"

namespace allot {

void CapacityIndex::Grow(ResourceId resource, int max_gpus, size_t nodes) {
  if (buckets_.size() <= resource) buckets_.resize(resource + 1);
  auto& per = buckets_[resource];
  if (per.size() < static_cast<size_t>(max_gpus + 1)) per.resize(max_gpus + 1);
  if (nodes > nodes_) nodes_ = nodes;
  for (auto& row : buckets_) {
    for (Bitset& b : row) b.Resize(nodes_);
  }
}

void CapacityIndex::Insert(ResourceId resource, int free_gpus, NodeId node) {
  buckets_[resource][free_gpus].Set(node.value());
}

void CapacityIndex::Erase(ResourceId resource, int free_gpus, NodeId node) {
  buckets_[resource][free_gpus].Clear(node.value());
}

const Bitset* CapacityIndex::Bucket(ResourceId resource, int free_gpus) const {
  if (resource >= buckets_.size()) return nullptr;
  const auto& per = buckets_[resource];
  if (free_gpus < 0 || static_cast<size_t>(free_gpus) >= per.size()) return nullptr;
  return &per[free_gpus];
}

int CapacityIndex::MaxGpus(ResourceId resource) const {
  if (resource >= buckets_.size()) return -1;
  return static_cast<int>(buckets_[resource].size()) - 1;
}

}  // namespace allot
