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

}  // namespace allot
