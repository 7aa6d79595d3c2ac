#include "placement/score/scorer.h"

namespace allot {

uint64_t Scorer::ChooseGpus(const ShareNode& n, const PodShape& p, Rng&) const { return BestFitGpus(n, p); }

const std::vector<ScorerEntry>& Scorers() {
  static const std::vector<ScorerEntry> kScorers = {
      {"random", "a feasible node drawn uniformly; a shared pod on a random GPU that fits", MakeRandomScorer},
      {"dotprod", "smallest dot product of (CPU, GPU) left with the request", MakeDotProdScorer},
      {"gpu-clustering", "nodes already holding pods of the same GPU kind, then fuller nodes", MakeGpuClusteringScorer},
      {"gpu-packing", "shared GPUs first, then free GPUs on used nodes, then idle nodes", MakeGpuPackingScorer},
      {"bestfit", "least CPU and GPU left after placing", MakeBestFitScorer},
      {"fgd", "least growth of fragmentation against the workload's typical pods", MakeFgdScorer},
      {"allot", "FGD whose fragmentation also counts idle GPU share the node's CPU cannot feed", MakeAllotScorer},
  };
  return kScorers;
}

std::unique_ptr<Scorer> MakeScorer(std::string_view name, const WorkloadModel& workload) {
  for (const ScorerEntry& e : Scorers()) {
    if (e.name == name) return e.make(workload);
  }
  return nullptr;
}

}  // namespace allot
