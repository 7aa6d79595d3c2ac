// A brute-force oracle of the MIG placement rules, written from NVML-MIG.md §4 alone (not
// from src/fleet/mig.cc), for tests that check every layout allot produces.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleet/mig.h"

namespace allot::testing {

// The oracle: each profile's (compute, memory, max count, allowed starts) as the reference
// tables give them, and a layout valid iff no memory slice is used twice, every instance sits at
// an allowed start inside the GPU, compute slices and counts stay within limits, at most one +me.
struct OracleProfile {
  std::string name;
  int cs, ms, max;
  std::vector<int> starts;
  bool me;
};
struct Oracle {
  int cs, ms;
  std::vector<OracleProfile> profiles;
  bool Valid(const std::vector<std::pair<std::string, int>>& layout) const {
    std::vector<int> used(ms, 0);
    int compute = 0, me = 0;
    std::map<std::string, int> count;
    for (const auto& [name, start] : layout) {
      auto it = std::find_if(profiles.begin(), profiles.end(), [&](const OracleProfile& p) { return p.name == name; });
      if (it == profiles.end()) return false;
      if (std::find(it->starts.begin(), it->starts.end(), start) == it->starts.end()) return false;
      for (int s = start; s < start + it->ms; ++s) {
        if (s >= ms || used[s]++) return false;
      }
      compute += it->cs;
      me += it->me;
      if (++count[name] > it->max) return false;
    }
    return compute <= cs && me <= 1;
  }
};

inline const Oracle kH100Oracle = {7, 8,
                      {{"1g.10gb", 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}, false},
                       {"1g.10gb+me", 1, 1, 1, {0, 1, 2, 3, 4, 5, 6}, true},
                       {"1g.20gb", 1, 2, 4, {0, 2, 4, 6}, false},
                       {"2g.20gb", 2, 2, 3, {0, 2, 4}, false},
                       {"3g.40gb", 3, 4, 2, {0, 4}, false},
                       {"4g.40gb", 4, 4, 1, {0}, false},
                       {"7g.80gb", 7, 8, 1, {0}, false}}};
inline const Oracle kA30Oracle = {4, 4,
                     {{"1g.6gb", 1, 1, 4, {0, 1, 2, 3}, false},
                      {"1g.6gb+me", 1, 1, 1, {0, 1, 2, 3}, true},
                      {"2g.12gb", 2, 2, 2, {0, 2}, false},
                      {"4g.24gb", 4, 4, 1, {0}, false}}};

inline std::vector<std::pair<std::string, int>> Named(const MigGeometry& g, const MigLayout& l) {
  std::vector<std::pair<std::string, int>> out;
  for (const MigInstance& i : l) out.push_back({std::string(g.profiles[i.profile].name), i.start});
  return out;
}

}  // namespace allot::testing
