// MIG placement and demand-driven re-layout under a random workload: every layout the
// scheduler ever produces is checked against the brute-force oracle, no held instance ever
// moves or disappears, and no GPU is re-laid out twice within the hold time.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/rng.h"
#include "testing/builders.h"
#include "testing/mig_oracle.h"

namespace allot {
namespace {

using testing::Cluster;

struct Model {
  const char* name;
  const testing::Oracle* oracle;
};

void RunRandomMigWorkload(const Model& model, uint64_t seed, int* relayouts_seen, int* placements_seen) {
  Cluster c;
  c.config.mig_relayout_delay_ms = 20'000;
  c.config.mig_relayout_hold_ms = 120'000;
  for (int i = 0; i < 3; ++i) {
    NodeSpec spec{"mig-" + std::to_string(i), "z", "r", "", 64'000, 512 * 1024, model.name, 4};
    spec.sharing = Sharing::kMig;
    c.Apply(NodeAdded{spec});
  }
  c.Tenant("t");
  const MigGeometry& geo = *FindMigGeometry(model.name);
  Rng rng(seed);
  int next = 0;
  std::map<std::pair<uint32_t, int>, int64_t> last_relayout;  // (node, gpu) → time
  for (int step = 0; step < 300; ++step) {
    int64_t now = step * 10'000;
    // Arrivals: 0–2 jobs of 1–3 tasks of a random profile (media-extension ones included).
    for (uint64_t a = rng.Below(3); a > 0; --a) {
      JobSpec spec;
      spec.name = "j" + std::to_string(next++);
      spec.tenant = c.state.tenants().Find("t");
      spec.gpu_resource = c.Res(std::string("gpu/") + model.name);
      spec.duration_ms = 1;
      TaskGroup g;
      g.count = 1 + static_cast<int>(rng.Below(3));
      g.share = ShareKind::kMig;
      g.mig_profile = static_cast<uint8_t>(rng.Below(geo.profiles.size()));
      g.cpu = 1000;
      spec.groups = {g};
      c.Apply(JobSubmitted{spec}, now);
    }
    // Exits: each running job ends with probability 1/5.
    for (const std::string& name : c.Running()) {
      if (rng.Below(5) == 0) c.Finish(name, now);
    }
    // What is held before the pass must be held, in place, after it.
    std::set<std::tuple<uint32_t, int, MigInstance>> held_before;
    std::map<std::pair<uint32_t, int>, int64_t> ready_before;
    for (const Node& n : c.state.fleet().nodes()) {
      for (int g = 0; g < n.gpu_count; ++g) {
        ready_before[{n.id.value(), g}] = c.state.fleet().shares(n.id)[g].ready_ms;
        for (const MigSlot& s : c.state.fleet().shares(n.id)[g].mig) {
          if (s.held) held_before.insert({n.id.value(), g, s.instance});
        }
      }
    }
    Plan plan = c.RunPass(now);
    *placements_seen += static_cast<int>(plan.placements.size());
    for (const MigRelayout& r : plan.relayouts) {
      ++*relayouts_seen;
      auto key = std::make_pair(r.node.value(), r.gpu);
      auto it = last_relayout.find(key);
      if (it != last_relayout.end()) {
        EXPECT_GE(now - it->second, c.config.mig_relayout_hold_ms) << "GPU re-laid out within the hold";
      }
      last_relayout[key] = now;
      EXPECT_EQ(r.ready_ms, now + c.config.mig_relayout_delay_ms);
    }
    for (const Node& n : c.state.fleet().nodes()) {
      for (int g = 0; g < n.gpu_count; ++g) {
        const GpuShareState& s = c.state.fleet().shares(n.id)[g];
        ASSERT_TRUE(model.oracle->Valid(testing::Named(geo, s.Layout())))
            << model.name << " " << n.name << " GPU " << g << " at step " << step;
      }
    }
    for (const auto& [node, g, inst] : held_before) {
      bool still = false;
      for (const MigSlot& s : c.state.fleet().shares(NodeId(node))[g].mig) still |= s.held && s.instance == inst;
      EXPECT_TRUE(still) << "a held instance moved or vanished at step " << step;
    }
    // No task is placed on a GPU still being laid out (its free instances may be re-laid out
    // in the same pass: the held ones, the new task's included, stay).
    for (const PlannedPlacement& p : plan.placements) {
      for (const TaskPlacement& t : p.tasks) EXPECT_LE((ready_before[{t.node.value(), t.gpu_index()}]), now);
    }
  }
}

TEST(MigRelayoutTest, RandomWorkloadKeepsEveryLayoutValidAndNeverDisturbsRunningInstances) {
  int relayouts = 0, placements = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    RunRandomMigWorkload({"H100-80GB", &testing::kH100Oracle}, seed, &relayouts, &placements);
    RunRandomMigWorkload({"A30-24GB", &testing::kA30Oracle}, seed, &relayouts, &placements);
  }
  // The workload exercised what it checks.
  EXPECT_GT(relayouts, 50);
  EXPECT_GT(placements, 500);
}

TEST(MigRelayoutTest, AReLaidOutGpuIsUnusableUntilReadyAndTheInstanceThenServesTheWaitingJob) {
  Cluster c;
  c.config.mig_relayout_delay_ms = 30'000;
  NodeSpec spec{"mig-0", "z", "r", "", 64'000, 512 * 1024, "H100-80GB", 1};
  spec.sharing = Sharing::kMig;
  spec.mig_layout = {"7g.80gb"};
  c.Apply(NodeAdded{spec});
  c.Tenant("t");
  const MigGeometry& geo = *FindMigGeometry("H100-80GB");
  JobSpec js;
  js.name = "small";
  js.tenant = c.state.tenants().Find("t");
  js.gpu_resource = c.Res("gpu/H100-80GB");
  js.duration_ms = 1;
  TaskGroup g;
  g.share = ShareKind::kMig;
  g.mig_profile = static_cast<uint8_t>(geo.Find("2g.20gb"));
  js.groups = {g};
  c.Apply(JobSubmitted{js}, 0);
  Plan p0 = c.RunPass(0);
  ASSERT_EQ(p0.relayouts.size(), 1u);
  EXPECT_TRUE(p0.placements.empty());
  EXPECT_EQ(testing::Named(geo, p0.relayouts[0].layout), (std::vector<std::pair<std::string, int>>{{"2g.20gb", 4}}))
      << "the free 7g.80gb goes; one 2g.20gb is created where it leaves the most choices";
  Plan p1 = c.RunPass(29'999);
  EXPECT_TRUE(p1.placements.empty()) << "not usable before ready";
  EXPECT_TRUE(p1.relayouts.empty()) << "not re-laid out again while being laid out";
  Plan p2 = c.RunPass(30'000);
  ASSERT_EQ(p2.placements.size(), 1u);
  EXPECT_EQ(p2.placements[0].tasks[0].share.mig, (MigInstance{g.mig_profile, 4}));
  EXPECT_FALSE(p2.placements[0].tasks[0].share.mig_created) << "the re-layout created it";
}

}  // namespace
}  // namespace allot
