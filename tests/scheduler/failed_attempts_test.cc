// The memo of failed attempts across passes (scheduler/failed_attempts.h): a pass that skips
// the gangs it remembers to fail plans exactly what a pass that tries them plans, and it skips
// them only until GPUs come back where they could use them.
#include "scheduler/failed_attempts.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

#include <random>

#include "scheduler/scheduler.h"
#include "state/event_codec.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

// A reason with its figures left out. A gang the memo settles at once is given its reason as
// the pass stands when its band starts (its shape's, or its tenant's quota), where the pass
// that tries it counts the free block or the quota in use when its turn comes: the same
// reason at another moment of the same pass (docs/architecture.md, "The pass").
std::string WithoutFigures(const std::string& why) {
  static const std::regex figure("[0-9]+");
  return std::regex_replace(why, figure, "#");
}

// The plan's events, as bytes, in order, then each pending job's reason, by job (a pass
// that settles a remembered run at once lists its jobs earlier).
std::string PlanBytes(const Plan& plan) {
  std::string out;
  for (const Event& e : plan.ToEvents()) out += EncodeEvent(e) + '|';
  out += "\npending:";
  std::map<uint32_t, std::string> reasons;
  for (const PendingReason& p : plan.pending) {
    EXPECT_TRUE(reasons.emplace(p.job.value(), WithoutFigures(plan.Why(p))).second) << "job " << p.job.value() << " pending twice";
  }
  for (const auto& [job, why] : reasons) out += std::to_string(job) + "=" + why + '|';
  return out;
}

// Two zones of three racks of four 8-GPU nodes: a rack gang of 4 x 8 GPUs needs a whole rack,
// a zone gang of 8 x 8 two thirds of a zone.
Cluster TwoZones() {
  Cluster c;
  for (int z = 0; z < 2; ++z) {
    for (int r = 0; r < 3; ++r) {
      std::string rack = "z" + std::to_string(z) + "r" + std::to_string(r);
      c.AddNodes(rack + "n", 4, "z" + std::to_string(z), rack, 96, 1024, "H100-80GB", 8);
    }
  }
  return c;
}

// A pass with the memo and one without at `now`: the same plan (PlanBytes). The plan without
// it, applied to the state when `apply`.
Plan PlanBoth(Cluster& c, FailedAttempts& memo, int64_t now, bool apply) {
  Plan with = PlanPass(c.state, now, c.config, &memo);
  Plan without = PlanPass(c.state, now, c.config);
  EXPECT_EQ(PlanBytes(with), PlanBytes(without)) << "at " << now;
  if (apply) {
    for (const Event& e : without.ToEvents()) EXPECT_TRUE(c.state.apply(e).ok());
  }
  return without;
}

TEST(FailedAttemptsTest, PlansAsThePassThatTriesEveryGangOnRandomStates) {
  int64_t hits = 0;
  int64_t settled = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    Cluster c = TwoZones();
    const char* gpu = "gpu/H100-80GB";
    std::vector<std::string> teams;
    for (int o = 0; o < 2; ++o) {
      std::string org = "org" + std::to_string(o);
      const bool guaranteed = pick(2);
      if (guaranteed) {
        c.Tenant(org, {{gpu, std::to_string(48 + 8 * pick(4))}}, {{gpu, std::to_string(96 + 16 * pick(4))}});
      } else {
        c.Tenant(org);
      }
      for (int t = 0; t < 3; ++t) {
        std::string team = org + "/t" + std::to_string(t);
        switch (pick(3)) {
          case 0: c.Tenant(team); break;
          case 1:
            if (guaranteed) {
              c.Tenant(team, {{gpu, std::to_string(8 * pick(3))}});
              break;
            }
            [[fallthrough]];
          default: c.Tenant(team, {}, {{gpu, std::to_string(32 + 16 * pick(3))}}); break;
        }
        teams.push_back(team);
      }
    }
    c.config.max_victims = 1 + pick(8);
    c.config.fair_share_preemption = pick(4) == 0;
    FailedAttempts memo;
    int next = 0;
    for (int step = 0; step < 24; ++step) {
      const int64_t now = step * 60000;
      for (int i = pick(6); i > 0; --i) {
        JobBuilder b("j" + std::to_string(next++));
        const int shape = pick(8);
        b.Tenant(teams[pick(static_cast<int>(teams.size()))]).Cpus(4).MemGi(16);
        if (shape < 4) {
          b.Gpus(1 << shape);
        } else if (shape < 6) {
          b.Gpus(8).Tasks(4).Topology(Topology::kRack);
        } else if (shape == 6) {
          b.Gpus(8).Tasks(8).Topology(Topology::kZone);
        } else {
          b.Gpus(4).Tasks(1 + pick(3)).Topology(pick(2) ? Topology::kRack : Topology::kZone);
        }
        const int p = pick(4);
        b.Priority(p == 0 ? kPriorityHigh : p == 1 ? kPriorityLow : kPriorityNormal).At(now).Duration(3600000).Grace(30000);
        c.Submit(b);
      }
      Plan remembered = PlanPass(c.state, now, c.config, &memo);
      Plan tried = PlanPass(c.state, now, c.config);
      ASSERT_EQ(PlanBytes(remembered), PlanBytes(tried)) << "step " << step;
      for (const Event& e : tried.ToEvents()) ASSERT_TRUE(c.state.apply(e).ok());
      // Between passes: victims exit, a few jobs end or are cancelled, now and then a node
      // changes (the memo then forgets everything); some steps change nothing.
      if (pick(3) == 0) continue;
      for (JobId id : std::vector<JobId>(c.state.preempting().begin(), c.state.preempting().end())) {
        if (pick(2)) c.Apply(JobStopped{id, 0}, now + 1);
      }
      for (JobId id : std::vector<JobId>(c.state.active().begin(), c.state.active().end())) {
        if (c.state.job(id).state == JobState::kRunning && pick(10) == 0) c.Apply(JobFinished{id}, now + 2);
      }
      for (JobId id : std::vector<JobId>(c.state.pending().begin(), c.state.pending().end())) {
        if (pick(40) == 0) c.Apply(JobCancelled{id}, now + 3);
      }
      if (pick(8) == 0) {
        NodeId n(static_cast<uint32_t>(pick(static_cast<int>(c.state.fleet().size()))));
        const bool ready = c.state.fleet().node(n).schedulable();
        c.Apply(NodeConditionChanged{n, ready ? NodeCondition::kCordoned : NodeCondition::kReady}, now + 4);
      }
    }
    hits += memo.hits();
    settled += memo.runs_settled();
  }
  EXPECT_GT(hits, 200) << "the random states must exercise the memo (attempts skipped)";
  EXPECT_GT(settled, 50) << "and settle remembered runs without the queue";
}

// org/a holds a guaranteed 4-GPU job on every node of every rack (a0, a1, …; 64 of its 96
// CPUs: one a node); org/b's rack gang "gang" (a whole rack, burstable), submitted after, can
// never take their GPUs.
Cluster RackGangBehindGuarantees() {
  Cluster c = TwoZones();
  const char* gpu = "gpu/H100-80GB";
  c.Tenant("org", {{gpu, "96"}});
  c.Tenant("org/a", {{gpu, "96"}});
  c.Tenant("org/b");
  const int nodes = static_cast<int>(c.state.fleet().size());
  for (int i = 0; i < nodes; ++i) c.Submit(JobBuilder("a" + std::to_string(i)).Tenant("org/a").Gpus(4).Cpus(64).At(0).Duration(3600000));
  c.RunPass(0);
  c.Submit(JobBuilder("gang").Tenant("org/b").Gpus(8).Tasks(4).Topology(Topology::kRack).At(1000).Duration(3600000));
  return c;
}

// The gang behind the guarantees is remembered to fail and skipped.
TEST(FailedAttemptsTest, SkipsARackGangUntilItsRackCouldHoldIt) {
  Cluster c = RackGangBehindGuarantees();
  FailedAttempts memo;
  auto pass = [&](int64_t now) { return PlanBoth(c, memo, now, /*apply=*/false); };
  pass(2000);
  EXPECT_EQ(memo.remembered(), 1);
  EXPECT_EQ(memo.hits(), 0);
  pass(3000);
  EXPECT_EQ(memo.hits(), 1) << "nothing came back: the attempt is skipped";
  // One 4-GPU job of rack z0r0 ends: that rack could now hold 16 + 4 of 32: still short.
  c.Apply(JobFinished{c.Id("a0")}, 4000);
  pass(5000);
  EXPECT_EQ(memo.hits(), 2);
  EXPECT_EQ(memo.remembered(), 1);
  // The rest of rack z0r0 ends: 32 GPUs could be free there; the gang is tried and placed.
  for (int i = 1; i < 4; ++i) c.Apply(JobFinished{c.Id("a" + std::to_string(i))}, 6000);
  Plan placed = pass(7000);
  EXPECT_EQ(memo.hits(), 2) << "GPUs came back in a rack it could use: tried again";
  ASSERT_EQ(placed.placements.size(), 1u);
  EXPECT_EQ(placed.placements[0].job, c.Id("gang"));
}

// A burstable rack gang placed earlier in the same pass is not a victim yet (the state does not
// run it) but is one from the next pass on: a gang that fails beside it is not remembered when
// its fair share could take it then.
TEST(FailedAttemptsTest, ABurstableJobPlacedEarlierInThePassCountsAsAVictimToCome) {
  Cluster c = TwoZones();
  const char* gpu = "gpu/H100-80GB";
  c.config.fair_share_preemption = true;
  c.config.fair_share_threshold_milli = 0;
  c.Tenant("a", {{gpu, "160"}});
  c.Tenant("b");
  // a's guarantee fills five racks; rack z1r2 stays free.
  for (int i = 0; i < 20; ++i) c.Submit(JobBuilder("a" + std::to_string(i)).Tenant("a").Gpus(8).At(0).Duration(3600000));
  c.RunPass(0);
  c.Submit(JobBuilder("first").Tenant("a").Gpus(8).Tasks(4).Topology(Topology::kRack).Priority(kPriorityHigh).At(1000).Duration(3600000));
  c.Submit(JobBuilder("second").Tenant("b").Gpus(8).Tasks(4).Topology(Topology::kRack).At(1000).Duration(3600000));
  FailedAttempts memo;
  auto pass = [&](int64_t now) { return PlanBoth(c, memo, now, /*apply=*/true); };
  // "first" (burstable: past a's guarantee) takes rack z1r2; "second" finds no rack and no
  // running victim.
  Plan placed = pass(2000);
  ASSERT_EQ(placed.placements.size(), 1u);
  EXPECT_EQ(placed.placements[0].job, c.Id("first"));
  EXPECT_EQ(memo.remembered(), 0) << "first's rack could be second's once first runs";
  // Now a's share (all 192 GPUs) is far above b's: second's fair share takes first.
  Plan preempts = pass(3000);
  ASSERT_EQ(preempts.preemptions.size(), 1u);
  EXPECT_EQ(preempts.preemptions[0].victim, c.Id("first"));
  EXPECT_EQ(preempts.preemptions[0].preemptor, c.Id("second"));
}

// Three gangs behind the guarantees are remembered; cancelling one (one in the middle, then
// the last) forgets it alone: the others are still skipped, and the plans stay the same.
TEST(FailedAttemptsTest, AGangForgottenAmongOthersLeavesTheOthersRemembered) {
  Cluster c = RackGangBehindGuarantees();
  // Other priorities: groups of their own, each tried (a group's other jobs are settled with
  // its first, not remembered one by one).
  const int32_t priorities[] = {kPriorityHigh, kPriorityLow};
  for (int i = 1; i < 3; ++i) {
    c.Submit(JobBuilder("gang" + std::to_string(i)).Tenant("org/b").Gpus(8).Tasks(4).Topology(Topology::kRack)
                 .Priority(priorities[i - 1]).At(1000).Duration(3600000));
  }
  FailedAttempts memo;
  auto pass = [&](int64_t now) { return PlanBoth(c, memo, now, /*apply=*/false); };
  auto remembered = [&](const std::string& name) {
    const Job& j = c.state.job(c.Id(name));
    return memo.Fails(j.id, /*with_burstable=*/false);
  };
  pass(2000);
  ASSERT_EQ(memo.size(), 3u);
  c.Apply(JobCancelled{c.Id("gang")}, 2500);
  pass(3000);
  EXPECT_EQ(memo.size(), 2u);
  EXPECT_FALSE(remembered("gang"));
  EXPECT_TRUE(remembered("gang1"));
  EXPECT_TRUE(remembered("gang2"));
  EXPECT_EQ(memo.hits(), 2) << "the two left are skipped";
  c.Apply(JobCancelled{c.Id("gang2")}, 3500);
  pass(4000);
  EXPECT_EQ(memo.size(), 1u);
  EXPECT_TRUE(remembered("gang1"));
  EXPECT_FALSE(remembered("gang2"));
  EXPECT_EQ(memo.hits(), 3);
}

// b's high-priority rack gang finds no rack and no candidate of its own; then b's two
// guaranteed low-priority jobs start on half of the rack that came free: the next pass must
// count them as its victims (a count of its candidates kept from before they ran would say the
// gang cannot fit, and preempt nothing).
TEST(FailedAttemptsTest, APriorityPreemptionsCandidatesAreCountedAnewWhenTheTenantsRunningJobsChange) {
  Cluster c = TwoZones();
  const char* gpu = "gpu/H100-80GB";
  c.Tenant("a", {{gpu, "160"}});
  c.Tenant("b", {{gpu, "16"}});
  c.Tenant("c");
  for (int i = 0; i < 20; ++i) c.Submit(JobBuilder("a" + std::to_string(i)).Tenant("a").Gpus(8).At(0).Duration(3600000));
  c.Submit(JobBuilder("rack").Tenant("c").Gpus(8).Tasks(4).Topology(Topology::kRack).At(0).Duration(3600000));
  c.RunPass(0);
  ASSERT_EQ(c.state.job(c.Id("rack")).state, JobState::kRunning);
  c.Submit(JobBuilder("gang").Tenant("b").Gpus(8).Tasks(4).Topology(Topology::kRack).Priority(kPriorityHigh).At(1000).Duration(3600000));
  FailedAttempts memo;
  auto pass = [&](int64_t now) { return PlanBoth(c, memo, now, /*apply=*/true); };
  EXPECT_TRUE(pass(2000).placements.empty());
  // c's rack ends; b's low-priority jobs (within its guarantee: the first band) take half of it,
  // and the gang (past the guarantee) finds only half a rack.
  c.Apply(JobFinished{c.Id("rack")}, 2500);
  for (int i = 0; i < 2; ++i) c.Submit(JobBuilder("low" + std::to_string(i)).Tenant("b").Gpus(8).Priority(kPriorityLow).At(2500).Duration(3600000));
  Plan lows = pass(3000);
  ASSERT_EQ(lows.placements.size(), 2u);
  EXPECT_TRUE(lows.preemptions.empty());
  Plan preempts = pass(4000);
  ASSERT_EQ(preempts.preemptions.size(), 2u) << "the gang takes the rack from b's own low-priority jobs";
  EXPECT_EQ(preempts.preemptions[0].preemptor, c.Id("gang"));
  EXPECT_EQ(preempts.preemptions[0].kind, PreemptKind::kPriority);
}

TEST(FailedAttemptsTest, ForgetsEverythingWhenTheFleetChanges) {
  Cluster c = RackGangBehindGuarantees();
  FailedAttempts memo;
  PlanPass(c.state, 2000, c.config, &memo);
  ASSERT_EQ(memo.size(), 1u);
  c.Apply(NodeConditionChanged{NodeId(0), NodeCondition::kCordoned}, 2500);
  PlanPass(c.state, 3000, c.config, &memo);
  EXPECT_EQ(memo.hits(), 0) << "a node changed: the attempt is made again";
  EXPECT_EQ(memo.remembered(), 2);
}

}  // namespace
}  // namespace allot
