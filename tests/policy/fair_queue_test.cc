#include "policy/fair_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>

#include "testing/builders.h"

namespace allot {
namespace {

// Jobs of CPU only, on a fleet of 10 CPUs and 10 GiB.
class FairQueueTest : public ::testing::Test {
 protected:
  FairQueueTest() {
    capacity_[kCpu] = 10000;
    capacity_[kMemory] = 10 * 1024;
  }
  TenantId Upsert(const std::string& path, int64_t weight = kMilli) {
    return tree_.Upsert(testing::MakeTenantSpec(names_, path, {}, {}, weight), names_).value();
  }
  // A job of `cpus` CPUs; ids are dense in creation order.
  JobId AddJob(const std::string& tenant, int64_t submit_ms, int64_t cpus = 1) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(jobs_.size()));
    j.spec.name = tenant + "#" + std::to_string(jobs_.size());
    j.spec.tenant = tree_.Find(tenant);
    j.spec.submit_ms = submit_ms;
    j.queued_ms = submit_ms;
    j.demand = {kCpu, 0, cpus * kMilli, 0};
    jobs_.push_back(j);
    return j.id;
  }
  // Pops everything; when `fill`, each popped job's demand is added to usage before the next
  // pop, as the scheduling pass does after a placement.
  std::vector<std::string> Drain(bool fill) {
    UsageOverlay usage(tree_);
    FairQueue q(usage, capacity_, names_.size());
    for (const Job& j : jobs_) q.Push(j);
    std::vector<std::string> order;
    while (!q.empty()) {
      const Job& j = jobs_[q.Pop().value()];
      order.push_back(j.spec.name);
      if (fill) {
        usage.Add(j.spec.tenant, j.demand, false, +1);
        q.OnUsageChanged(j.spec.tenant);
      }
    }
    return order;
  }

  // A fresh tree and no jobs, for the next random case.
  void Reset() {
    tree_ = QuotaTree();
    jobs_.clear();
  }
  // rnd(n): a number in [0, n), the same sequence for the same seed.
  struct XorShift {
    uint64_t x;
    uint64_t operator()(uint64_t n) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x % n;
    }
  };

  // Three orgs of a random number of teams (up to `max_teams`); the tenants that hold jobs:
  // the teams, and the orgs too when `orgs_too`.
  std::vector<std::string> RandomTree(XorShift& rnd, int max_teams, bool orgs_too) {
    std::vector<std::string> tenants;
    for (int o = 0; o < 3; ++o) {
      std::string org = "o" + std::to_string(o);
      Upsert(org);
      if (orgs_too) tenants.push_back(org);
      const int teams = 1 + static_cast<int>(rnd(max_teams));  // drawn once, not at every step
      for (int t = 0; t < teams; ++t) {
        Upsert(org + "/t" + std::to_string(t));
        tenants.push_back(org + "/t" + std::to_string(t));
      }
    }
    return tenants;
  }

  ResourceNames names_;
  QuotaTree tree_;
  Resources capacity_;
  std::deque<Job> jobs_;
};

TEST_F(FairQueueTest, WithinATenantOrdersBySubmitTimeThenJobId) {
  Upsert("a");
  AddJob("a", 300);  // a#0
  AddJob("a", 100);  // a#1
  AddJob("a", 100);  // a#2: same time as a#1, higher id
  AddJob("a", 200);  // a#3
  EXPECT_EQ(Drain(/*fill=*/false), (std::vector<std::string>{"a#1", "a#2", "a#3", "a#0"}));
}

TEST_F(FairQueueTest, LowestShareGoesFirstThenEarliestHead) {
  // a already holds 2 CPUs (share 2/10), b and c hold none (0): b and c first, by head.
  TenantId a = Upsert("a");
  Upsert("b");
  Upsert("c");
  tree_.AddUsage(a, {kCpu, 0, 2000, 0}, false, +1);
  AddJob("a", 0);    // a#0: earliest, but a's share is highest
  AddJob("c", 50);   // c#1
  AddJob("b", 100);  // b#2
  EXPECT_EQ(Drain(/*fill=*/false), (std::vector<std::string>{"c#1", "b#2", "a#0"}));
}

TEST_F(FairQueueTest, ProgressiveFillingRecomputesSharesAfterEachPlacement) {
  // a's jobs take 1 CPU, b's 2 CPUs, all submitted at once (ids break ties, a's first).
  //   pop a#0: a 1/10, b 0      → next b (0 < 1/10)
  //   pop b#3: a 1/10, b 2/10   → next a
  //   pop a#1: a 2/10, b 2/10   → tie: a's head a#2 (id 2) before b#4 (id 4)
  //   pop a#2: a 3/10, b 2/10   → next b
  //   pop b#4: b 4/10           → b#5 last
  Upsert("a");
  Upsert("b");
  for (int i = 0; i < 3; ++i) AddJob("a", 0, 1);
  for (int i = 0; i < 3; ++i) AddJob("b", 0, 2);
  EXPECT_EQ(Drain(/*fill=*/true), (std::vector<std::string>{"a#0", "b#3", "a#1", "a#2", "b#4", "b#5"}));
  // Without refilling, a's earlier heads would win every tie at share 0.
  EXPECT_EQ(Drain(/*fill=*/false), (std::vector<std::string>{"a#0", "a#1", "a#2", "b#3", "b#4", "b#5"}));
}

TEST_F(FairQueueTest, WeightsScaleTheShareTheQueueCompares) {
  // a has weight 3, so each of a's CPUs counts a third: 1 CPU → 1/10/3 = 1/30.
  //   pop a#0 (tie at 0, lower id)  a 1/30   b 0
  //   pop b#4                       a 1/30   b 1/10
  //   pop a#1                       a 2/30   b 1/10
  //   pop a#2                       a 3/30   b 1/10  → tie; head a#3 (id 3) before b#5
  //   pop a#3                       a 4/30   b 1/10
  //   pop b#5
  Upsert("a", 3 * kMilli);
  Upsert("b");
  for (int i = 0; i < 4; ++i) AddJob("a", 0);
  for (int i = 0; i < 2; ++i) AddJob("b", 0);
  EXPECT_EQ(Drain(/*fill=*/true), (std::vector<std::string>{"a#0", "b#4", "a#1", "a#2", "a#3", "b#5"}));
}

TEST_F(FairQueueTest, ChoosesBetweenSubtreesBeforeWithinThem) {
  // org1/x holds 4 CPUs, so org1's share (4/10) is above org2's (0): org2/z goes first even
  // though org1/y's own share is 0 and its job is older.
  Upsert("org1");
  Upsert("org2");
  TenantId x = Upsert("org1/x");
  Upsert("org1/y");
  Upsert("org2/z");
  tree_.AddUsage(x, {kCpu, 0, 4000, 0}, false, +1);
  AddJob("org1/y", 0);    // org1/y#0
  AddJob("org2/z", 100);  // org2/z#1
  EXPECT_EQ(Drain(/*fill=*/false), (std::vector<std::string>{"org2/z#1", "org1/y#0"}));
}

TEST_F(FairQueueTest, ATenantsOwnJobsCompeteWithItsChildren) {
  // Nothing in use: shares tie at 0, so the earliest head wins, own queue or child.
  Upsert("org");
  Upsert("org/team");
  AddJob("org/team", 100);  // org/team#0
  AddJob("org", 50);        // org#1
  AddJob("org/team", 75);   // org/team#2
  EXPECT_EQ(Drain(/*fill=*/false), (std::vector<std::string>{"org#1", "org/team#2", "org/team#0"}));
}

TEST_F(FairQueueTest, IsEmptyOnlyWhenEveryJobIsPopped) {
  Upsert("a");
  UsageOverlay usage(tree_);
  FairQueue q(usage, capacity_, names_.size());
  EXPECT_TRUE(q.empty());
  AddJob("a", 0);
  q.Push(jobs_[0]);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.Pop(), JobId(0));
  EXPECT_TRUE(q.empty());
}

// The order Pop gives is hierarchical DRF computed afresh at every pop: from the root, the own
// queue or the child of lowest (share, head), shares from the usage at that moment. Random
// trees with up to 20 teams an org (many of them tie on share when usage is equal, the case a
// level keeps in a heap by head), jobs at the orgs too, and usage growing with some of the
// jobs popped (which moves shares and drops the heaps).
TEST_F(FairQueueTest, PopFollowsDrfComputedAfreshAtEveryPop) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Reset();
    XorShift rnd{seed * 0x9E3779B97F4A7C15ULL};
    std::vector<std::string> tenants = RandomTree(rnd, 20, /*orgs_too=*/seed % 4 == 0);
    for (const std::string& t : tenants) {
      const int jobs = 1 + static_cast<int>(rnd(10));
      for (int k = 0; k < jobs; ++k) AddJob(t, static_cast<int64_t>(rnd(40)), 1 + static_cast<int64_t>(rnd(2)));
    }
    const bool fill = seed % 2 == 0;
    auto placed = [&](uint32_t id) { return fill && (id * 2654435761u + seed) % 3 == 0; };
    UsageOverlay usage(tree_);
    FairQueue q(usage, capacity_, names_.size());
    for (const Job& j : jobs_) q.Push(j);
    std::vector<bool> left(jobs_.size(), true);
    auto under = [&](TenantId t, TenantId a) {
      for (; t.valid(); t = tree_.tenant(t).parent) {
        if (t == a) return true;
      }
      return false;
    };
    // The earliest job left of `a`'s own queue (own) or of its subtree; -1 if none.
    auto earliest = [&](TenantId a, bool own) {
      int best = -1;
      for (size_t i = 0; i < jobs_.size(); ++i) {
        if (!left[i] || !(own ? jobs_[i].spec.tenant == a : under(jobs_[i].spec.tenant, a))) continue;
        QueuedJob qi{jobs_[i].queued_ms, static_cast<uint32_t>(i)};
        if (best < 0 || qi < QueuedJob{jobs_[best].queued_ms, static_cast<uint32_t>(best)}) best = static_cast<int>(i);
      }
      return best;
    };
    for (size_t n = 0; n < jobs_.size(); ++n) {
      TenantId at = tree_.root();
      int want = -1;
      while (want < 0) {
        struct Choice {
          Share share;
          QueuedJob head;
          TenantId child;  // invalid: own queue
        };
        std::optional<Choice> best;
        auto consider = [&](const Choice& c) {
          if (!best || c.share < best->share || (c.share == best->share && c.head < best->head)) best = c;
        };
        if (int own = earliest(at, true); own >= 0) {
          consider({WeightedDominantShare(usage, at, capacity_, names_.size()),
                    {jobs_[own].queued_ms, static_cast<uint32_t>(own)}, TenantId()});
        }
        for (TenantId c : tree_.tenant(at).children) {
          if (int h = earliest(c, false); h >= 0) {
            consider({WeightedDominantShare(usage, c, capacity_, names_.size()), {jobs_[h].queued_ms, static_cast<uint32_t>(h)}, c});
          }
        }
        ASSERT_TRUE(best.has_value()) << "seed " << seed;
        if (best->child.valid()) {
          at = best->child;
        } else {
          want = static_cast<int>(best->head.id);
        }
      }
      JobId got = q.Pop();
      ASSERT_EQ(got.value(), static_cast<uint32_t>(want)) << "seed " << seed << " pop " << n;
      left[got.value()] = false;
      const Job& j = jobs_[got.value()];
      if (placed(got.value())) {
        usage.Add(j.spec.tenant, j.demand, false, +1);
        q.OnUsageChanged(j.spec.tenant);
      }
    }
    EXPECT_TRUE(q.empty());
  }
}

// Silent runs popped in batches: the jobs PopNext returns are, in order, the jobs Pop returns
// that are not silent, and every silent job is settled exactly once, whatever the tree, the
// ties (shares of 0, equal usage) and the interleaving of runs. Usage grows only with the jobs
// returned, as in a pass where a silent job fails.
TEST_F(FairQueueTest, PopNextReturnsWhatPopReturnsLessTheSilentRunsSettledInBatches) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    Reset();
    XorShift rnd{seed * 0x9E3779B97F4A7C15ULL};
    std::vector<std::string> tenants = RandomTree(rnd, 4, /*orgs_too=*/true);
    // Runs: per tenant a few groups, each a sorted run; some silent, one job in six pushed alone.
    std::vector<std::vector<QueuedJob>> runs;
    std::vector<TenantId> run_tenant;
    std::vector<bool> run_silent;
    std::vector<bool> job_silent;
    std::vector<const Job*> alone;
    for (const std::string& t : tenants) {
      for (int g = 0; g < static_cast<int>(rnd(4)); ++g) {
        runs.emplace_back();
        run_tenant.push_back(tree_.Find(t));
        run_silent.push_back(rnd(3) != 0);
        for (int k = 0; k < 1 + static_cast<int>(rnd(12)); ++k) {
          JobId id = AddJob(t, static_cast<int64_t>(rnd(40)), 1 + static_cast<int64_t>(rnd(2)));
          if (rnd(6) == 0) {
            alone.push_back(&jobs_[id.value()]);
            job_silent.push_back(false);
            continue;
          }
          runs.back().push_back({jobs_[id.value()].queued_ms, id.value()});
          job_silent.push_back(run_silent.back());
        }
        std::sort(runs.back().begin(), runs.back().end());
      }
    }
    for (bool fill : {false, true}) {
      // Reference: Pop everything; the silent ones change nothing.
      std::vector<uint32_t> want;
      {
        UsageOverlay usage(tree_);
        FairQueue q(usage, capacity_, names_.size());
        for (const Job& j : jobs_) q.Push(j);
        while (!q.empty()) {
          const Job& j = jobs_[q.Pop().value()];
          if (job_silent[j.id.value()]) continue;
          want.push_back(j.id.value());
          if (fill) {
            usage.Add(j.spec.tenant, j.demand, false, +1);
            q.OnUsageChanged(j.spec.tenant);
          }
        }
      }
      UsageOverlay usage(tree_);
      FairQueue q(usage, capacity_, names_.size());
      for (size_t r = 0; r < runs.size(); ++r) {
        q.PushRun(run_tenant[r], runs[r].data(), runs[r].data() + runs[r].size(), static_cast<uint32_t>(r));
      }
      for (const Job* j : alone) q.Push(*j);
      std::vector<uint32_t> got;
      std::vector<int> settled(jobs_.size(), 0);
      auto silent = [&](uint32_t tag, const QueuedJob&) { return tag != UINT32_MAX && run_silent[tag]; };
      auto settle = [&](uint32_t tag, const QueuedJob* first, const QueuedJob* last) {
        EXPECT_TRUE(run_silent[tag]);
        for (; first != last; ++first) settled[first->id] += 1;
      };
      while (auto next = q.PopNext(silent, settle)) {
        const Job& j = jobs_[next->job.value()];
        EXPECT_FALSE(job_silent[j.id.value()]) << "seed " << seed;
        got.push_back(j.id.value());
        if (fill) {
          usage.Add(j.spec.tenant, j.demand, false, +1);
          q.OnUsageChanged(j.spec.tenant);
        }
      }
      EXPECT_TRUE(q.empty());
      EXPECT_EQ(got, want) << "seed " << seed << (fill ? " with filling" : "");
      for (size_t i = 0; i < jobs_.size(); ++i) EXPECT_EQ(settled[i], job_silent[i] ? 1 : 0) << "job " << i;
    }
  }
}

// As the pass uses it: a run goes silent when one of its jobs fails (its group settles) and
// speaks again when usage on its tenant's path changes (a placement). Popped one by one with Pop
// (the silent ones skipped) or with PopNext, the same jobs are tried in the same order with the
// same outcomes, and every other job is settled once; PopNext settles the runs left at once
// when all of them are silent.
TEST_F(FairQueueTest, PopNextTriesWhatPopTriesAsRunsGoSilentAndSpeakAgain) {
  int settled_at_once = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    Reset();
    XorShift rnd{seed * 0x9E3779B97F4A7C15ULL};
    std::vector<std::string> tenants = RandomTree(rnd, 5, /*orgs_too=*/false);
    std::vector<std::vector<QueuedJob>> runs;
    std::vector<TenantId> run_tenant;
    std::vector<uint32_t> run_of(0);
    for (const std::string& t : tenants) {
      for (int g = 0; g < 1 + static_cast<int>(rnd(3)); ++g) {
        runs.emplace_back();
        run_tenant.push_back(tree_.Find(t));
        for (int k = 0; k < 1 + static_cast<int>(rnd(15)); ++k) {
          JobId id = AddJob(t, static_cast<int64_t>(rnd(60)));
          runs.back().push_back({jobs_[id.value()].queued_ms, id.value()});
          run_of.push_back(static_cast<uint32_t>(runs.size() - 1));
        }
        std::sort(runs.back().begin(), runs.back().end());
      }
    }
    // A tried job is placed when its id hashes so (one in four), else it fails.
    auto placed = [&](uint32_t id) { return (id * 2654435761u + seed) % 4 == 0; };
    struct World {
      UsageOverlay usage;
      std::vector<uint64_t> version;  // per tenant, bumped on a placement below it
      std::vector<uint64_t> settled;  // per run: the path version it failed at (~0: never)
    };
    auto make_world = [&] { return World{UsageOverlay(tree_), std::vector<uint64_t>(tree_.size(), 0), std::vector<uint64_t>(runs.size(), ~0ULL)}; };
    auto path_version = [&](const World& w, TenantId t) {
      uint64_t v = 0;
      for (; t.valid(); t = tree_.tenant(t).parent) v += w.version[t.value()];
      return v;
    };
    auto silent_in = [&](const World& w, uint32_t run) { return w.settled[run] == path_version(w, run_tenant[run]); };
    auto try_job = [&](World& w, FairQueue& q, uint32_t id, std::vector<uint32_t>& tried) {
      tried.push_back(id);
      const Job& j = jobs_[id];
      if (placed(id)) {
        for (TenantId t = j.spec.tenant; t.valid(); t = tree_.tenant(t).parent) w.version[t.value()] += 1;
        w.usage.Add(j.spec.tenant, j.demand, false, +1);
        q.OnUsageChanged(j.spec.tenant);
      } else {
        w.settled[run_of[id]] = path_version(w, j.spec.tenant);
      }
    };
    std::vector<uint32_t> want;
    {
      World w = make_world();
      FairQueue q(w.usage, capacity_, names_.size());
      for (const Job& j : jobs_) q.Push(j);
      while (!q.empty()) {
        uint32_t id = q.Pop().value();
        if (!silent_in(w, run_of[id])) try_job(w, q, id, want);
      }
    }
    World w = make_world();
    FairQueue q(w.usage, capacity_, names_.size());
    for (size_t r = 0; r < runs.size(); ++r) {
      q.PushRun(run_tenant[r], runs[r].data(), runs[r].data() + runs[r].size(), static_cast<uint32_t>(r));
    }
    std::vector<uint32_t> got;
    std::vector<int> settled(jobs_.size(), 0);
    auto silent = [&](uint32_t tag, const QueuedJob&) { return silent_in(w, tag); };
    auto settle = [&](uint32_t tag, const QueuedJob* first, const QueuedJob* last) {
      EXPECT_TRUE(silent_in(w, tag)) << "seed " << seed;
      settled_at_once += last - first > 1;
      for (; first != last; ++first) settled[first->id] += 1;
    };
    while (auto next = q.PopNext(silent, settle)) try_job(w, q, next->job.value(), got);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(got, want) << "seed " << seed;
    std::vector<int> tried(jobs_.size(), 0);
    for (uint32_t id : got) tried[id] += 1;
    for (size_t i = 0; i < jobs_.size(); ++i) EXPECT_EQ(settled[i] + tried[i], 1) << "seed " << seed << " job " << i;
  }
  EXPECT_GT(settled_at_once, 30);
}

}  // namespace
}  // namespace allot
