// Random (FGD.md §7): the node is drawn uniformly among the feasible ones (the caller draws);
// a shared pod goes to a uniformly drawn GPU that holds it, a whole-GPU pod to the lowest-index
// free GPUs.
#include "placement/score/scorer.h"

namespace allot {
namespace {

class RandomScorer : public Scorer {
 public:
  int64_t Score(const ShareNode&, const PodShape&) const override { return 0; }
  bool uniform_node() const override { return true; }
  uint64_t ChooseGpus(const ShareNode& n, const PodShape& p, Rng& rng) const override {
    if (!p.shared()) return BestFitGpus(n, p);
    int chosen = -1;
    uint64_t seen = 0;
    for (int i = 0; i < n.gpus; ++i) {
      if (n.free[i] < p.milli) continue;
      if (rng.Below(++seen) == 0) chosen = i;  // reservoir sampling
    }
    return chosen < 0 ? 0 : uint64_t{1} << chosen;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeRandomScorer(const WorkloadModel&) { return std::make_unique<RandomScorer>(); }

}  // namespace allot
