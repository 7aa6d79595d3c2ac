// DotProd, merge/max (FGD.md §7): v = (CPU left, idle GPU) and u = (CPU, GPU asked), each over
// the reference maxima; score = trunc(100·(1 − v·u/2)). The smallest product wins: best fit
// along the request's direction.
#include "placement/score/scorer.h"

namespace allot {
namespace {

class DotProdScorer : public Scorer {
 public:
  int64_t Score(const ShareNode& n, const PodShape& p) const override {
    double dot = (static_cast<double>(n.cpu_left) / kRefMaxCpuMilli) * (static_cast<double>(p.cpu) / kRefMaxCpuMilli) +
                 (n.IdleMilli() / kRefMaxGpuMilli) * (static_cast<double>(p.total_milli()) / kRefMaxGpuMilli);
    return static_cast<int64_t>(100 * (1 - dot / 2));
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeDotProdScorer(const WorkloadModel&) { return std::make_unique<DotProdScorer>(); }

}  // namespace allot
