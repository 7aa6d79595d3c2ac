// Budgets in the scheduling pass: a job whose projected cost would break its tenant's (or an
// ancestor's) cap for the period is held with the sums in its reason; showback orgs are never
// held; warnings at 80% and 100% are planned once per budget per period. The pass is pure, so
// this is also what `allot sim` holds.
#include "metering/budget_gate.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kNov1 = 1793491200000;  // 2026-11-01T00:00:00Z

class BudgetGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto billing = std::make_shared<BillingSetup>();
    billing->card.gpu_hour["H100-80GB"] = 2500000;  // 2.50 USD per GPU-hour
    billing->card.orgs["lab"].accounting = Accounting::kShowback;
    billing_ = billing;
    c_.config.gate = std::make_shared<BudgetGateFactory>(billing_);
    c_.AddNodes("h", 2, "z", "r", 64, 512, "H100-80GB", 8);
    c_.Tenant("research");
    c_.Tenant("research/nlp");
    c_.Tenant("lab");
  }
  void Budget(const std::string& path, int64_t spend_micros, int64_t gpu_hours_milli = kNoCap) {
    c_.Apply(BudgetSet{path, spend_micros, gpu_hours_milli}, kNov1);
  }
  std::vector<BudgetWarned> Warnings(const Plan& plan) {
    std::vector<BudgetWarned> out;
    for (const EventBody& e : plan.notices) out.push_back(std::get<BudgetWarned>(e));
    return out;
  }

  Cluster c_;
  std::shared_ptr<const BillingSetup> billing_;
};

TEST_F(BudgetGateTest, HoldsAJobWhoseProjectedCostWouldBreakItsTeamsBudgetAndSaysTheSums) {
  Budget("research/nlp", 50 * kMicros);  // 50.00 USD
  // Ran 8 GPUs for 2 h: 16 GPU-h × 2.50 = 40.00 USD spent.
  JobId a = c_.Submit(JobBuilder("a").Tenant("research/nlp").Gpus(8).Duration(2 * kHour).At(kNov1));
  c_.RunPass(kNov1);
  c_.Finish("a", kNov1 + 2 * kHour);
  // 1 GPU for 8 h: 8 GPU-h × 2.50 = 20.00 USD; 40 + 20 > 50.
  JobId b = c_.Submit(JobBuilder("b").Tenant("research/nlp").Gpus(1).Duration(8 * kHour).At(kNov1 + 2 * kHour));
  Plan plan = c_.RunPass(kNov1 + 2 * kHour);
  EXPECT_EQ(c_.StateOf("b"), JobState::kPending);
  EXPECT_EQ(testing::PendingReasonOf(plan, b),
            "held: budget of research/nlp for 2026-11: spent 40.00 USD + this job's projected 20.00 USD > 50.00 USD");
  EXPECT_EQ(c_.StateOf("a"), JobState::kFinished);
  (void)a;
  // 1 GPU for 4 h: 10.00 USD; 40 + 10 = 50, not over: it runs.
  c_.Submit(JobBuilder("c").Tenant("research/nlp").Gpus(1).Duration(4 * kHour).At(kNov1 + 2 * kHour));
  c_.RunPass(kNov1 + 2 * kHour);
  EXPECT_EQ(c_.StateOf("c"), JobState::kRunning);
}

TEST_F(BudgetGateTest, AnAncestorsBudgetHoldsJobsOfItsWholeSubtreeCountingRunningJobs) {
  Budget("research", 30 * kMicros);
  // Running: 1 GPU for 10 h projected = 25.00 USD; nothing spent yet.
  c_.Submit(JobBuilder("long").Tenant("research").Gpus(1).Duration(10 * kHour).At(kNov1));
  c_.RunPass(kNov1);
  JobId b = c_.Submit(JobBuilder("b").Tenant("research/nlp").Gpus(1).Duration(4 * kHour).At(kNov1));
  Plan plan = c_.RunPass(kNov1);
  EXPECT_EQ(testing::PendingReasonOf(plan, b),
            "held: budget of research for 2026-11: spent 0.00 USD + running jobs' projected 25.00 USD + this job's "
            "projected 10.00 USD > 30.00 USD");
}

TEST_F(BudgetGateTest, JobsPlacedEarlierInThePassCountAgainstTheBudget) {
  Budget("research/nlp", 15 * kMicros);
  // Each 1 GPU × 4 h = 10.00 USD: the first fits under 15, the second would make 20.
  c_.Submit(JobBuilder("x").Tenant("research/nlp").Gpus(1).Duration(4 * kHour).At(kNov1));
  c_.Submit(JobBuilder("y").Tenant("research/nlp").Gpus(1).Duration(4 * kHour).At(kNov1));
  c_.RunPass(kNov1);
  EXPECT_EQ(c_.StateOf("x"), JobState::kRunning);
  EXPECT_EQ(c_.StateOf("y"), JobState::kPending);
}

TEST_F(BudgetGateTest, AGpuHourCapHoldsByGpuTimeWhateverThePrice) {
  Budget("research/nlp", kNoCap, 10 * 1000);  // 10 GPU-hours
  JobId b = c_.Submit(JobBuilder("b").Tenant("research/nlp").Gpus(4).Duration(3 * kHour).At(kNov1));
  Plan plan = c_.RunPass(kNov1);
  EXPECT_EQ(testing::PendingReasonOf(plan, b),
            "held: budget of research/nlp for 2026-11: used 0 GPU-hours + this job's projected 12 GPU-hours > 10 "
            "GPU-hours");
}

TEST_F(BudgetGateTest, AShowbackOrgIsNeverHeldOnlyWarned) {
  Budget("lab", 1 * kMicros);
  c_.Submit(JobBuilder("a").Tenant("lab").Gpus(1).Duration(kHour).At(kNov1));
  c_.RunPass(kNov1);
  EXPECT_EQ(c_.StateOf("a"), JobState::kRunning);
  Plan plan = c_.RunPass(kNov1 + kHour / 2);  // 0.5 GPU-h = 1.25 USD spent of 1.00
  std::vector<BudgetWarned> w = Warnings(plan);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].percent, 80);
  EXPECT_EQ(w[1].percent, 100);
  EXPECT_EQ(w[1].message, "budget of lab for 2026-11: spend 1.25 USD of 1.00 USD (125%)");
}

TEST_F(BudgetGateTest, WarnsAtEightyAndOneHundredPercentOncePerBudgetPerPeriod) {
  Budget("research", 10 * kMicros);
  c_.Submit(JobBuilder("a").Tenant("research/nlp").Gpus(1).Duration(4 * kHour).At(kNov1));
  c_.RunPass(kNov1);
  // 3.5 h × 2.50 = 8.75 USD: 87%.
  std::vector<BudgetWarned> w = Warnings(c_.RunPass(kNov1 + 3 * kHour + kHour / 2));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].path, "research");
  EXPECT_EQ(w[0].period, "2026-11");
  EXPECT_EQ(w[0].percent, 80);
  EXPECT_TRUE(Warnings(c_.RunPass(kNov1 + 3 * kHour + 3 * kHour / 4)).empty()) << "80% is said once";
  c_.Finish("a", kNov1 + 4 * kHour);  // 10.00 USD: 100%
  w = Warnings(c_.RunPass(kNov1 + 5 * kHour));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].percent, 100);
  EXPECT_EQ(c_.state.billing().warnings().size(), 2u);
}

TEST_F(BudgetGateTest, WithoutBudgetsTheGateIsNotOpened) {
  EXPECT_EQ(BudgetGateFactory(billing_).Open(c_.state, kNov1), nullptr);
}

TEST_F(BudgetGateTest, ProjectedCostTakesTheBurstPremiumAndAFloorCoversGuaranteedUsage) {
  auto card = std::make_shared<BillingSetup>(*billing_);
  card->card.burst_premium = 1500000;  // ×1.5
  card->card.orgs["research"].mode = BillingMode::kFloorBurst;
  c_.Tenant("research", {{"gpu/H100-80GB", "4"}});
  JobId a = c_.Submit(JobBuilder("a").Tenant("research/nlp").Gpus(1).Duration(kHour).At(kNov1));
  const Job& j = c_.state.job(a);
  EXPECT_EQ(*ProjectedCost(c_.state, *card, j, AdmissionClass::kBurstable, 2 * kHour), 7500000);  // 2 × 2.50 × 1.5
  EXPECT_EQ(*ProjectedCost(c_.state, *card, j, AdmissionClass::kGuaranteed, 2 * kHour), 0);       // under the floor
}

// The gate keeps its sums from pass to pass (BudgetSpendCache): ended runs are added once, as
// they end. Through finishes, a cancel and a requeue of running jobs, a month end, a new tenant,
// a budget on another org and a team moved into it from an org without one (whose earlier use
// now counts there), it must report exactly what a scan of every job reports.
TEST_F(BudgetGateTest, TheGatesRunningSumsEqualAScanOfEveryJobPassAfterPass) {
  constexpr int64_t kNov30At20 = kNov1 + 29 * 24 * kHour + 20 * kHour;
  Budget("research/nlp", 10000 * kMicros, 100000);
  Budget("research", 20000 * kMicros);
  c_.Tenant("ops");
  c_.Tenant("ops/x");
  c_.Submit(JobBuilder("x").Tenant("ops/x").Gpus(2).Duration(6 * kHour).At(kNov30At20));  // into December
  BudgetSpendCache cache;
  int step = 0;
  for (int64_t now = kNov30At20; now <= kNov30At20 + 8 * kHour; now += kHour / 2, ++step) {
    const char* tenant = step % 3 == 0 ? "research" : "research/nlp";
    c_.Submit(JobBuilder("j" + std::to_string(step)).Tenant(tenant).Gpus(1 + step % 4).Cpus(2).MemGi(4)
                  .Duration((1 + step % 5) * kHour / 2).At(now));
    if (step == 6) c_.Tenant("research/cv");
    if (step == 7) c_.Submit(JobBuilder("cv").Tenant("research/cv").Gpus(2).Duration(kHour).At(now));
    if (step == 9) c_.Apply(BudgetSet{"lab", kNoCap, 1000}, now);
    if (step == 10) c_.Apply(TenantMoved{"ops/x", "lab/x"}, now);
    c_.RunPass(now);
    for (JobId id : std::vector<JobId>(c_.state.active().begin(), c_.state.active().end())) {
      const Job& j = c_.state.job(id);
      if (step == 3 && j.spec.name == "j1") {
        c_.Apply(JobCancelled{id}, now);
      } else if (step == 5 && j.spec.name == "j4") {
        c_.Apply(JobStopped{id, 0}, now);  // requeued: its run ends, it waits again
      } else if (j.last_started_ms + j.spec.duration_ms <= now) {
        c_.Apply(JobFinished{id}, now);
      }
    }
    auto cached = BudgetsAt(c_.state, *billing_, now, &cache);
    auto scanned = BudgetsAt(c_.state, *billing_, now);
    ASSERT_EQ(cached.size(), scanned.size()) << step;
    for (size_t i = 0; i < scanned.size(); ++i) {
      EXPECT_EQ(cached[i].tenant, scanned[i].tenant) << step;
      EXPECT_EQ(cached[i].period.label, scanned[i].period.label) << step;
      EXPECT_EQ(cached[i].spent_micros, scanned[i].spent_micros) << "step " << step << " budget " << i;
      EXPECT_EQ(cached[i].gpu_hours_milli, scanned[i].gpu_hours_milli) << "step " << step << " budget " << i;
    }
  }
  auto end = BudgetsAt(c_.state, *billing_, kNov30At20 + 8 * kHour);
  EXPECT_EQ(end.front().period.label, "2026-12");
  EXPECT_GT(end[1].spent_micros, 0) << "December has usage: the sums compared are not all zero";
  // Started again for the new tenant, the new month, the budget on lab and the move; not every pass.
  EXPECT_GE(cache.rebuilds(), 4);
  EXPECT_LE(cache.rebuilds(), 6);
}

}  // namespace
}  // namespace allot
