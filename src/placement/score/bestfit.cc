// BestFit (FGD.md §7): s = ½·(CPU left − CPU)/128 CPUs + ½·(idle − GPU)/8 GPUs, summed in that
// order; score = trunc(100·(1 − s)). The reference's min-max normalisation keeps the winners.
#include "placement/score/scorer.h"

namespace allot {
namespace {

class BestFitScorer : public Scorer {
 public:
  int64_t Score(const ShareNode& n, const PodShape& p) const override {
    double s = 0.5 * static_cast<double>(n.cpu_left - p.cpu) / kRefMaxCpuMilli +
               0.5 * static_cast<double>(n.IdleMilli() - p.total_milli()) / kRefMaxGpuMilli;
    return static_cast<int64_t>(100 * (1 - s));
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeBestFitScorer(const WorkloadModel&) { return std::make_unique<BestFitScorer>(); }

}  // namespace allot
