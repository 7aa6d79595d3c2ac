// FGD's node fragmentation (ATC'23; FGD.md §6.2): the idle GPU share on a node that the
// workload's typical pods could not use there, weighted by each pod's probability. Shared by the
// `fgd` and `allot` scorers.
#pragma once

#include "placement/score/scorer.h"

namespace allot {

// F(n) = Σ_k p_k·f_k, summed per bucket in class order then q1+q2+q4+xl+xr+no-access, as the
// reference does, so results match it bit for bit.
double Fragmentation(const ShareNode& n, const Workload& workload);

// The node after the pod takes its CPU and `milli` on each GPU in `gpu_mask` (memory untouched:
// fragmentation ignores it).
ShareNode After(ShareNode n, const PodShape& p, uint64_t gpu_mask);

// A scorer that prefers the placement growing a node's fragmentation least (FGD's gradient):
// S(Δ) = trunc(100·σ(Δ/1000)), Δ = Frag(before) − Frag(after). A whole-GPU pod takes the
// best-fit GPUs; a shared pod tries each GPU that holds it and takes the best (lowest index on
// ties). Subclasses say what fragmentation is.
class FragmentationScorer : public Scorer {
 public:
  int64_t Score(const ShareNode& n, const PodShape& p) const override;
  uint64_t ChooseGpus(const ShareNode& n, const PodShape& p, Rng& rng) const override;

 protected:
  // `skip_equal_gpus`: GPUs with the same free share as a lower-index one are not tried again
  // (same score, since fragmentation ignores GPU order) — a shortcut, results unchanged.
  explicit FragmentationScorer(bool skip_equal_gpus) : skip_equal_gpus_(skip_equal_gpus) {}
  virtual double Frag(const ShareNode& n) const = 0;

 private:
  int64_t ScoreDelta(double before, const ShareNode& after) const;
  // The best shared-pod GPU and its score; gpu -1 when none holds the pod.
  std::pair<int, int64_t> BestSharedGpu(const ShareNode& n, const PodShape& p) const;
  bool skip_equal_gpus_;
};

}  // namespace allot
