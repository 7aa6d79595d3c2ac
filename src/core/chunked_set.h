// ChunkedSet: an ordered set kept as a list of sorted chunks of at most kChunk elements, with
// each chunk's last element beside the list to find the chunk. Inserting or erasing moves at
// most a chunk's elements (a std::set allocates or frees a node and chases cold pointers down
// its tree; one sorted vector would move half the set); a walk reads each chunk in order. For
// the state's active jobs by expected end: ~20,000 of them on a full 50,000-GPU fleet, one
// insert and one erase a job, and a walk in end order for every backfill reservation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace allot {

template <typename T>
class ChunkedSet {
 public:
  static constexpr size_t kChunk = 256;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    const T& operator*() const { return (*chunks_)[chunk_][at_]; }
    const T* operator->() const { return &(*chunks_)[chunk_][at_]; }
    const_iterator& operator++() {
      if (++at_ == (*chunks_)[chunk_].size()) {
        ++chunk_;
        at_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator was = *this;
      ++*this;
      return was;
    }
    bool operator==(const const_iterator& o) const { return chunk_ == o.chunk_ && at_ == o.at_; }

   private:
    friend class ChunkedSet;
    const_iterator(const std::vector<std::vector<T>>* chunks, size_t chunk, size_t at)
        : chunks_(chunks), chunk_(chunk), at_(at) {}
    const std::vector<std::vector<T>>* chunks_ = nullptr;
    size_t chunk_ = 0;
    size_t at_ = 0;
  };

  const_iterator begin() const { return const_iterator(&chunks_, 0, 0); }
  const_iterator end() const { return const_iterator(&chunks_, chunks_.size(), 0); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // True when `x` was not in the set.
  bool insert(const T& x) {
    if (chunks_.empty()) {
      chunks_.push_back({x});
      lasts_.push_back(x);
      size_ = 1;
      return true;
    }
    // The first chunk whose last element is not below x; past every chunk, the last one.
    size_t c = static_cast<size_t>(std::lower_bound(lasts_.begin(), lasts_.end(), x) - lasts_.begin());
    if (c == chunks_.size()) c -= 1;
    std::vector<T>& chunk = chunks_[c];
    auto it = std::lower_bound(chunk.begin(), chunk.end(), x);
    if (it != chunk.end() && !(x < *it)) return false;
    chunk.insert(it, x);
    lasts_[c] = chunk.back();
    ++size_;
    if (chunk.size() > kChunk) {
      // Split in halves: the second half becomes the next chunk.
      std::vector<T> upper(chunk.begin() + static_cast<std::ptrdiff_t>(kChunk / 2), chunk.end());
      chunk.resize(kChunk / 2);
      lasts_[c] = chunk.back();
      lasts_.insert(lasts_.begin() + static_cast<std::ptrdiff_t>(c + 1), upper.back());
      chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c + 1), std::move(upper));
    }
    return true;
  }
  // How many were erased (0 or 1), as std::set::erase.
  size_t erase(const T& x) {
    size_t c = static_cast<size_t>(std::lower_bound(lasts_.begin(), lasts_.end(), x) - lasts_.begin());
    if (c == chunks_.size()) return 0;
    std::vector<T>& chunk = chunks_[c];
    auto it = std::lower_bound(chunk.begin(), chunk.end(), x);
    if (it == chunk.end() || x < *it) return 0;
    chunk.erase(it);
    --size_;
    if (chunk.empty()) {
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(c));
      lasts_.erase(lasts_.begin() + static_cast<std::ptrdiff_t>(c));
    } else {
      lasts_[c] = chunk.back();
    }
    return 1;
  }
  size_t count(const T& x) const {
    size_t c = static_cast<size_t>(std::lower_bound(lasts_.begin(), lasts_.end(), x) - lasts_.begin());
    if (c == chunks_.size()) return 0;
    return std::binary_search(chunks_[c].begin(), chunks_[c].end(), x) ? 1 : 0;
  }
  void clear() {
    chunks_.clear();
    lasts_.clear();
    size_ = 0;
  }
  // The same elements (however they are chunked).
  bool operator==(const ChunkedSet& o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }

 private:
  std::vector<std::vector<T>> chunks_;  // none empty; each sorted, and all in order
  std::vector<T> lasts_;                // chunks_[c].back()
  size_t size_ = 0;
};

}  // namespace allot
