// A tenant's running GPUs by priority and model, per rack and zone (ClusterState::running_gpus):
// what its priority preemption could ever free, kept by placements, preemption signals and
// releases, and rebuilt on restore (the scheduler reads it instead of walking the jobs).
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

// GPUs at (priority, rack) for tenant `t` of model `res`, or 0.
int64_t At(const ClusterState& s, TenantId t, int32_t priority, ResourceId res, uint32_t rack) {
  for (const ClusterState::RunningGpus& l : s.running_gpus(t)) {
    if (l.priority == priority && l.res == res) return rack < l.by_domain[0].size() ? l.by_domain[0][rack] : 0;
  }
  return 0;
}

TEST(RunningGpusTest, FollowPlacementsSignalsAndReleasesByPriorityAndRackAndComeBackOnRestore) {
  Cluster c;
  c.AddNodes("a", 2, "z0", "r0", 96, 1024, "H100-80GB", 8);
  c.AddNodes("b", 2, "z1", "r1", 96, 1024, "H100-80GB", 8);
  const TenantId t = c.Tenant("t");
  const ResourceId h100 = c.state.resource_names().Find("gpu/H100-80GB");
  c.Submit(JobBuilder("low").Tenant("t").Gpus(8).Tasks(2).Topology(Topology::kRack).Priority(kPriorityLow).At(0).Duration(3600000));
  c.Submit(JobBuilder("normal").Tenant("t").Gpus(4).At(0).Duration(3600000));
  c.Submit(JobBuilder("high").Tenant("t").Gpus(2).Priority(kPriorityHigh).At(0).Duration(3600000));
  c.RunPass(1000);
  ASSERT_EQ(c.StateOf("low"), JobState::kRunning);
  ASSERT_EQ(c.StateOf("normal"), JobState::kRunning);
  ASSERT_EQ(c.StateOf("high"), JobState::kRunning);
  // Lowest priority first, one level per priority.
  const auto& levels = c.state.running_gpus(t);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_LT(levels[0].priority, levels[1].priority);
  EXPECT_LT(levels[1].priority, levels[2].priority);
  const uint32_t low_rack = c.state.fleet().node(c.job("low").placement[0].node).rack;
  EXPECT_EQ(At(c.state, t, kPriorityLow, h100, low_rack), 16) << "a rack gang's two tasks in one rack";
  int64_t all = 0;
  for (const auto& l : levels) {
    for (int64_t g : l.by_domain[0]) all += g;
  }
  EXPECT_EQ(all, 16 + 4 + 2);

  // A signalled victim is no longer running: its GPUs leave its level, and stay out when it
  // exits; a finished job's leave too.
  c.Apply(JobPreemptionStarted{c.Id("low"), PreemptKind::kPriority, c.Id("high"), 62000}, 2000);
  EXPECT_EQ(At(c.state, t, kPriorityLow, h100, low_rack), 0);
  EXPECT_TRUE(c.state.VerifyInvariants().ok()) << c.state.VerifyInvariants().message();
  c.Stop("low", 3000);
  EXPECT_EQ(At(c.state, t, kPriorityLow, h100, low_rack), 0);
  c.Finish("high", 4000);
  const uint32_t normal_rack = c.state.fleet().node(c.job("normal").placement[0].node).rack;
  EXPECT_EQ(At(c.state, t, kPriorityNormal, h100, normal_rack), 4);
  EXPECT_TRUE(c.state.VerifyInvariants().ok()) << c.state.VerifyInvariants().message();

  // Placed again, then restored from a snapshot: the counts are rebuilt, equal.
  c.RunPass(5000);
  ASSERT_EQ(c.StateOf("low"), JobState::kRunning);
  ClusterState restored;
  ASSERT_TRUE(RestoreSnapshot(EncodeSnapshot(c.state), restored).ok());
  // (A level whose jobs all left stays, at zero, in the live state; a restore makes none.)
  for (int32_t p : {kPriorityLow, kPriorityNormal, kPriorityHigh}) {
    for (uint32_t r = 0; r < 2; ++r) EXPECT_EQ(At(restored, t, p, h100, r), At(c.state, t, p, h100, r)) << p << " " << r;
  }
  EXPECT_TRUE(restored.VerifyInvariants().ok()) << restored.VerifyInvariants().message();
}

}  // namespace
}  // namespace allot
