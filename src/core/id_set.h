// IdSet: an ordered set of strong ids (core/ids.h) kept as a bitset over their values, with a
// summary bit per 64-bit word so that a walk skips empty stretches. Ids are dense (a job's id
// is its index), so the bits of a month's 900,000 jobs take 110 KB: insert, erase and look-up
// touch one word and its summary bit where a std::set allocates, frees and chases a cold
// pointer per level (the state's job sets changed at every placement and exit). A walk visits
// the ids in increasing order, as a std::set<Id> would.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace allot {

template <typename IdT>
class IdSet {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = IdT;
    using difference_type = std::ptrdiff_t;
    using pointer = const IdT*;
    using reference = IdT;

    const_iterator() = default;
    IdT operator*() const { return IdT(at_); }
    const_iterator& operator++() {
      at_ = set_->NextFrom(at_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator was = *this;
      ++*this;
      return was;
    }
    bool operator==(const const_iterator& o) const { return at_ == o.at_; }

   private:
    friend class IdSet;
    const_iterator(const IdSet* set, uint32_t at) : set_(set), at_(at) {}
    const IdSet* set_ = nullptr;
    uint32_t at_ = kEnd;
  };

  const_iterator begin() const { return const_iterator(this, NextFrom(0)); }
  const_iterator end() const { return const_iterator(this, kEnd); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  bool contains(IdT id) const {
    const uint32_t v = id.value();
    return (v >> 6) < words_.size() && (words_[v >> 6] >> (v & 63) & 1);
  }
  size_t count(IdT id) const { return contains(id) ? 1 : 0; }
  // True when `id` was not in the set.
  bool insert(IdT id) {
    const uint32_t v = id.value();
    const size_t w = v >> 6;
    if (w >= words_.size()) {
      words_.resize(std::max(w + 1, words_.size() * 2), 0);
      summary_.resize((words_.size() + 63) / 64, 0);
    }
    const uint64_t bit = uint64_t{1} << (v & 63);
    if (words_[w] & bit) return false;
    words_[w] |= bit;
    summary_[w >> 6] |= uint64_t{1} << (w & 63);
    ++size_;
    return true;
  }
  // How many were erased (0 or 1), as std::set::erase.
  size_t erase(IdT id) {
    if (!contains(id)) return 0;
    const uint32_t v = id.value();
    const size_t w = v >> 6;
    words_[w] &= ~(uint64_t{1} << (v & 63));
    if (words_[w] == 0) summary_[w >> 6] &= ~(uint64_t{1} << (w & 63));
    --size_;
    return 1;
  }
  void clear() {
    words_.clear();
    summary_.clear();
    size_ = 0;
  }
  // The same ids (however far each set's storage reaches).
  bool operator==(const IdSet& o) const {
    if (size_ != o.size_) return false;
    for (auto a = begin(), b = o.begin(); a != end(); ++a, ++b) {
      if (*a != *b) return false;
    }
    return true;
  }

 private:
  static constexpr uint32_t kEnd = UINT32_MAX;
  // The least id in the set at or above `v`, or kEnd.
  uint32_t NextFrom(uint32_t v) const {
    size_t w = v >> 6;
    if (w >= words_.size()) return kEnd;
    const uint64_t rest = (v & 63) ? words_[w] & (~uint64_t{0} << (v & 63)) : words_[w];
    if (rest) return static_cast<uint32_t>(w * 64 + std::countr_zero(rest));
    // The next non-empty word, by the summary: first in this summary word, then in later ones.
    ++w;
    size_t s = w >> 6;
    if (s >= summary_.size()) return kEnd;
    uint64_t bits = (w & 63) ? summary_[s] & (~uint64_t{0} << (w & 63)) : summary_[s];
    while (bits == 0) {
      if (++s >= summary_.size()) return kEnd;
      bits = summary_[s];
    }
    w = s * 64 + std::countr_zero(bits);
    return static_cast<uint32_t>(w * 64 + std::countr_zero(words_[w]));
  }

  std::vector<uint64_t> words_;    // bit v & 63 of word v >> 6: id v is in the set
  std::vector<uint64_t> summary_;  // bit w & 63 of word w >> 6: words_[w] is not 0
  size_t size_ = 0;
};

}  // namespace allot
