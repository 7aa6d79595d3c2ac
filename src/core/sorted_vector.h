// A sorted vector used as a small set: insert and erase keep it sorted and unique. For sets of
// a few dozen elements changed often and walked in order (a node's active jobs, a tenant's
// running jobs), where a tree would allocate a node an element.
#pragma once

#include <algorithm>
#include <vector>

namespace allot {

// Adds `x` where it sorts; false when it was there.
template <typename T>
bool InsertSorted(std::vector<T>& v, const T& x) {
  auto at = std::lower_bound(v.begin(), v.end(), x);
  if (at != v.end() && !(x < *at)) return false;
  v.insert(at, x);
  return true;
}

// Takes `x` out; false when it was not there.
template <typename T>
bool EraseSorted(std::vector<T>& v, const T& x) {
  auto at = std::lower_bound(v.begin(), v.end(), x);
  if (at == v.end() || x < *at) return false;
  v.erase(at);
  return true;
}

}  // namespace allot
