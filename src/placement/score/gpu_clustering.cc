// GpuClustering (FGD.md §7): keep pods of one GPU kind together. Base 75 when the node holds
// only this pod's kind, 50 when among others, 25 when it holds no GPU pod, 0 when only other
// kinds; plus ⌊25·(8000 − idle)/8000⌋ so fuller nodes win. CPU-only pods score 0.
#include "placement/score/scorer.h"

namespace allot {
namespace {

class GpuClusteringScorer : public Scorer {
 public:
  int64_t Score(const ShareNode& n, const PodShape& p) const override {
    if (!p.wants_gpu()) return 0;
    uint64_t tag = p.tag();
    int64_t base = n.tags == 0 ? 25 : n.tags == tag ? 75 : (n.tags & tag) ? 50 : 0;
    return base + 25 * (static_cast<int64_t>(kRefMaxGpuMilli) - n.IdleMilli()) / static_cast<int64_t>(kRefMaxGpuMilli);
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeGpuClusteringScorer(const WorkloadModel&) { return std::make_unique<GpuClusteringScorer>(); }

}  // namespace allot
