// FGD, fragmentation gradient descent (ATC'23; FGD.md §6). A node's fragmentation F(n) is the
// idle GPU share that the workload's typical pods could not use there, weighted by how common
// each pod is. The score prefers the placement that grows F least: S(Δ) = trunc(100·σ(Δ/1000)),
// Δ = F(before) − F(after). A shared pod tries each GPU that holds it and takes the best (lowest
// index on ties).
//
// Bucket sums follow the reference's order (per bucket in class order, then q1, q2, q4, xl, xr,
// no-access) so results match it bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "placement/score/fragmentation.h"

namespace allot {
namespace {

class FgdScorer : public Scorer {
 public:
  explicit FgdScorer(const Workload& w) : workload_(w) {}

  int64_t Score(const ShareNode& n, const PodShape& p) const override {
    double before = Frag(n);
    if (p.shared()) {
      int64_t best = INT64_MIN;
      for (int i = 0; i < n.gpus; ++i) {
        if (n.free[i] < p.milli) continue;
        best = std::max(best, ScoreDelta(before, After(n, p, uint64_t{1} << i)));
      }
      return best;
    }
    return ScoreDelta(before, After(n, p, BestFitGpus(n, p)));
  }

  uint64_t ChooseGpus(const ShareNode& n, const PodShape& p, Rng&) const override {
    if (!p.shared()) return BestFitGpus(n, p);
    double before = Frag(n);
    int64_t best = INT64_MIN;
    int best_gpu = -1;
    for (int i = 0; i < n.gpus; ++i) {
      if (n.free[i] < p.milli) continue;
      int64_t s = ScoreDelta(before, After(n, p, uint64_t{1} << i));
      if (s > best) {
        best = s;
        best_gpu = i;
      }
    }
    return best_gpu < 0 ? 0 : uint64_t{1} << best_gpu;
  }

  double Frag(const ShareNode& n) const { return Fragmentation(n, workload_); }

 private:
  int64_t ScoreDelta(double before, const ShareNode& after) const {
    double delta = before - Frag(after);
    return static_cast<int64_t>(100 * (1 / (1 + std::exp(-delta / 1000))));
  }

  Workload workload_;
};

}  // namespace

std::unique_ptr<Scorer> MakeFgdScorer(const WorkloadModel& w) { return std::make_unique<FgdScorer>(w.typical); }

}  // namespace allot
