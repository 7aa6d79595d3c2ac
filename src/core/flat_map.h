// FlatMap: a hash map of small keys and values in one array (open addressing, linear probing,
// at most half full, no erase). For memos that live one scheduling pass and are looked up per
// job tried: a node-based std::unordered_map allocated once per key per pass, which at tens of
// thousands of passes a day over a long backlog was a measurable part of the pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace allot {

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  // Room for `n` keys without growing.
  void Reserve(size_t n) {
    if (2 * n > slots_.size()) Rehash(Capacity(n));
  }
  // The value of `key`, inserted as `init` when absent; `second` says whether it was inserted.
  std::pair<V*, bool> TryEmplace(const K& key, const V& init) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(Capacity(size_ + 1));
    Slot& s = Probe(key);
    if (s.used) return {&s.value, false};
    s = {key, init, true};
    ++size_;
    return {&s.value, true};
  }
  const V* Find(const K& key) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = const_cast<FlatMap*>(this)->Probe(key);
    return s.used ? &s.value : nullptr;
  }
  bool Contains(const K& key) const { return Find(key) != nullptr; }
  size_t size() const { return size_; }

 private:
  struct Slot {
    K key{};
    V value{};
    bool used = false;
  };
  // A power of 2 at least twice `n`, and at least 64.
  static size_t Capacity(size_t n) {
    size_t c = 64;
    while (c < 2 * n) c *= 2;
    return c;
  }
  // The slot holding `key`, or the empty slot where it would go. REQUIRES: a free slot. The
  // hash's bits are spread by a Fibonacci multiply, so a hash weak in its low bits is fine.
  Slot& Probe(const K& key) {
    const size_t mask = slots_.size() - 1;
    const uint64_t spread = static_cast<uint64_t>(Hash{}(key)) * 0x9E3779B97F4A7C15ULL;
    for (size_t i = static_cast<size_t>(spread >> shift_);; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used || s.key == key) return s;
    }
  }
  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    for (Slot& s : old) {
      if (s.used) Probe(s.key) = std::move(s);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;  // 64 - log2(capacity)
};

}  // namespace allot
