// MPS shares are placed by the configured share scorer, planning for the MPS shapes submitted
// so far: where packing would take the busiest GPU and leave it too small for the common task,
// the fragmentation-aware `allot` policy keeps it usable.
#include <gtest/gtest.h>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;

JobSpec Mps(Cluster& c, const std::string& name, const std::string& tenant, int percent) {
  JobSpec s;
  s.name = name;
  s.tenant = c.state.tenants().Find(tenant);
  s.gpu_resource = c.Res("gpu/H100-80GB");
  s.duration_ms = 3600000;
  TaskGroup g;
  g.share = ShareKind::kMps;
  g.percent = static_cast<uint16_t>(percent);
  g.gpu_memory = 1024;
  s.groups = {g};
  return s;
}

// Two one-GPU MPS nodes holding 35% (m0) and 30% (m1); eight 60% tasks are waiting (blocked by
// quota); a 10% task arrives. Returns the node it lands on.
std::string PlaceSmallTask(const std::string& policy) {
  Cluster c;
  c.config.share_policy = policy;
  for (const char* name : {"m0", "m1"}) {
    NodeSpec n{name, "z", "r", "", 64000, 512 * 1024, "H100-80GB", 1};
    n.sharing = Sharing::kMps;
    c.Apply(NodeAdded{n});
  }
  c.Tenant("t");
  c.Tenant("big", {}, {{"gpu/H100-80GB", "0"}});
  for (auto [name, node, percent] : {std::tuple{"x", "m0", 35}, std::tuple{"y", "m1", 30}}) {
    c.Apply(JobSubmitted{Mps(c, name, "t", percent)});
    TaskShare share{ShareKind::kMps, {}, false, static_cast<uint16_t>(percent), 1024};
    c.Apply(JobPlaced{c.Id(name), AdmissionClass::kBurstable, {TaskPlacement{c.state.fleet().Find(node), 1, 0, 0, share}}});
  }
  for (int i = 0; i < 8; ++i) c.Apply(JobSubmitted{Mps(c, "big-" + std::to_string(i), "big", 60)});
  c.Apply(JobSubmitted{Mps(c, "small", "t", 10)});
  c.RunPass(0);
  const Job& small = c.job("small");
  EXPECT_EQ(small.state, JobState::kRunning) << policy;
  return small.placement.empty() ? "" : c.state.fleet().node(small.placement[0].node).name;
}

TEST(SharePolicyTest, FragmentationAwarePlacementKeepsGpusUsableForTheCommonShape) {
  // Packing takes the busiest GPU (m0: 35 + 10 leaves 55%, too little for a 60% task).
  EXPECT_EQ(PlaceSmallTask(""), "m0");
  // allot (and fgd) see that m0 would stop fitting the common 60% task; m1 keeps 60% free.
  EXPECT_EQ(PlaceSmallTask("allot"), "m1");
  EXPECT_EQ(PlaceSmallTask("fgd"), "m1");
}

// Two tenants' MPS clients on one GPU run in two servers, time-sliced against each other (on an
// H200 two 50% shares of different tenants made 10 TFLOP/s each at once, one alone 22), while one
// tenant's share a server. So a share goes first where no other tenant's clients are: b's lands
// on the idle GPU beside a's busy one, a's next beside a's first; with no other room, b's shares
// a's GPU. Under each policy.
TEST(SharePolicyTest, AnMpsShareAvoidsAnotherTenantsGpuWhileItsOwnOrAnIdleOneHasRoom) {
  for (const std::string policy : {"", "allot", "fgd"}) {
    for (int nodes : {2, 1}) {
      Cluster c;
      c.config.share_policy = policy;
      for (int i = 0; i < nodes; ++i) {
        NodeSpec n{"m" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 1};
        n.sharing = Sharing::kMps;
        c.Apply(NodeAdded{n});
      }
      c.Tenant("a");
      c.Tenant("b");
      c.Apply(JobSubmitted{Mps(c, "a1", "a", 30)});
      c.RunPass(0);
      c.Apply(JobSubmitted{Mps(c, "b1", "b", 30)});
      c.RunPass(1000);
      c.Apply(JobSubmitted{Mps(c, "a2", "a", 30)});
      c.RunPass(2000);
      auto node = [&](const std::string& job) {
        const Job& j = c.job(job);
        return j.placement.empty() ? std::string("-") : c.state.fleet().node(j.placement[0].node).name;
      };
      const std::string where = "policy '" + policy + "', " + std::to_string(nodes) + " node(s)";
      EXPECT_EQ(node("a1"), "m0") << where;
      EXPECT_EQ(node("b1"), nodes == 2 ? "m1" : "m0") << where;
      EXPECT_EQ(node("a2"), "m0") << where;
      const GpuShareState& m0 = c.state.fleet().shares(c.state.fleet().Find("m0"))[0];
      EXPECT_EQ(m0.mps_tenants.size(), nodes == 2 ? 1u : 2u) << where;
      EXPECT_TRUE(c.state.VerifyInvariants().ok()) << where;
    }
  }
}

}  // namespace
}  // namespace allot
