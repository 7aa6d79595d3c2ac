// FGD, fragmentation gradient descent (ATC'23; FGD.md §6). A node's fragmentation F(n) is the
// idle GPU share that the workload's typical pods could not use there, weighted by how common
// each pod is. The score prefers the placement that grows F least: S(Δ) = trunc(100·σ(Δ/1000)),
// Δ = F(before) − F(after). A shared pod tries each GPU that holds it and takes the best (lowest
// index on ties).
//
// Bucket sums follow the reference's order (per bucket in class order, then q1, q2, q4, xl, xr,
// no-access) so results match it bit for bit.
#include "placement/score/fragmentation.h"

namespace allot {
namespace {

class FgdScorer : public FragmentationScorer {
 public:
  explicit FgdScorer(const Workload& w) : FragmentationScorer(/*skip_equal_gpus=*/false), workload_(w) {}

 private:
  double Frag(const ShareNode& n) const override { return Fragmentation(n, workload_); }

  Workload workload_;
};

}  // namespace

std::unique_ptr<Scorer> MakeFgdScorer(const WorkloadModel& w) { return std::make_unique<FgdScorer>(w.typical); }

}  // namespace allot
