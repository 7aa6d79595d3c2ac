// The Meter: intervals from the event stream, split at every change and at period boundaries.
#include <gtest/gtest.h>

#include "billing/zoneinfo.h"
#include "metering/meter.h"
#include "metering/rating.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

constexpr int64_t kHourMs = 3600 * 1000;

// A cluster whose every job event also goes to a Meter, as a driver would feed it.
struct Metered {
  Cluster c;
  Meter meter;
  explicit Metered(NextBoundary next = nullptr) : meter(std::move(next)) {}

  void Apply(EventBody body, int64_t now) {
    Event e{now, std::move(body)};
    Status s = c.state.apply(e);
    ASSERT_TRUE(s.ok()) << s.ToString();
    meter.Observe(e, c.state);
  }
  void Pass(int64_t now) {
    Plan plan = PlanPass(c.state, now, c.config);
    for (const Event& e : plan.ToEvents()) Apply(e.body, e.time_ms);
  }
};

TEST(Meter, ReclaimSplitsTheBorrowerAtItsStopAndResume) {
  Metered m;
  m.c.AddNodes("n-", 1, "z", "r", 64, 512, testing::kH100, 8);
  m.c.Tenant("owner", {{"gpu/H100-80GB", "8"}});
  m.c.Tenant("borrower");
  m.c.Submit(JobBuilder("borrow").Tenant("borrower").Gpus(8).Cpus(8).MemGi(64).Duration(10 * kHourMs).At(0));
  m.Pass(0);
  m.c.Submit(JobBuilder("claim").Tenant("owner").Gpus(8).Duration(kHourMs).At(kHourMs));
  m.Pass(kHourMs);  // signals borrow: it keeps its GPUs through the 30 s grace
  ASSERT_EQ(m.c.StateOf("borrow"), JobState::kPreempting);
  EXPECT_TRUE(m.meter.closed().empty());
  m.Apply(JobStopped{m.c.Id("borrow"), 0}, kHourMs + 30000);
  m.Pass(kHourMs + 30000);
  m.Apply(JobFinished{m.c.Id("claim")}, 2 * kHourMs + 30000);
  m.Pass(2 * kHourMs + 30000);  // borrow resumes

  const auto& closed = m.meter.closed();
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].job, m.c.Id("borrow"));
  EXPECT_EQ(closed[0].usage_class, UsageClass::kBurstable);
  EXPECT_EQ(closed[0].start_ms, 0);
  EXPECT_EQ(closed[0].end_ms, kHourMs + 30000);  // held until it exited, not until signalled
  EXPECT_EQ(closed[0].gpu, 8 * kGpuUnit);
  EXPECT_EQ(closed[0].cpu, 8000);
  EXPECT_EQ(closed[0].memory, 64 * 1024);
  EXPECT_EQ(closed[1].job, m.c.Id("claim"));
  EXPECT_EQ(closed[1].usage_class, UsageClass::kGuaranteed);
  EXPECT_EQ(closed[1].start_ms, kHourMs + 30000);
  EXPECT_EQ(closed[1].end_ms, 2 * kHourMs + 30000);
  auto open = m.meter.OpenAt(3 * kHourMs);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].job, m.c.Id("borrow"));
  EXPECT_EQ(open[0].start_ms, 2 * kHourMs + 30000);
  EXPECT_EQ(open[0].end_ms, 3 * kHourMs);
  EXPECT_EQ(m.meter.open_runs(), 1u);  // OpenAt closes nothing
}

TEST(Meter, AGangAcrossNodesGivesOneIntervalPerNode) {
  Metered m;
  m.c.AddNodes("n-", 2, "z", "r", 64, 512, testing::kH100, 8);
  m.c.Tenant("t");
  m.c.Submit(JobBuilder("gang").Tenant("t").Gpus(8).Tasks(2).Cpus(4).Topology(Topology::kRack).At(0));
  m.Pass(0);
  m.Apply(JobCancelled{m.c.Id("gang")}, kHourMs);
  const auto& closed = m.meter.closed();
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_NE(closed[0].node, closed[1].node);
  for (const UsageInterval& iv : closed) {
    EXPECT_EQ(iv.gpu, 8 * kGpuUnit);
    EXPECT_EQ(iv.cpu, 4000);
    EXPECT_EQ(iv.topology, Topology::kRack);
    EXPECT_EQ(iv.end_ms - iv.start_ms, kHourMs);
  }
}

TEST(Meter, ACancelWhilePendingHeldNothing) {
  Metered m;
  m.c.AddNodes("n-", 1, "z", "r", 64, 512, testing::kH100, 8);
  m.c.Tenant("t");
  m.c.Submit(JobBuilder("big").Tenant("t").Gpus(8).Tasks(2).At(0));  // never fits one node pair
  m.Apply(JobCancelled{m.c.Id("big")}, 1000);
  EXPECT_TRUE(m.meter.closed().empty());
}

// Berlin: April 2025 begins at 2025-03-31T22:00Z (CEST, +2). A run 20:00Z → 02:00Z is split
// there: 2 h in March, 4 h in April. At 8 GPUs × 2.50: 8 × 2 × 2.50 = 40.00 and
// 8 × 4 × 2.50 = 80.00.
TEST(Meter, ARunAcrossAMonthEndIsSplitAtLocalMidnight) {
  auto berlin = LoadTimeZone("Europe/Berlin");
  ASSERT_TRUE(berlin.has_value());
  NextBoundary next = [&](TenantId, int64_t t) { return NextMonthStartMs(*berlin, t); };
  Metered m(next);
  m.c.AddNodes("n-", 1, "z", "r", 64, 512, testing::kH100, 8);
  m.c.Tenant("research");
  const int64_t start = DaysFromCivil(2025, 3, 31) * 86400000 + 20 * kHourMs;
  m.c.Submit(JobBuilder("run").Tenant("research").Gpus(8).At(start));
  m.Pass(start);
  m.Apply(JobFinished{m.c.Id("run")}, start + 6 * kHourMs);
  const auto& closed = m.meter.closed();
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].end_ms - closed[0].start_ms, 2 * kHourMs);
  EXPECT_EQ(closed[1].start_ms, closed[0].end_ms);
  EXPECT_EQ(closed[1].end_ms - closed[1].start_ms, 4 * kHourMs);

  RateCard card;
  card.gpu_hour["H100-80GB"] = 2500000;
  TenantId org = m.c.state.tenants().Find("research");
  std::vector<OrgPeriod> periods = {{org, *ParseMonth(*berlin, "2025-03"), BillingMode::kUsage}};
  auto march = Rate({m.c.state.tenants(), m.c.state.resource_names(), card}, periods, closed);
  ASSERT_TRUE(march.has_value()) << march.error().message();
  ASSERT_EQ(march->size(), 1u);
  EXPECT_EQ((*march)[0].amount, 40000000);
  periods[0].period = *ParseMonth(*berlin, "2025-04");
  auto april = Rate({m.c.state.tenants(), m.c.state.resource_names(), card}, periods, closed);
  ASSERT_EQ(april->size(), 1u);
  EXPECT_EQ((*april)[0].amount, 80000000);
}

}  // namespace
}  // namespace allot
