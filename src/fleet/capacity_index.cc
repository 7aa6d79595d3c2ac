#include "fleet/capacity_index.h"

namespace allot {

void CapacityIndex::Grow(ResourceId resource, int max_gpus, size_t nodes) {
  if (buckets_.size() <= resource) buckets_.resize(resource + 1);
  auto& per = buckets_[resource];
  if (per.size() < static_cast<size_t>(max_gpus + 1)) per.resize(max_gpus + 1);
  if (counts_.size() <= resource) counts_.resize(resource + 1);
  if (counts_[resource].size() < per.size()) counts_[resource].resize(per.size(), 0);
  if (nodes > nodes_) nodes_ = nodes;
  for (auto& row : buckets_) {
    for (Bitset& b : row) b.Resize(nodes_);
  }
}

void CapacityIndex::Insert(ResourceId resource, int free_gpus, NodeId node) {
  Bitset& b = buckets_[resource][free_gpus];
  if (b.Test(node.value())) return;
  b.Set(node.value());
  ++counts_[resource][free_gpus];
}

void CapacityIndex::Erase(ResourceId resource, int free_gpus, NodeId node) {
  Bitset& b = buckets_[resource][free_gpus];
  if (!b.Test(node.value())) return;
  b.Clear(node.value());
  --counts_[resource][free_gpus];
}

const Bitset* CapacityIndex::Bucket(ResourceId resource, int free_gpus) const {
  if (resource >= buckets_.size()) return nullptr;
  const auto& per = buckets_[resource];
  if (free_gpus < 0 || static_cast<size_t>(free_gpus) >= per.size()) return nullptr;
  return &per[free_gpus];
}

int32_t CapacityIndex::Count(ResourceId resource, int free_gpus) const {
  if (resource >= counts_.size()) return 0;
  const auto& per = counts_[resource];
  return free_gpus < 0 || static_cast<size_t>(free_gpus) >= per.size() ? 0 : per[free_gpus];
}

int CapacityIndex::MaxGpus(ResourceId resource) const {
  if (resource >= buckets_.size()) return -1;
  return static_cast<int>(buckets_[resource].size()) - 1;
}

}  // namespace allot
