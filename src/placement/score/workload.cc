#include "placement/score/workload.h"

#include <algorithm>
#include <tuple>

namespace allot {

WorkloadModel BuildWorkloadModel(std::vector<std::pair<PodShape, int64_t>> counts) {
  auto key = [](const PodShape& s) { return std::make_tuple(s.milli, s.gpus, s.cpu, s.memory); };
  std::sort(counts.begin(), counts.end(), [&](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : key(a.first) > key(b.first);
  });
  WorkloadModel m;
  int64_t total = 0, kept = 0;
  for (const auto& [s, c] : counts) total += c;
  if (total == 0) return m;
  for (const auto& [s, c] : counts) {
    if (kept * 100 >= total * 95) break;
    m.typical.push_back({s, static_cast<double>(c)});
    kept += c;
  }
  for (TypicalPod& t : m.typical) t.p /= static_cast<double>(kept);
  for (const auto& [s, c] : counts) m.all.push_back({s, static_cast<double>(c) / static_cast<double>(total)});
  return m;
}

}  // namespace allot
