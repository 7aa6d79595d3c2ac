#include "placement/gang.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

constexpr Topology kNvlink = Topology::kNvlink;
constexpr Topology kRack = Topology::kRack;

uint64_t Gpus(int n) { return n == 64 ? ~0ULL : (1ULL << n) - 1; }  // GPUs 0..n-1

class GangTest : public ::testing::Test {
 protected:
  GangTest() { c_.Tenant("default"); }

  const Fleet& fleet() const { return c_.state.fleet(); }
  NodeId Node(const std::string& name) const { return fleet().Find(name); }
  JobSpec Spec(const JobBuilder& b) const { return b.Build(c_.state); }
  // Takes the first `n` GPUs of `node` in `view`, as a running job would hold them.
  void Hold(FleetView& view, const std::string& node, int n) { view.Take(Node(node), Gpus(n), 0, 0); }
  // The node names a placement uses, one per task.
  std::vector<std::string> NodesOf(const std::vector<TaskPlacement>& tasks) const {
    std::vector<std::string> out;
    for (const TaskPlacement& t : tasks) out.push_back(fleet().node(t.node).name);
    return out;
  }
  std::vector<NodeFree> Snapshot(const FleetView& view) const {
    std::vector<NodeFree> out;
    for (const auto& n : fleet().nodes()) out.push_back(view.Free(n.id));
    return out;
  }
  static bool SameFree(const std::vector<NodeFree>& a, const std::vector<NodeFree>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].gpu_mask != b[i].gpu_mask || a[i].cpu != b[i].cpu || a[i].memory != b[i].memory) return false;
    }
    return true;
  }
  // Two zones of three racks of four 8-GPU nodes (n0 … n23).
  void TwoZonesOfThreeRacks() {
    for (const char* zone : {"z1", "z2"}) {
      for (const char* rack : {"a", "b", "c"}) c_.AddNodes("n", 4, zone, std::string(zone) + rack, 64, 512, testing::kH100, 8);
    }
  }
  // One random GPU of a random node: taken when free in `view`, else given back one time in
  // `give_every`.
  void FlipRandomGpu(FleetView& view, std::mt19937& rng, int give_every = 1) const {
    NodeId id(static_cast<uint32_t>(rng() % fleet().size()));
    uint64_t free = view.Free(id).gpu_mask;
    uint64_t bit = uint64_t{1} << (rng() % 8);
    if (free & bit) {
      view.Take(id, bit, 0, 0);
    } else if (give_every == 1 || rng() % give_every == 0) {
      view.Give(id, bit, 0, 0);
    }
  }
  std::string Never(const JobBuilder& b) const {
    return NeverFits(fleet(), Spec(b), c_.state.resource_names()).value_or("(fits)");
  }

  Cluster c_;
};

TEST_F(GangTest, BestFitPicksTheFullestNodeThatStillFits) {
  // Free GPUs: n0 8, n1 4, n2 2, n3 4.
  c_.AddNodes("n", 4, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n1", 4);
  Hold(view, "n2", 6);
  Hold(view, "n3", 4);
  struct Case {
    int gpus;
    const char* want;
  };
  const Case cases[] = {
      {1, "n2"},  // 2 free is the tightest
      {2, "n2"},
      {3, "n1"},  // n1 and n3 both have 4 free: lowest id
      {4, "n1"},
      {5, "n0"},
      {8, "n0"},
  };
  for (const Case& k : cases) {
    NodeId got = view.BestFit(c_.Res("gpu/H100-80GB"), k.gpus, 0, 0);
    ASSERT_TRUE(got.valid()) << k.gpus;
    EXPECT_EQ(fleet().node(got).name, k.want) << k.gpus << " GPUs";
  }
  EXPECT_FALSE(view.BestFit(c_.Res("gpu/H100-80GB"), 9, 0, 0).valid());
}

TEST_F(GangTest, BestFitSkipsNodesWithoutTheCpuOrMemory) {
  // n1 is the fullest but its CPUs are taken.
  c_.AddNodes("n", 2, "z", "r", 16, 128, testing::kH100, 8);
  FleetView view(fleet());
  view.Take(Node("n1"), Gpus(4), 15000, 0);
  EXPECT_EQ(fleet().node(view.BestFit(c_.Res("gpu/H100-80GB"), 2, 2000, 0)).name, "n0");
  EXPECT_EQ(fleet().node(view.BestFit(c_.Res("gpu/H100-80GB"), 2, 1000, 0)).name, "n1");
}

TEST_F(GangTest, BestFitReadsTheFleetsOwnAllocationsToo) {
  // A running job holds 6 GPUs of n1 in the real fleet (not the view): n1 has 2 free.
  c_.AddNodes("n", 2, "z", "r", 64, 512, testing::kH100, 8);
  c_.Submit(JobBuilder("running").Tenant("default").Gpus(6));
  c_.RunPass(0);
  ASSERT_EQ(c_.Running(), (std::vector<std::string>{"running"}));
  std::string held = fleet().node(c_.job("running").placement[0].node).name;
  FleetView view(fleet());
  EXPECT_EQ(fleet().node(view.BestFit(c_.Res("gpu/H100-80GB"), 2, 0, 0)).name, held);
}

TEST_F(GangTest, SkipsCordonedNodesEvenWhenTheyFitBest) {
  // A running job holds 4 GPUs of n0, making it the best fit for 2, but n0 is cordoned.
  c_.AddNodes("n", 2, "z", "r", 64, 512, testing::kH100, 8);
  c_.Submit(JobBuilder("running").Tenant("default").Gpus(4));
  c_.RunPass(0);
  ASSERT_EQ(c_.job("running").placement[0].node, Node("n0"));
  c_.Apply(NodeConditionChanged{Node("n0"), NodeCondition::kCordoned});
  FleetView view(fleet());
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(2)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n1"}));
}

TEST_F(GangTest, UnconstrainedGangPrefersOneNode) {
  // Free: n0 8, n1 4, n2 2. Tasks of 4, 2, 2 fit n0 alone: locality is preferred.
  c_.AddNodes("n", 3, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n1", 4);
  Hold(view, "n2", 6);
  JobSpec spec = Spec(JobBuilder("a").Gpus(2).Tasks(2));
  spec.groups.insert(spec.groups.begin(), TaskGroup{1, 4 * kGpuUnit, 0, 0});  // task 0: 4 GPUs
  auto placed = PlaceGang(view, spec);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n0", "n0", "n0"}));
  EXPECT_EQ((*placed)[0].gpu_mask | (*placed)[1].gpu_mask | (*placed)[2].gpu_mask, 0xFFu);
}

TEST_F(GangTest, UnconstrainedGangPutsEachTaskOnItsBestFitNode) {
  // Free: n0 6, n1 4, n2 2; no node holds 4 + 2 + 2. n1 takes 4, n2 takes 2, then n0.
  c_.AddNodes("n", 3, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n0", 2);
  Hold(view, "n1", 4);
  Hold(view, "n2", 6);
  JobSpec spec = Spec(JobBuilder("a").Gpus(2).Tasks(2));
  spec.groups.insert(spec.groups.begin(), TaskGroup{1, 4 * kGpuUnit, 0, 0});  // task 0: 4 GPUs
  auto placed = PlaceGang(view, spec);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n1", "n2", "n0"}));
  // Each task got whole, distinct GPUs from what was free.
  EXPECT_EQ((*placed)[0].gpu_mask, 0xF0u);  // n1's free GPUs 4..7
  EXPECT_EQ((*placed)[1].gpu_mask, 0xC0u);  // n2's free GPUs 6..7
  EXPECT_EQ((*placed)[2].gpu_mask, 0x0Cu);  // n0's lowest two free
}

TEST_F(GangTest, ATaskTakesItsGpusFromOneDeclaredGroup) {
  // Two groups of four (say, two PCIe switches). 2 GPUs go to the first group; then 4 do not
  // straddle the groups but take the second whole; the last 2 fill the first group.
  NodeSpec spec{"g0", "z", "r", "", 64 * kMilli, 512 * testing::kGiB, testing::kH100, 8};
  spec.gpu_groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  c_.Apply(NodeAdded{spec});
  FleetView view(fleet());
  auto a = PlaceGang(view, Spec(JobBuilder("a").Gpus(2)));
  auto b = PlaceGang(view, Spec(JobBuilder("b").Gpus(4)));
  auto c = PlaceGang(view, Spec(JobBuilder("c").Gpus(2)));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ((*a)[0].gpu_mask, 0x03u);
  EXPECT_EQ((*b)[0].gpu_mask, 0xF0u) << "not 2..5 across the groups";
  EXPECT_EQ((*c)[0].gpu_mask, 0x0Cu);
}

TEST_F(GangTest, AGangThatDoesNotFitLeavesTheViewUnchanged) {
  // Three tasks of 8 on two free nodes: the first two would fit, the third does not.
  c_.AddNodes("n", 3, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n2", 1);
  std::vector<NodeFree> before = Snapshot(view);
  size_t mark = view.Mark();
  EXPECT_FALSE(PlaceGang(view, Spec(JobBuilder("a").Gpus(8).Tasks(3))).has_value());
  EXPECT_TRUE(SameFree(before, Snapshot(view)));
  EXPECT_EQ(view.Mark(), mark) << "a failed gang leaves nothing to undo";
  EXPECT_EQ(fleet().node(view.BestFit(c_.Res("gpu/H100-80GB"), 8, 0, 0)).name, "n0");
}

TEST_F(GangTest, NvlinkGangGoesWholeOnOneNodeByDefault) {
  // n0 and n1 have 4 free each, n2 all 8: a 2×4 NVLink gang takes n2 only.
  c_.AddNodes("n", 3, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n0", 4);
  Hold(view, "n1", 4);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(2).Topology(kNvlink)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n2", "n2"}));
  EXPECT_EQ((*placed)[0].gpu_mask | (*placed)[1].gpu_mask, 0xFFu);
  EXPECT_EQ((*placed)[0].gpu_mask & (*placed)[1].gpu_mask, 0u);
  // Now 4 + 4 are free but on two nodes: an NVLink gang of 8 does not fit.
  EXPECT_FALSE(PlaceGang(view, Spec(JobBuilder("b").Gpus(4).Tasks(2).Topology(kNvlink))).has_value());
  // Without the constraint it does.
  EXPECT_TRUE(PlaceGang(view, Spec(JobBuilder("c").Gpus(4).Tasks(2))).has_value());
}

TEST_F(GangTest, NvlinkGangMaySpanADeclaredMultiNodeDomain) {
  // a0, a1 share NVLink domain "nvl-a" and have 4 free each; b0 is on its own with 4 free.
  c_.AddNodes("a", 2, "z", "r", 64, 512, testing::kH100, 8, "nvl-a");
  c_.AddNodes("b", 1, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "a0", 4);
  Hold(view, "a1", 4);
  Hold(view, "b2", 4);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(2).Topology(kNvlink)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"a0", "a1"}));
}

TEST_F(GangTest, RackGangStaysInOneRack) {
  // r1: two nodes with 4 free each (8 in the rack); r2: two empty nodes (16).
  // A 3×4 gang cannot fit in r1 (needs 12), so it goes to r2 whole.
  c_.AddNodes("n", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("n", 2, "z", "r2", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n0", 4);
  Hold(view, "n1", 4);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(3).Topology(kRack)));
  ASSERT_TRUE(placed.has_value());
  for (const std::string& n : NodesOf(*placed)) EXPECT_TRUE(n == "n2" || n == "n3") << n;
}

TEST_F(GangTest, RackGangPrefersTheFullestRackThatHoldsIt) {
  // A 3×4 gang (12 GPUs) fits no single node. r1 has 8 + 4 = 12 free, r2 has 8 + 8 = 16:
  // r1 is the tighter fit. Within r1, best fit: n1 (4 free) first, then n0 twice.
  c_.AddNodes("n", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("n", 2, "z", "r2", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n1", 4);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(3).Topology(kRack)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n1", "n0", "n0"}));
}

TEST_F(GangTest, ConstrainedGangTriesOneNodeBeforeSpreadingAcrossTheDomain) {
  // 2×4 in one rack: n0 alone (8 free) holds it, though r1's n1 (4 free) is a tighter fit
  // per task.
  c_.AddNodes("n", 2, "z", "r1", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n1", 4);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(2).Topology(kRack)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"n0", "n0"}));
}

TEST_F(GangTest, CpuOnlyTasksPreferCpuOnlyNodes) {
  c_.AddNodes("gpu", 1, "z", "r", 64, 512, testing::kH100, 8);
  c_.AddNodes("cpu", 1, "z", "r", 64, 512, "", 0);
  FleetView view(fleet());
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Cpus(4).MemGi(8)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"cpu1"}));
  EXPECT_EQ((*placed)[0].cpu, 4000);
  EXPECT_EQ((*placed)[0].memory, 8 * 1024);
}

TEST_F(GangTest, CpuOnlyTasksOnGpuNodesPreferTheFullestGpuNodeOfAnyModel) {
  // No CPU-only node: a CPU task goes to the GPU node with the fewest free GPUs, whatever its
  // model, so it does not fragment an idle node. h100-0 is idle (8 free), a100-1 is full (0).
  c_.AddNodes("h100-", 1, "z", "r", 64, 512, testing::kH100, 8);
  c_.AddNodes("a100-", 1, "z", "r", 64, 512, "A100-80GB", 8);
  FleetView view(fleet());
  Hold(view, "a100-1", 8);
  auto placed = PlaceGang(view, Spec(JobBuilder("a").Cpus(4).MemGi(8)));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(NodesOf(*placed), (std::vector<std::string>{"a100-1"}));
}

TEST_F(GangTest, NvlinkGangWhoseSummedCpuExceedsEveryNodeNeverFits) {
  // 2 tasks × (4 GPUs, 40 CPUs) in one NVLink domain = one node: 80 CPUs > 64.
  c_.AddNodes("n", 2, "z", "r", 64, 512, testing::kH100, 8);
  EXPECT_EQ(Never(JobBuilder("a").Gpus(4).Cpus(40).Tasks(2).Topology(kNvlink)),
            "needs 8 gpu/H100-80GB GPUs, 80 CPUs and 0Mi in one NVLink domain (one node); no node is that large");
  EXPECT_EQ(Never(JobBuilder("b").Gpus(4).Cpus(30).Tasks(2).Topology(kNvlink)), "(fits)");
}

TEST_F(GangTest, RollbackRestoresTheViewExactly) {
  c_.AddNodes("n", 3, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n0", 2);
  std::vector<NodeFree> before = Snapshot(view);
  size_t mark = view.Mark();
  view.Take(Node("n1"), Gpus(8), 10000, 1024);
  view.Give(Node("n0"), Gpus(2), 0, 0);
  view.Take(Node("n0"), 0xF0, 5, 5);
  view.Take(Node("n2"), 0x0F, 0, 0);
  ASSERT_FALSE(SameFree(before, Snapshot(view)));
  view.Rollback(mark);
  EXPECT_TRUE(SameFree(before, Snapshot(view)));
  // The capacity buckets are restored too: best fit for 6 is n0 again (6 free), then n1.
  ResourceId gpu = c_.Res("gpu/H100-80GB");
  EXPECT_EQ(fleet().node(view.BestFit(gpu, 6, 0, 0)).name, "n0");
  EXPECT_EQ(fleet().node(view.BestFit(gpu, 7, 0, 0)).name, "n1");
  EXPECT_FALSE(view.FirstInBucket(gpu, 4, 0, 0).valid()) << "no node has exactly 4 free any more";
}

TEST_F(GangTest, DomainFreeCountsFollowTheViewTheFleetAndCordons) {
  // Two racks of two 8-GPU nodes.
  c_.AddNodes("n", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("n", 2, "z", "r2", 64, 512, testing::kH100, 8);
  ResourceId gpu = c_.Res("gpu/H100-80GB");
  uint32_t r1 = fleet().node(Node("n0")).rack, r2 = fleet().node(Node("n2")).rack;
  uint32_t zone = fleet().node(Node("n0")).zone;
  EXPECT_EQ(fleet().DomainFreeGpus(DomainKind::kRack, r1, gpu), 16);
  EXPECT_EQ(fleet().DomainFreeGpus(DomainKind::kZone, zone, gpu), 32);
  FleetView view(fleet());
  size_t mark = view.Mark();
  Hold(view, "n0", 3);
  Hold(view, "n3", 8);
  EXPECT_EQ(view.DomainFreeGpus(DomainKind::kRack, r1, gpu), 13);
  EXPECT_EQ(view.DomainFreeGpus(DomainKind::kRack, r2, gpu), 8);
  EXPECT_EQ(view.DomainFreeGpus(DomainKind::kZone, zone, gpu), 21);
  EXPECT_EQ(view.DomainFreeGpus(DomainKind::kNvlink, fleet().node(Node("n0")).nvlink_domain, gpu), 5);
  EXPECT_EQ(view.MaxFreeGpus(gpu), 8);
  view.Rollback(mark);
  EXPECT_EQ(view.DomainFreeGpus(DomainKind::kZone, zone, gpu), 32);
  // The fleet itself: a cordoned node's free GPUs leave its domains' counts.
  c_.Apply(NodeConditionChanged{Node("n2"), NodeCondition::kCordoned});
  EXPECT_EQ(fleet().DomainFreeGpus(DomainKind::kRack, r2, gpu), 8);
  EXPECT_EQ(fleet().DomainFreeGpus(DomainKind::kZone, zone, gpu), 24);
  EXPECT_EQ(fleet().CheckDomainCounts(), "");
  c_.Apply(NodeConditionChanged{Node("n2"), NodeCondition::kReady});
  EXPECT_EQ(fleet().DomainFreeGpus(DomainKind::kRack, r2, gpu), 16);
  EXPECT_EQ(fleet().CheckDomainCounts(), "");
}

TEST_F(GangTest, RackGangSkipsARackWhoseFreeGpusAreSplitTooFinely) {
  // r1 has 16 free GPUs in total, but as 4+4+4+4: no room for two 8-GPU tasks. r2 has two
  // idle nodes. The rack gang lands in r2, and a 4×4 gang still fits r1.
  c_.AddNodes("a", 4, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("b", 2, "z", "r2", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  for (const char* n : {"a0", "a1", "a2", "a3"}) Hold(view, n, 4);
  auto big = PlaceGang(view, Spec(JobBuilder("big").Gpus(8).Tasks(2).Topology(kRack)));
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(NodesOf(*big), (std::vector<std::string>{"b4", "b5"}));
  auto small = PlaceGang(view, Spec(JobBuilder("small").Gpus(4).Tasks(4).Topology(kRack)));
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(NodesOf(*small), (std::vector<std::string>{"a0", "a1", "a2", "a3"}));
  EXPECT_FALSE(PlaceGang(view, Spec(JobBuilder("more").Gpus(8).Tasks(2).Topology(kRack))).has_value());
}

TEST_F(GangTest, MayFitAfterFreeingLooksOnlyWhereTheFreedTasksWere) {
  // r1: a0 a1, r2: b2 b3; every GPU held. Freeing 8 GPUs on a0 may let a 1×8 job or a rack
  // gang of 8 fit there, but not a 2×8 rack gang (r1 has 8 free) nor a 1-task job that
  // needs a bigger node than a0 has free.
  c_.AddNodes("a", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("b", 2, "z", "r2", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  for (const char* n : {"a0", "a1", "b2", "b3"}) Hold(view, n, 8);
  std::vector<TaskPlacement> freed = {{Node("a0"), Gpus(4), 0, 0}};
  view.Give(Node("a0"), Gpus(4), 0, 0);
  EXPECT_TRUE(MayFitAfterFreeing(view, Spec(JobBuilder("one4").Gpus(4)), freed));
  EXPECT_FALSE(MayFitAfterFreeing(view, Spec(JobBuilder("one8").Gpus(8)), freed));
  EXPECT_TRUE(MayFitAfterFreeing(view, Spec(JobBuilder("rack2x2").Gpus(2).Tasks(2).Topology(kRack)), freed));
  EXPECT_FALSE(MayFitAfterFreeing(view, Spec(JobBuilder("rack2x4").Gpus(4).Tasks(2).Topology(kRack)), freed));
  // Unconstrained multi-task gangs need the GPUs somewhere in the fleet.
  EXPECT_TRUE(MayFitAfterFreeing(view, Spec(JobBuilder("any2x2").Gpus(2).Tasks(2)), freed));
  EXPECT_FALSE(MayFitAfterFreeing(view, Spec(JobBuilder("any2x4").Gpus(4).Tasks(2)), freed));
  // Whenever it says no, placement agrees.
  for (const JobBuilder& b : {JobBuilder("x").Gpus(8), JobBuilder("y").Gpus(4).Tasks(2).Topology(kRack),
                              JobBuilder("z").Gpus(4).Tasks(2)}) {
    size_t mark = view.Mark();
    EXPECT_FALSE(PlaceGang(view, Spec(b)).has_value());
    view.Rollback(mark);
  }
}

TEST_F(GangTest, ZoneGangTakesOneRackThenTheFewestRacks) {
  // One zone, four racks: r1 a0 a1 (idle), r2 b2 (4 free), r3 c3 (4 free), r4 d4 (idle) d5 (full).
  // Best fit per task alone would start on the 4-free nodes of r2 and r3 and spread the gang.
  c_.AddNodes("a", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("b", 1, "z", "r2", 64, 512, testing::kH100, 8);
  c_.AddNodes("c", 1, "z", "r3", 64, 512, testing::kH100, 8);
  c_.AddNodes("d", 2, "z", "r4", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "b2", 4);
  Hold(view, "c3", 4);
  Hold(view, "d5", 8);
  size_t mark = view.Mark();
  // 4 × 4 GPUs fit one rack (r1).
  auto one_rack = PlaceGang(view, Spec(JobBuilder("a").Gpus(4).Tasks(4).Topology(Topology::kZone)));
  ASSERT_TRUE(one_rack.has_value());
  EXPECT_EQ(NodesOf(*one_rack), (std::vector<std::string>{"a0", "a0", "a1", "a1"}));
  view.Rollback(mark);
  // 6 × 4 GPUs fit no rack: r1 (16 free) and r4 (8 free), two racks rather than four.
  auto two_racks = PlaceGang(view, Spec(JobBuilder("b").Gpus(4).Tasks(6).Topology(Topology::kZone)));
  ASSERT_TRUE(two_racks.has_value());
  EXPECT_EQ(NodesOf(*two_racks), (std::vector<std::string>{"a0", "a0", "a1", "a1", "d4", "d4"}));
}

TEST_F(GangTest, NeverFitsNamesTheConstraintAndTheLargestDomain) {
  c_.AddNodes("n", 2, "z", "r1", 64, 512, testing::kH100, 8);
  c_.AddNodes("n", 1, "z", "r2", 64, 512, testing::kH100, 8);
  struct Case {
    JobBuilder job;
    const char* want;
  };
  const Case cases[] = {
      // 2 × 8 = 16 in one NVLink domain; each node is its own domain of 8.
      {JobBuilder("a").Gpus(8).Tasks(2).Topology(kNvlink),
       "needs 16 gpu/H100-80GB GPUs in one NVLink domain; the largest has 8"},
      // 3 × 8 = 24 in one rack; r1 has 2 × 8 = 16.
      {JobBuilder("b").Gpus(8).Tasks(3).Topology(kRack), "needs 24 gpu/H100-80GB GPUs in one rack; the largest has 16"},
      // 4 × 8 = 32 anywhere; the fleet has 3 × 8 = 24.
      {JobBuilder("c").Gpus(8).Tasks(4), "needs 32 gpu/H100-80GB GPUs in the fleet; the largest has 24"},
      // One task larger than any node.
      {JobBuilder("d").Gpus(16), "a task needs 16 gpu/H100-80GB GPUs, 0 CPUs and 0Mi on one node; no node in the fleet is that large"},
      {JobBuilder("e").Gpus(1).Cpus(65), "a task needs 1 gpu/H100-80GB GPUs, 65 CPUs and 0Mi on one node; no node in the fleet is that large"},
      {JobBuilder("f").Gpus(8).Tasks(3).Topology(Topology::kZone), "(fits)"},
      {JobBuilder("g").Gpus(8).Tasks(3), "(fits)"},
  };
  for (const Case& k : cases) EXPECT_EQ(Never(k.job), k.want);
}

TEST_F(GangTest, NeverFitsWhenNoNodeHasTheGpuModel) {
  c_.AddNodes("n", 1, "z", "r", 64, 512, testing::kH100, 8);
  ResourceNames names = c_.state.resource_names();
  JobSpec spec = Spec(JobBuilder("a").Gpus(1));
  spec.gpu_resource = names.Intern("gpu/A100-40GB");
  EXPECT_EQ(NeverFits(fleet(), spec, names).value_or("(fits)"), "no node has GPU model gpu/A100-40GB");
}

TEST_F(GangTest, ExplainNoFitSaysWhatIsFreeNow) {
  c_.AddNodes("n", 2, "z", "r", 64, 512, testing::kH100, 8);
  FleetView view(fleet());
  Hold(view, "n0", 4);
  Hold(view, "n1", 4);
  const ResourceNames& names = c_.state.resource_names();
  EXPECT_EQ(ExplainNoFit(view, Spec(JobBuilder("a").Gpus(8).Topology(kNvlink)), names),
            "needs 8 gpu/H100-80GB GPUs in one NVLink domain; largest free block is 4");
  EXPECT_EQ(ExplainNoFit(view, Spec(JobBuilder("b").Gpus(4).Tasks(3)), names),
            "needs 12 gpu/H100-80GB GPUs; 8 free in the fleet");
  EXPECT_EQ(ExplainNoFit(view, Spec(JobBuilder("c").Gpus(6)), names),
            "needs 6 gpu/H100-80GB GPUs (6 on one node); largest free block on a node is 4");
}


// FreedSinceTry (the backfill walk's incremental form) answers as MayFitAfterFreeing over
// everything given back since the last try, for every kind of gang, with and without node
// labels, on random walks that only give back.
TEST_F(GangTest, FreedSinceTryAnswersAsMayFitAfterFreeingOverEverythingSinceTheLastTry) {
  // Two zones of two racks of three nodes; every other node labelled driver=550.
  const NodeLabels labelled = {{"driver", "550"}};
  for (const char* zone : {"z1", "z2"}) {
    for (const char* rack : {"a", "b"}) {
      std::string r = std::string(zone) + rack;
      c_.AddNodes("n", 1, zone, r, 64, 512, testing::kH100, 8, "", labelled);
      c_.AddNodes("n", 1, zone, r, 64, 512, testing::kH100, 8);
      c_.AddNodes("n", 1, zone, r, 64, 512, testing::kH100, 8, "", labelled);
    }
  }
  const std::vector<JobBuilder> gangs = {
      JobBuilder("one4").Gpus(4),
      JobBuilder("one8").Gpus(8).Cpus(40),
      JobBuilder("rack3x8").Gpus(8).Tasks(3).Topology(kRack),
      JobBuilder("rack2x4").Gpus(4).Tasks(2).Topology(kRack),
      JobBuilder("zone5x8").Gpus(8).Tasks(5).Topology(Topology::kZone),
      JobBuilder("any4x8").Gpus(8).Tasks(4),
      JobBuilder("cpu").Cpus(8).Tasks(2),
      JobBuilder("one8-labelled").Gpus(8).Require("driver>=550"),
      JobBuilder("rack2x8-labelled").Gpus(8).Tasks(2).Topology(kRack).Require("driver>=550"),
      JobBuilder("any3x8-labelled").Gpus(8).Tasks(3).Require("driver>=550"),
  };
  std::mt19937 rng(7);
  int yes = 0, no = 0;
  for (int round = 0; round < 60; ++round) {
    for (const JobBuilder& b : gangs) {
      JobSpec spec = Spec(b);
      FleetView view(fleet());
      // Everything held, as small tasks of 1–4 GPUs with some CPU and memory.
      std::vector<TaskPlacement> held;
      for (const auto& n : fleet().nodes()) {
        int gpu = 0;
        while (gpu < 8) {
          int k = std::min(8 - gpu, 1 + static_cast<int>(rng() % 4));
          TaskPlacement p{n.id, ((1ULL << k) - 1) << gpu, 4 * kMilli, 16 * testing::kGiB};
          view.Take(p);
          held.push_back(p);
          gpu += k;
        }
      }
      std::shuffle(held.begin(), held.end(), rng);
      FreedSinceTry watch(view, spec);
      std::vector<TaskPlacement> since;  // given back since the last try
      for (const TaskPlacement& p : held) {
        view.Give(p);
        watch.Add(p);
        since.push_back(p);
        if (rng() % 3 != 0) continue;  // ask after some batches only
        bool want = MayFitAfterFreeing(view, spec, since);
        ASSERT_EQ(watch.MayFit(), want) << spec.name << " round " << round << " after " << since.size();
        (want ? yes : no) += 1;
        if (want || rng() % 8 == 0) {  // a try (also, now and then, one the filter did not ask for)
          watch.Tried();
          since.clear();
        }
      }
    }
  }
  EXPECT_GT(yes, 100);
  EXPECT_GT(no, 100);
}


// FleetView::DomainRoom, read from the fleet's count of nodes by free GPUs and the view's
// changes to it, equals the walk over the domain's nodes: through takes, gives, rollbacks and
// a cordoned node, for racks and zones and every task size.
TEST_F(GangTest, DomainRoomEqualsTheWalkOverTheDomainsNodes) {
  TwoZonesOfThreeRacks();
  c_.Apply(NodeConditionChanged{Node("n5"), NodeCondition::kCordoned});
  const ResourceId res = c_.Res("gpu/H100-80GB");
  std::mt19937 rng(11);
  FleetView view(fleet());
  std::vector<std::pair<TaskPlacement, bool>> done;  // (placement, taken)
  auto check = [&](int step) {
    for (DomainKind kind : {DomainKind::kRack, DomainKind::kZone}) {
      for (uint32_t d = 0; d < fleet().domains(kind).size(); ++d) {
        for (int size = 1; size <= 8; ++size) {
          int64_t walk = 0;
          for (NodeId id : fleet().domains(kind)[d].nodes) {
            const auto& n = fleet().node(id);
            if (n.schedulable() && !n.shared() && n.gpu_resource == res) walk += view.Free(id).gpus() / size;
          }
          ASSERT_EQ(view.DomainRoom(kind, d, res, size), walk) << "step " << step << " domain " << d << " size " << size;
        }
      }
    }
  };
  check(-1);
  for (int step = 0; step < 300; ++step) {
    size_t mark = view.Mark();
    for (int k = 0; k < 5; ++k) FlipRandomGpu(view, rng);
    check(step);
    if (rng() % 3 == 0) {
      view.Rollback(mark);
      check(step);
    }
  }
}

// BestFit (which skips a bucket its counts say is empty, in the fleet or in the view) answers as
// the walk over every node does, on random takes, gives and rollbacks over a fleet whose own
// jobs already hold GPUs, with a cordoned node.
TEST_F(GangTest, BestFitEqualsTheWalkOverTheNodes) {
  TwoZonesOfThreeRacks();
  for (int i = 0; i < 10; ++i) c_.Submit(JobBuilder("running" + std::to_string(i)).Tenant("default").Gpus(1 + i % 8));
  c_.RunPass(0);
  ASSERT_EQ(c_.Running().size(), 10u);
  c_.Apply(NodeConditionChanged{Node("n5"), NodeCondition::kCordoned});
  const ResourceId res = c_.Res("gpu/H100-80GB");
  int found = 0, none = 0;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    FleetView view(fleet());
    auto check = [&](int step) {
      for (int k = 1; k <= 9; ++k) {
        NodeId walk;  // the fewest free GPUs that still hold k, then the lowest id
        for (const auto& n : fleet().nodes()) {
          if (!n.schedulable() || n.shared() || n.gpu_resource != res) continue;
          int free = view.Free(n.id).gpus();
          if (free >= k && (!walk.valid() || free < view.Free(walk).gpus())) walk = n.id;
        }
        ASSERT_EQ(view.BestFit(res, k, 0, 0), walk) << "seed " << seed << " step " << step << " gpus " << k;
        (walk.valid() ? found : none) += 1;
      }
    };
    check(-1);
    for (int step = 0; step < 400; ++step) {
      size_t mark = view.Mark();
      for (int t = 0; t < 6; ++t) {
        FlipRandomGpu(view, rng, 4);  // mostly takes: the fleet fills up and whole buckets empty
        check(step);
      }
      if (rng() % 4 == 0) {
        view.Rollback(mark);
        check(step);
      }
    }
  }
  EXPECT_GT(found, 4000);
  EXPECT_GT(none, 4000);
}

// MayFitWithFreed is a necessary condition: whenever it says no, the gang does not fit with
// every freed task given back; it answers as the room test on the view with them given back;
// and it says no on random states often enough to matter.
TEST_F(GangTest, MayFitWithFreedSaysNoOnlyWhereTheGangCannotFit) {
  TwoZonesOfThreeRacks();
  const std::vector<JobBuilder> gangs = {
      JobBuilder("rack4x8").Gpus(8).Tasks(4).Topology(kRack),
      JobBuilder("rack3x4").Gpus(4).Tasks(3).Topology(kRack),
      JobBuilder("zone6x8").Gpus(8).Tasks(6).Topology(Topology::kZone),
      JobBuilder("zone5x2").Gpus(2).Tasks(5).Topology(Topology::kZone),
  };
  std::mt19937 rng(5);
  int no = 0, yes = 0;
  for (int round = 0; round < 200; ++round) {
    FleetView view(fleet());
    // Every node mostly held, as tasks of 1-4 GPUs (some GPUs left free).
    std::vector<std::vector<TaskPlacement>> held;
    for (const auto& n : fleet().nodes()) {
      int gpu = 0;
      while (gpu < 8) {
        int k = std::min(8 - gpu, 1 + static_cast<int>(rng() % 4));
        if (rng() % 5 != 0) {
          TaskPlacement p{n.id, ((1ULL << k) - 1) << gpu, 0, 0};
          view.Take(p);
          held.push_back({p});
        }
        gpu += k;
      }
    }
    std::shuffle(held.begin(), held.end(), rng);
    std::vector<const std::vector<TaskPlacement>*> freed;
    for (size_t i = 0; i < held.size() && i < rng() % 24; ++i) freed.push_back(&held[i]);
    for (const JobBuilder& b : gangs) {
      JobSpec spec = Spec(b);
      bool may = MayFitWithFreed(view, spec, freed);
      (may ? yes : no) += 1;
      size_t mark = view.Mark();
      for (const auto* tasks : freed) {
        for (const TaskPlacement& p : *tasks) view.Give(p);
      }
      // Exactly the room test on the view with every freed task given back: a domain with the
      // gang's GPUs free and room for its tasks (one group of `count` tasks of `gpus`).
      const TaskGroup& g = spec.groups.front();
      const DomainKind kind = spec.topology == kRack ? DomainKind::kRack : DomainKind::kZone;
      bool room = false;
      for (uint32_t d = 0; d < fleet().domains(kind).size(); ++d) {
        room |= view.DomainFreeGpus(kind, d, spec.gpu_resource) >= int64_t{g.count} * g.gpus() &&
                view.DomainRoom(kind, d, spec.gpu_resource, g.gpus()) >= g.count;
      }
      EXPECT_EQ(may, room) << spec.name << " round " << round;
      if (!may) {
        EXPECT_FALSE(PlaceGang(view, spec).has_value()) << spec.name << " round " << round;
      }
      view.Rollback(mark);
    }
  }
  EXPECT_GT(no, 100);
  EXPECT_GT(yes, 50);
}

}  // namespace
}  // namespace allot
