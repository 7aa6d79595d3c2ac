// The reference scorers of the FGD study, checked on small nodes with the arithmetic shown.
#include "placement/score/scorer.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

ShareNode Node(int64_t cpu_left, std::vector<int32_t> free, uint8_t model = 0) {
  ShareNode n;
  n.model = model;
  n.cpu_left = cpu_left;
  n.memory_left = 1 << 20;
  n.gpus = static_cast<int>(free.size());
  for (size_t i = 0; i < free.size(); ++i) n.free[i] = free[i];
  return n;
}

PodShape Pod(int64_t cpu, int32_t milli, int gpus) {
  PodShape p;
  p.cpu = cpu;
  p.milli = milli;
  p.gpus = gpus;
  return p;
}

int64_t ScoreOf(const char* name, const ShareNode& n, const PodShape& p, const Workload& w = {}) {
  auto s = MakeScorer(name, {w, w});
  EXPECT_NE(s, nullptr) << name;
  return s ? s->Score(n, p) : -1;
}

TEST(ScorerTest, EveryStudyPolicyIsRegisteredByName) {
  for (const char* name : {"random", "dotprod", "gpu-clustering", "gpu-packing", "bestfit", "fgd", "allot"}) {
    EXPECT_NE(MakeScorer(name, {}), nullptr) << name;
  }
  EXPECT_EQ(MakeScorer("tetris", {}), nullptr);
}

TEST(ScorerTest, BestFitPrefersTheNodeLeftEmptiest) {
  // s = ½(64000 − 8000)/128000 + ½(4000 − 1000)/8000 = 0.21875 + 0.1875 = 0.40625 → trunc(59.375) = 59
  EXPECT_EQ(ScoreOf("bestfit", Node(64000, {1000, 1000, 1000, 1000}), Pod(8000, 1000, 1)), 59);
  // s = ½(16000 − 8000)/128000 + ½(1500 − 1000)/8000 = 0.03125 + 0.03125 → trunc(93.75) = 93
  EXPECT_EQ(ScoreOf("bestfit", Node(16000, {1000, 500}), Pod(8000, 1000, 1)), 93);
}

TEST(ScorerTest, DotProdPrefersTheSmallestProductWithTheRequest) {
  // v·u = (64000/128000)(8000/128000) + (4000/8000)(1000/8000) = 0.03125 + 0.0625 = 0.09375
  // 100·(1 − 0.046875) = 95.3 → 95
  EXPECT_EQ(ScoreOf("dotprod", Node(64000, {1000, 1000, 1000, 1000}), Pod(8000, 1000, 1)), 95);
}

TEST(ScorerTest, GpuClusteringKeepsOneKindOfPodTogether) {
  ShareNode n = Node(64000, {1000, 1000, 500, 1000});  // idle 3500: ⌊25·4500/8000⌋ = 14
  PodShape shared = Pod(1000, 500, 1), whole = Pod(1000, 1000, 1);
  EXPECT_EQ(ScoreOf("gpu-clustering", n, shared), 25 + 14) << "no GPU pod yet";
  n.tags = shared.tag();
  EXPECT_EQ(ScoreOf("gpu-clustering", n, shared), 75 + 14) << "only its kind";
  EXPECT_EQ(ScoreOf("gpu-clustering", n, whole), 0 + 14) << "only another kind";
  n.tags |= whole.tag();
  EXPECT_EQ(ScoreOf("gpu-clustering", n, whole), 50 + 14) << "its kind among others";
  EXPECT_EQ(ScoreOf("gpu-clustering", n, Pod(1000, 0, 0)), 0) << "CPU-only pods score 0";
}

TEST(ScorerTest, GpuPackingFillsUsedGpusThenUsedNodesThenSmallIdleNodes) {
  PodShape shared = Pod(1000, 300, 1);
  // Untouched 4-GPU node: max(33 − 4, 4) = 29; untouched 2-GPU node: 31.
  EXPECT_EQ(ScoreOf("gpu-packing", Node(64000, {1000, 1000, 1000, 1000}), shared), 29);
  EXPECT_EQ(ScoreOf("gpu-packing", Node(64000, {1000, 1000}), shared), 31);
  // Used node, best fit takes the 400-free GPU: k = 0, 100 − ⌊⌊400/10⌋/10⌋ = 96.
  EXPECT_EQ(ScoreOf("gpu-packing", Node(64000, {1000, 400}), shared), 96);
  // Used node, the pod needs a whole free GPU: k = 1 → max(50 − 1, 33) = 49.
  EXPECT_EQ(ScoreOf("gpu-packing", Node(64000, {1000, 200}), Pod(1000, 1000, 1)), 49);
}

TEST(ScorerTest, FgdCountsIdleShareTheTypicalPodsCannotUse) {
  // One typical pod: half a GPU and 1 CPU, p = 1. Node: GPUs free 1000 and 300, 8 CPUs.
  // The 300 is too small for the pod: F = 300. Placing a 0.5 pod on GPU 0 leaves 500 and 300:
  // F = 300 (500 still fits one). Placing it... a 0.8 pod on GPU 0 leaves 200 and 300: F = 500.
  Workload w = {{Pod(1000, 500, 1), 1.0}};
  auto fgd = MakeScorer("fgd", {w, w});
  ShareNode n = Node(8000, {1000, 300});
  // Δ = 300 − 300 = 0 → trunc(100·σ(0)) = 50.
  EXPECT_EQ(fgd->Score(n, Pod(1000, 500, 1)), 50);
  // Δ = 300 − 500 = −200 → 100·σ(−0.2) = 45.02 → 45.
  EXPECT_EQ(fgd->Score(n, Pod(1000, 800, 1)), 45);
  // A 0.3 pod fits both GPUs: on GPU 1 it uses the fragment (F: 300 → 0, Δ = 300, 100·σ(0.3) =
  // 57.4 → 57); on GPU 0 it leaves 700 and 300 (F = 300, Δ = 0 → 50). Best is GPU 1.
  EXPECT_EQ(fgd->Score(n, Pod(1000, 300, 1)), 57);
  Rng rng(1);
  EXPECT_EQ(fgd->ChooseGpus(n, Pod(1000, 300, 1), rng), 0b10u);
  // Not enough CPU left for the typical pod: all idle share is fragment (Q4): F = 1300.
  Workload cpu_hungry = {{Pod(9000, 500, 1), 1.0}};
  EXPECT_EQ(MakeScorer("fgd", {cpu_hungry, cpu_hungry})->Score(n, Pod(0, 0, 0)), 50);
}

TEST(ScorerTest, AllotCountsIdleShareTheNodesCpuCannotFeed) {
  // One typical pod: half a GPU and 1 CPU, p = 1, so ρ = 1000/500 = 2 millicores per milli-GPU
  // and a node feeds cpu_left/2 · 1.25 milli-GPU.
  Workload w = {{Pod(1000, 500, 1), 1.0}};
  auto allot = MakeScorer("allot", {w, w});
  auto fgd = MakeScorer("fgd", {w, w});
  ShareNode idle = Node(8000, {1000, 1000});
  // A CPU-only pod of 6 CPUs: 2000 left feeds 1250 of the 2000 idle, so F: 0 → 750,
  // Δ = −750 → 100·σ(−0.75) = 32.08 → 32. FGD sees no change (the pod still fits): 50.
  EXPECT_EQ(allot->Score(idle, Pod(6000, 0, 0)), 32);
  EXPECT_EQ(fgd->Score(idle, Pod(6000, 0, 0)), 50);
  // On a node whose GPUs are all taken nothing is stranded: 50, so the CPU goes there.
  EXPECT_EQ(allot->Score(Node(8000, {0, 0}), Pod(6000, 0, 0)), 50);
  // With CPU to spare it is FGD: a 0.8 pod on GPU 0 of {1000, 300} leaves F = 500: 45, and a
  // 0.3 pod takes the 300 fragment (GPU 1): 57.
  ShareNode n = Node(64000, {1000, 300});
  EXPECT_EQ(allot->Score(n, Pod(1000, 800, 1)), 45);
  EXPECT_EQ(allot->Score(n, Pod(1000, 300, 1)), 57);
  Rng rng(1);
  EXPECT_EQ(allot->ChooseGpus(n, Pod(1000, 300, 1), rng), 0b10u);
  // GPUs with equal free share are interchangeable: ties go to the lowest index.
  EXPECT_EQ(allot->ChooseGpus(Node(64000, {300, 1000, 300}), Pod(1000, 300, 1), rng), 0b1u);
}

TEST(ScorerTest, BestFitGpuChoiceTakesTheTightestGpuThenTheLowestIndex) {
  ShareNode n = Node(64000, {1000, 600, 400, 600});
  EXPECT_EQ(BestFitGpus(n, Pod(0, 500, 1)), 0b0010u) << "600 is the tightest that holds 500; GPU 1 before 3";
  EXPECT_EQ(BestFitGpus(n, Pod(0, 300, 1)), 0b0100u);
  EXPECT_EQ(BestFitGpus(n, Pod(0, 1000, 1)), 0b0001u);
  EXPECT_EQ(BestFitGpus(n, Pod(0, 1000, 2)), 0u) << "only one whole GPU is free";
}

}  // namespace
}  // namespace allot
