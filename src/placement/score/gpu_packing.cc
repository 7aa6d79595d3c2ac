// GpuPacking (FGD.md §7): shared pods onto used GPUs first, then free GPUs on used nodes, then
// untouched nodes (smaller first). CPU-only pods score 0.
#include <algorithm>

#include "placement/score/scorer.h"

namespace allot {
namespace {

class GpuPackingScorer : public Scorer {
 public:
  int64_t Score(const ShareNode& n, const PodShape& p) const override {
    if (!p.wants_gpu()) return 0;
    int64_t total = n.gpus, fully_free = n.FullyFree();
    if (fully_free == total) return std::max<int64_t>(33 - fully_free, fully_free);
    // The GPUs best fit would take: k fully free ones among them.
    uint64_t chosen = BestFitGpus(n, p);
    int64_t k = 0, tenths = 0;
    for (int i = 0; i < n.gpus; ++i) {
      if (!(chosen >> i & 1)) continue;
      k += n.free[i] == kWholeGpuMilli;
      tenths += n.free[i] / 10;
    }
    if (k > 0) return std::max<int64_t>(50 - k, 33);
    return std::max<int64_t>(100 - tenths / 10, 50);
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeGpuPackingScorer(const WorkloadModel&) { return std::make_unique<GpuPackingScorer>(); }

}  // namespace allot
