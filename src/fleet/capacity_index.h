// Nodes bucketed by (GPU model, free GPU count) as bitsets over node ids, so best-fit is a
// scan of a few words and the index is cheap to overlay during a scheduling pass.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"

namespace allot {

class Bitset {
 public:
  void Resize(size_t bits) { words_.resize((bits + 63) / 64, 0); }
  void Set(uint32_t i) { words_[i >> 6] |= 1ULL << (i & 63); }
  void Clear(uint32_t i) { words_[i >> 6] &= ~(1ULL << (i & 63)); }
  bool Test(uint32_t i) const { return i >> 6 < words_.size() && (words_[i >> 6] >> (i & 63)) & 1; }
  size_t words() const { return words_.size(); }
  uint64_t word(size_t w) const { return w < words_.size() ? words_[w] : 0; }
  bool empty_storage() const { return words_.empty(); }

 private:
  std::vector<uint64_t> words_;
};

class CapacityIndex {
 public:
  // Buckets for `resource` hold nodes with 0..max_gpus free GPUs.
  void Grow(ResourceId resource, int max_gpus, size_t nodes);
  void Insert(ResourceId resource, int free_gpus, NodeId node);
  void Erase(ResourceId resource, int free_gpus, NodeId node);

  // Nodes of `resource` with exactly `free_gpus` free and schedulable; nullptr if none ever.
  const Bitset* Bucket(ResourceId resource, int free_gpus) const;
  // How many nodes Bucket(resource, free_gpus) holds.
  int32_t Count(ResourceId resource, int free_gpus) const;
  int MaxGpus(ResourceId resource) const;
  size_t node_capacity() const { return nodes_; }

 private:
  std::vector<std::vector<Bitset>> buckets_;  // [resource][free_gpus]
  std::vector<std::vector<int32_t>> counts_;  // [resource][free_gpus]: nodes in the bucket
  size_t nodes_ = 0;
};

}  // namespace allot
