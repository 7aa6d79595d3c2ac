// SortedVectorMap: an ordered map kept as one vector of (key, value) pairs sorted by key.
// Walking it reads memory in order, where a std::map chases a pointer per entry; inserting or
// erasing a key moves the entries after it. For maps walked far more often than their key set
// changes: the pending groups, which every scheduling pass walks and an arrival or the last
// job of a group leaving changes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace allot {

template <typename K, typename V>
class SortedVectorMap {
 public:
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

  const_iterator find(const K& key) const {
    auto it = LowerBound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  iterator find(const K& key) {
    auto it = LowerBound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  // The value of `key`, inserted default-constructed when absent. The reference lasts until
  // the next insertion or erasure.
  V& operator[](const K& key) {
    auto it = LowerBound(key);
    if (it == items_.end() || !(it->first == key)) it = items_.insert(it, value_type(key, V()));
    return it->second;
  }
  void erase(const_iterator it) { items_.erase(it); }
  void clear() { items_.clear(); }

 private:
  iterator LowerBound(const K& key) {
    return std::lower_bound(items_.begin(), items_.end(), key, [](const value_type& e, const K& k) { return e.first < k; });
  }
  const_iterator LowerBound(const K& key) const {
    return std::lower_bound(items_.begin(), items_.end(), key, [](const value_type& e, const K& k) { return e.first < k; });
  }
  std::vector<value_type> items_;
};

}  // namespace allot
