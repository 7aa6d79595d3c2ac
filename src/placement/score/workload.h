// A workload model from observed task shapes, as FGD defines it (FGD.md §6.1): the classes
// ranked by count, the typical ones being the most common that together cover 95% of tasks,
// their probabilities renormalised; plus every class with its frequency.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "placement/score/scorer.h"

namespace allot {

// `counts`: each distinct shape with how many tasks had it. Ties in count rank the larger shape
// (milli, then CPU, then memory) first, so the model is a pure function of the counts.
WorkloadModel BuildWorkloadModel(std::vector<std::pair<PodShape, int64_t>> counts);

}  // namespace allot
