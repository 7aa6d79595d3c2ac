// Reconciliation: per allocation (a job's run) that ended in the window, the scheduler's GPU
// time against the agents' reported task time; listed when over both tolerances, when no agent
// reported the run, and when a report names no allocation. The arithmetic is in the comments.
#include "metering/reconcile.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

constexpr int64_t kS = 1000;

class ReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.Tenant("t");
    for (const char* n : {"gpu-a", "gpu-b"}) {
      c_.Apply(NodeRegistered{NodeSpec{n, "z1", "r1", "", 64000, 512 * 1024, testing::kH100, 8}});
      c_.Apply(NodeConditionChanged{c_.state.fleet().Find(n), NodeCondition::kReady});
    }
    // All placed at 0 and held until 100 s but "open".
    c_.Submit(JobBuilder("exact").Tenant("t").Gpus(2).Duration(1000 * kS));          // 1 task × 2 GPUs
    c_.Submit(JobBuilder("short").Tenant("t").Gpus(1).Tasks(2).Duration(1000 * kS));  // 2 tasks × 1 GPU
    c_.Submit(JobBuilder("silent").Tenant("t").Gpus(1).Duration(1000 * kS));
    c_.Submit(JobBuilder("open").Tenant("t").Gpus(1).Duration(1000 * kS));
    c_.RunPass(0);
    for (const char* j : {"exact", "short", "silent"}) c_.Finish(j, 100 * kS);
    // Agent clocks are their own: only each task's length counts.
    Report("exact", 0, 0, 5000 * kS, 5100 * kS);  // 100 s
    Report("short", 0, 0, 7000 * kS, 7100 * kS);  // 100 s
    Report("short", 0, 1, 7000 * kS, 7090 * kS);  //  90 s
  }
  void Report(const std::string& job, int32_t run, int32_t task, int64_t start, int64_t end, int64_t at = 100 * kS) {
    c_.Apply(TaskRunReported{c_.Id(job), run, task, "gpu-a", start, end}, at);
  }
  // "finding job" per row, in the report's order.
  std::vector<std::string> Rows(const ReconcileOptions& o) {
    std::vector<std::string> out;
    for (const ReconcileRow& r : Reconcile(c_.state, o).rows) {
      out.push_back(std::string(FindingName(r.finding)) + " " + c_.state.job(r.job).spec.name);
    }
    return out;
  }
  Cluster c_;
};

TEST_F(ReconcileTest, ListsWhatDiffersBeyondBothTolerancesAndRunsNoAgentReported) {
  // exact:  scheduler 2 GPUs × 100 s = 200 GPU-s; agents 2 × 100 s = 200 → no difference.
  // short:  scheduler 2 × 1 GPU × 100 s = 200 GPU-s; agents 1 × 100 + 1 × 90 = 190 → 10 GPU-s.
  //         Absolute slack: tolerance × the run's 2 GPUs. Percent slack: pct × 200 GPU-s.
  // silent: ended, no report. open: still running, not compared.
  struct Case {
    const char* name;
    int64_t tolerance_ms;
    int64_t pct_milli;
    std::vector<std::string> rows;
  };
  const std::vector<Case> cases = {
      // 10 > 4 s × 2 = 8, and the percent slack is 0.
      {"four seconds", 4 * kS, 0, {"over-tolerance short", "no-report silent"}},
      // 10 is not > 5 s × 2 = 10.
      {"five seconds", 5 * kS, 0, {"no-report silent"}},
      // 10 > 0, but not > 5% of 200 = 10: within, as both must be exceeded.
      {"five percent", 0, 5000, {"no-report silent"}},
      // 10 > 4.9% of 200 = 9.8 and > 0.
      {"four point nine percent", 0, 4900, {"over-tolerance short", "no-report silent"}},
      // 10 > 9.8 but not > 5 s × 2 = 10.
      {"both, the seconds hold", 5 * kS, 4900, {"no-report silent"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ReconcileOptions o{0, 200 * kS, c.tolerance_ms, c.pct_milli};
    EXPECT_EQ(Rows(o), c.rows);
    ReconcileReport r = Reconcile(c_.state, o);
    EXPECT_EQ(r.allocations, 3) << "exact, short and silent ended in the window; open did not end";
    EXPECT_EQ(r.within, 3 - static_cast<int32_t>(c.rows.size()));
  }
}

TEST_F(ReconcileTest, AnOverToleranceRowCarriesBothFiguresInGpuUnitMilliseconds) {
  ReconcileReport r = Reconcile(c_.state, ReconcileOptions{0, 200 * kS, 0, 0});
  ASSERT_EQ(r.rows.size(), 2u);
  const ReconcileRow& s = r.rows[0];
  EXPECT_EQ(s.run, 0);
  EXPECT_EQ(s.task, -1);
  EXPECT_EQ(s.start_ms, 0);
  EXPECT_EQ(s.end_ms, 100 * kS);
  EXPECT_EQ(s.tasks, 2);
  EXPECT_EQ(s.tasks_reported, 2);
  EXPECT_EQ(UnitsMsToGpuMs(s.scheduler_units_ms), 200 * kS);  // 2 GPUs × 100 s
  EXPECT_EQ(UnitsMsToGpuMs(s.agent_units_ms), 190 * kS);      // 100 s + 90 s
  EXPECT_EQ(r.rows[1].tasks_reported, 0);
}

TEST_F(ReconcileTest, OnlyRunsThatEndedInTheWindowAreCompared) {
  // Every run ended at 100 s: a window [0, 100 s) ends before them, [100 s, 101 s) holds them.
  EXPECT_EQ(Reconcile(c_.state, ReconcileOptions{0, 100 * kS, 0, 0}).allocations, 0);
  EXPECT_EQ(Reconcile(c_.state, ReconcileOptions{100 * kS, 101 * kS, 0, 0}).allocations, 3);
}

TEST_F(ReconcileTest, ARunEndedByAPreemptionIsComparedByItsOwnIndex) {
  // open: held 0 → 50 s (run 0, ended by a stop), placed again at 60 s (run 1, still open).
  c_.Stop("open", 50 * kS);
  c_.RunPass(60 * kS);
  ASSERT_EQ(c_.StateOf("open"), JobState::kRunning);
  Report("open", 0, 0, 0, 50 * kS);  // 1 GPU × 50 s, as held
  ReconcileReport r = Reconcile(c_.state, ReconcileOptions{0, 200 * kS, 5 * kS, 0});
  EXPECT_EQ(r.allocations, 4) << "run 0 of open ended; run 1 is open";
  EXPECT_EQ(Rows(ReconcileOptions{0, 200 * kS, 5 * kS, 0}), std::vector<std::string>{"no-report silent"});
}

TEST_F(ReconcileTest, AReportNamingNoRunOrTaskIsListedAsHavingNoAllocation) {
  Report("exact", 3, 0, 0, 10 * kS, 150 * kS);  // exact had one run (0)
  Report("exact", 0, 5, 0, 10 * kS, 150 * kS);  // exact has one task (0)
  Report("open", 0, 0, 0, 10 * kS, 150 * kS);   // open's run 0 is still open: it has an allocation
  ReconcileReport r = Reconcile(c_.state, ReconcileOptions{0, 200 * kS, 5 * kS, 0});
  EXPECT_EQ(Rows(ReconcileOptions{0, 200 * kS, 5 * kS, 0}),
            (std::vector<std::string>{"no-allocation exact", "no-allocation exact", "no-report silent"}));
  EXPECT_EQ(r.rows[0].run, 0);
  EXPECT_EQ(r.rows[0].task, 5);
  EXPECT_EQ(r.rows[0].node, "gpu-a");
  EXPECT_EQ(r.rows[1].run, 3);
  // Recorded at 150 s: a window that ends before leaves them out.
  EXPECT_EQ(Rows(ReconcileOptions{0, 150 * kS, 5 * kS, 0}), std::vector<std::string>{"no-report silent"});
}

TEST_F(ReconcileTest, JobsOffAgentManagedNodesWithNoReportAreNotCompared) {
  c_.AddNodes("sim-", 1, "z1", "r1", 64, 512, testing::kH100, 8);
  c_.Apply(NodeConditionChanged{c_.state.fleet().Find("sim-2"), NodeCondition::kCordoned});
  ReconcileOptions o{0, 200 * kS, 5 * kS, 0};
  int32_t before = Reconcile(c_.state, o).allocations;
  // Fill both agent nodes' remaining GPUs so the next job lands on the simulated node.
  c_.Submit(JobBuilder("fill-a").Tenant("t").Gpus(8).At(100 * kS).Duration(1000 * kS));
  c_.Submit(JobBuilder("fill-b").Tenant("t").Gpus(7).At(100 * kS).Duration(1000 * kS));
  c_.RunPass(100 * kS);
  c_.Apply(NodeConditionChanged{c_.state.fleet().Find("sim-2"), NodeCondition::kReady}, 100 * kS);
  c_.Submit(JobBuilder("sim").Tenant("t").Gpus(8).At(100 * kS).Duration(1000 * kS));
  c_.RunPass(100 * kS);
  ASSERT_EQ(c_.StateOf("sim"), JobState::kRunning);
  ASSERT_FALSE(c_.state.agent_managed(c_.job("sim").placement[0].node));
  c_.Finish("sim", 150 * kS);
  EXPECT_EQ(Reconcile(c_.state, o).allocations, before);
}

// "open" runs first on an agent's node, is requeued, and runs again on a simulated node: its
// first run is compared (no agent reported it), its second is not. Each run is judged by where
// it ran, not by the job's last placement.
TEST_F(ReconcileTest, EachRunIsJudgedByWhereItRanNotByTheJobsLastPlacement) {
  c_.AddNodes("sim-", 1, "z1", "r1", 64, 512, testing::kH100, 8);
  c_.Apply(NodeConditionChanged{c_.state.fleet().Find("sim-2"), NodeCondition::kCordoned});
  ReconcileOptions o{0, 200 * kS, 5 * kS, 0};
  int32_t before = Reconcile(c_.state, o).allocations;
  c_.Apply(NodeConditionChanged{c_.state.fleet().Find("sim-2"), NodeCondition::kReady}, 110 * kS);
  c_.Stop("open", 120 * kS);
  for (const char* n : {"gpu-a", "gpu-b"}) {  // the agents' nodes take nothing new
    c_.Apply(NodeConditionChanged{c_.state.fleet().Find(n), NodeCondition::kCordoned}, 125 * kS);
  }
  c_.RunPass(130 * kS);
  ASSERT_EQ(c_.StateOf("open"), JobState::kRunning);
  ASSERT_FALSE(c_.state.agent_managed(c_.job("open").placement[0].node));
  c_.Finish("open", 150 * kS);
  ReconcileReport r = Reconcile(c_.state, o);
  EXPECT_EQ(r.allocations, before + 1) << "run 0 of open, on an agent's node; not run 1";
  std::vector<std::string> rows = Rows(o);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "no-report open"), 1);
  for (const ReconcileRow& row : r.rows) {
    if (c_.state.job(row.job).spec.name == "open") {
      EXPECT_EQ(row.run, 0);
    }
  }
}

}  // namespace
}  // namespace allot
