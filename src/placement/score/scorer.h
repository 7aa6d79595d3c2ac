// Scoring phase of placement: a scorer ranks the nodes a pod fits and picks the GPUs on the
// winner. One small file per policy, registered by a stable name (`Scorers()`); the caller
// filters (`Fits`), scores every feasible node, takes the highest score and settles ties by its
// own fixed node order. The policies of the fragmentation study on openb (ATC'23 FGD) are here,
// faithful to ../shared/reference/FGD.md §5–7.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "placement/share_node.h"

namespace allot {

// The workload a policy may plan for (FGD's "typical pods"): shapes with probabilities that sum
// to 1, in the order they were ranked.
struct TypicalPod {
  PodShape shape;
  double p = 0;
};
using Workload = std::vector<TypicalPod>;

// What a policy may know of the workload: the typical pods (the classes covering 95% of pods,
// renormalised, as FGD defines them) and every class with its frequency.
struct WorkloadModel {
  Workload typical;
  Workload all;
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  // Integer score of a feasible node; higher wins.
  // REQUIRES: Fits(n, p).
  virtual int64_t Score(const ShareNode& n, const PodShape& p) const = 0;
  // The GPUs (bit i = GPU i) the pod takes on the chosen node. Default: best fit.
  virtual uint64_t ChooseGpus(const ShareNode& n, const PodShape& p, Rng& rng) const;
  // True for a policy that draws the node uniformly among the feasible ones instead of scoring.
  virtual bool uniform_node() const { return false; }
};

struct ScorerEntry {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Scorer> (*make)(const WorkloadModel& workload);
};
// Every registered scorer, in a fixed order.
const std::vector<ScorerEntry>& Scorers();
// nullptr when `name` is not registered.
std::unique_ptr<Scorer> MakeScorer(std::string_view name, const WorkloadModel& workload);

// Factories, one per file.
std::unique_ptr<Scorer> MakeRandomScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeDotProdScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeGpuClusteringScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeGpuPackingScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeBestFitScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeFgdScorer(const WorkloadModel&);
std::unique_ptr<Scorer> MakeAllotScorer(const WorkloadModel&);

// Scale constants of the reference scorers: a node of at most 128 CPUs and 8 GPUs.
inline constexpr double kRefMaxCpuMilli = 128000;
inline constexpr double kRefMaxGpuMilli = 8000;

}  // namespace allot
