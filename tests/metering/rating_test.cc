// Rating and invoices: usage vs floor+burst on a small tree, with the sums worked out.
#include <gtest/gtest.h>

#include <map>

#include "metering/invoice.h"
#include "metering/rating.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;

constexpr int64_t kHourMs = 3600 * 1000;

// research guarantees 8 H100s, research/nlp 6 of them; research/cv borrows. One day.
//   nlp: 6 GPUs × 10 h guaranteed; cv: 4 GPUs × 5 h burstable (premium 1.2), 16 CPUs × 5 h.
class RatingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c.AddNodes("n-", 2, "z", "r", 64, 512, testing::kH100, 8);
    org = c.Tenant("research", {{"gpu/H100-80GB", "8"}});
    nlp = c.Tenant("research/nlp", {{"gpu/H100-80GB", "6"}});
    cv = c.Tenant("research/cv");
    card.gpu_hour["H100-80GB"] = 2500000;
    card.cpu_hour = 20000;
    card.burst_premium = 1200000;
    UsageInterval a;
    a.tenant = nlp;
    a.gpu_resource = c.Res("gpu/H100-80GB");
    a.gpu = 6 * kGpuUnit;
    a.start_ms = 0;
    a.end_ms = 10 * kHourMs;
    UsageInterval b = a;
    b.tenant = cv;
    b.usage_class = UsageClass::kBurstable;
    b.gpu = 4 * kGpuUnit;
    b.cpu = 16000;
    b.end_ms = 5 * kHourMs;
    // Outside the day: clipped away.
    UsageInterval late = a;
    late.start_ms = 30 * kHourMs;
    late.end_ms = 31 * kHourMs;
    intervals = {a, b, late};
  }

  std::vector<LedgerLine> RateDay(BillingMode mode) {
    std::vector<OrgPeriod> periods = {{org, Period{"day", 0, 24 * kHourMs}, mode}};
    auto lines = Rate({c.state.tenants(), c.state.resource_names(), card}, periods, intervals);
    EXPECT_TRUE(lines.has_value()) << lines.error().message();
    return lines.value_or(std::vector<LedgerLine>{});
  }

  Cluster c;
  TenantId org, nlp, cv;
  RateCard card;
  std::vector<UsageInterval> intervals;
};

int64_t Sum(const std::vector<LedgerLine>& lines) {
  int64_t s = 0;
  for (const LedgerLine& l : lines) s += l.amount;
  return s;
}

TEST_F(RatingTest, UsageModePricesEveryIntervalWithTheBurstPremiumOnBorrowedTime) {
  auto lines = RateDay(BillingMode::kUsage);
  // nlp: 6 × 10 h × 2.50 = 150.00
  // cv:  4 × 5 h × 2.50 × 1.2 = 60.00; 16 CPUs × 5 h × 0.02 × 1.2 = 1.92
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].tenant, "research/cv");
  EXPECT_EQ(lines[0].resource, "cpu");
  EXPECT_EQ(lines[0].amount, 1920000);
  EXPECT_EQ(lines[1].resource, "gpu/H100-80GB");
  EXPECT_EQ(lines[1].amount, 60000000);
  EXPECT_EQ(lines[2].tenant, "research/nlp");
  EXPECT_EQ(lines[2].amount, 150000000);
  EXPECT_EQ(Sum(lines), 211920000);
}

TEST_F(RatingTest, FloorPlusBurstBillsTheGuaranteeWhetherUsedOrNot) {
  auto lines = RateDay(BillingMode::kFloorBurst);
  // Floors over 24 h at 2.50: research keeps 8 − 6 = 2 GPUs → 120.00; nlp 6 → 360.00.
  // nlp's guaranteed usage is covered (0); cv's burst as in usage mode: 60.00 + 1.92.
  // Total 120 + 360 + 0 + 61.92 = 541.92.
  std::map<std::string, int64_t> by;
  for (const LedgerLine& l : lines) by[l.tenant + " " + EntryKindName(l.kind) + " " + l.resource] += l.amount;
  EXPECT_EQ(by["research floor gpu/H100-80GB"], 120000000);
  EXPECT_EQ(by["research/nlp floor gpu/H100-80GB"], 360000000);
  EXPECT_EQ(by["research/nlp usage gpu/H100-80GB"], 0);
  EXPECT_EQ(by["research/cv usage gpu/H100-80GB"], 60000000);
  EXPECT_EQ(by["research/cv usage cpu"], 1920000);  // no CPU floor: guaranteed or not, CPU is usage
  EXPECT_EQ(Sum(lines), 541920000);
  auto cost = CostBySubtree(c.state.tenants(), lines);
  EXPECT_EQ(cost[org.value()], 541920000);
  EXPECT_EQ(cost[nlp.value()], 360000000);
  EXPECT_EQ(cost[cv.value()], 61920000);
}

// Guarantees changed within the day are billed for the time each held, from the state's floor
// history (the tenant events' times):
//   0–6 h   research keeps 8 − 6 = 2, nlp 6
//   6 h     nlp cut to 2          → research keeps 6
//   18 h    cv guaranteed 3       → research keeps 8 − 2 − 3 = 3
//   20 h    cv removed            → research keeps 6
//   12 h    prod (another org) created with 4
// In GPU-hours: nlp 6×6 + 2×18 = 72 → 180.00; cv 3×2 = 6 → 15.00;
// research 2×6 + 6×12 + 3×2 + 6×4 = 114 → 285.00 (the three add up to research's 8 × 24 = 192);
// prod 4×12 = 48 → 120.00, not the whole day.
TEST_F(RatingTest, AGuaranteeChangedWithinThePeriodIsBilledForTheTimeEachValueHeld) {
  auto upsert = [&](const std::string& path, const testing::Quota& g, int64_t at_ms) {
    c.Apply(TenantUpserted{testing::MakeTenantSpec(c.state.resource_names(), path, g)}, at_ms);
  };
  upsert("research/nlp", {{"gpu/H100-80GB", "2"}}, 6 * kHourMs);
  upsert("prod", {{"gpu/H100-80GB", "4"}}, 12 * kHourMs);
  upsert("research/cv", {{"gpu/H100-80GB", "3"}}, 18 * kHourMs);
  c.Apply(TenantRemoved{"research/cv"}, 20 * kHourMs);
  TenantId prod = c.state.tenants().Find("prod");

  std::vector<OrgPeriod> periods = {{org, Period{"day", 0, 24 * kHourMs}, BillingMode::kFloorBurst},
                                    {prod, Period{"day", 0, 24 * kHourMs}, BillingMode::kFloorBurst}};
  auto lines = Rate({c.state.tenants(), c.state.resource_names(), card, &c.state.billing().floor_changes()}, periods,
                    intervals);
  ASSERT_TRUE(lines.has_value()) << lines.error().message();
  std::map<std::string, __int128> quantity;
  std::map<std::string, int64_t> amount;
  for (const LedgerLine& l : *lines) {
    if (l.kind != EntryKind::kFloor) continue;
    quantity[l.tenant] += l.quantity;
    amount[l.tenant] += l.amount;
  }
  EXPECT_EQ(quantity["research/nlp"], __int128{72} * kGpuUnit * kHourMs);
  EXPECT_EQ(amount["research/nlp"], 180000000);
  EXPECT_EQ(amount["research/cv"], 15000000) << "a tenant removed within the period pays for the part it held";
  EXPECT_EQ(amount["research"], 285000000);
  EXPECT_EQ(quantity["research"] + quantity["research/nlp"] + quantity["research/cv"],
            __int128{8 * 24} * kGpuUnit * kHourMs);
  EXPECT_EQ(amount["prod"], 120000000) << "an org created at noon pays for half the day";

  // Without the history the guarantees when rated are taken as held all day (nlp 2 × 24 h).
  auto flat = Rate({c.state.tenants(), c.state.resource_names(), card}, periods, intervals);
  ASSERT_TRUE(flat.has_value());
  int64_t nlp_flat = 0;
  for (const LedgerLine& l : *flat) nlp_flat += l.kind == EntryKind::kFloor && l.tenant == "research/nlp" ? l.amount : 0;
  EXPECT_EQ(nlp_flat, 120000000);
}

TEST_F(RatingTest, InvoiceBreakdownsEachAddUpToTheTotal) {
  std::vector<LedgerEntry> entries;
  for (LedgerLine& l : RateDay(BillingMode::kFloorBurst)) entries.push_back({static_cast<int64_t>(entries.size() + 1), l, "", "", ""});
  // A correction after the fact is a new line, never an edit.
  LedgerLine fix;
  fix.period = "day";
  fix.tenant = "research/cv";
  fix.kind = EntryKind::kAdjustment;
  fix.amount = -1920000;
  fix.note = "CPU waived";
  entries.push_back({static_cast<int64_t>(entries.size() + 1), fix, "", "", ""});
  auto built = BuildInvoice(entries, "research", "day", "USD");
  ASSERT_TRUE(built.has_value()) << built.error().message();
  Invoice& inv = *built;
  EXPECT_EQ(inv.total, 540000000);  // 541.92 − 1.92
  for (const auto* m : {&inv.by_team, &inv.by_project, &inv.by_user, &inv.by_model, &inv.by_class}) {
    int64_t s = 0;
    for (const auto& [k, v] : *m) s += v;
    EXPECT_EQ(s, inv.total);
  }
  EXPECT_EQ(inv.by_team["(org)"], 120000000);
  EXPECT_EQ(inv.by_team["research/nlp"], 360000000);
  EXPECT_EQ(inv.by_team["research/cv"], 60000000);
  EXPECT_EQ(inv.by_class["floor"], 480000000);
  EXPECT_EQ(inv.by_class["burstable"], 61920000);
  EXPECT_EQ(inv.by_class["adjustment"], -1920000);
  std::string csv = InvoiceCsv(inv);
  EXPECT_NE(csv.find("research/nlp,research/nlp,,,floor,gpu/H100-80GB,,,144.00,2.50,1.00,1.00,360.00,USD,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("total,,,,,,,,540.00,USD"), std::string::npos) << csv;
}

// A reservation is billed as its own line for its windows in the period, used or not, and until
// it was cancelled; runs inside it are priced at 0. cv books 4 GPUs for 2 h and 3 h (two windows,
// the second half outside the day), and 2 GPUs for 5 h cancelled after 1 h; it runs 4 GPUs for
// 1 h inside the first.
TEST_F(RatingTest, AReservationIsBilledForItsWindowsUsedOrNotAndItsRunsAreCovered) {
  ResourceId h100 = c.Res("gpu/H100-80GB");
  CapacityReservation train;
  train.spec.name = "train";
  train.spec.tenant = cv;
  train.spec.gpu_resource = h100;
  train.spec.gpus = 4;
  train.spec.windows = {{2 * kHourMs, 4 * kHourMs}, {22 * kHourMs, 25 * kHourMs}};
  train.holds = {{{NodeId(0), 4}}, {{NodeId(0), 4}}};
  CapacityReservation gone = train;
  gone.spec.name = "gone";
  gone.spec.gpus = 2;
  gone.spec.windows = {{5 * kHourMs, 10 * kHourMs}};
  gone.holds = {{{NodeId(1), 2}}};
  gone.state = ReservationState::kCancelled;
  gone.cancelled_ms = 6 * kHourMs;
  std::vector<CapacityReservation> reservations = {train, gone};
  UsageInterval run;
  run.tenant = cv;
  run.gpu_resource = h100;
  run.gpu = 4 * kGpuUnit;
  run.usage_class = UsageClass::kReserved;
  run.start_ms = 2 * kHourMs;
  run.end_ms = 3 * kHourMs;
  std::vector<OrgPeriod> periods = {{org, Period{"day", 0, 24 * kHourMs}, BillingMode::kUsage}};
  auto lines = Rate({c.state.tenants(), c.state.resource_names(), card, nullptr, &reservations}, periods, {run});
  ASSERT_TRUE(lines.has_value()) << lines.error().message();
  std::map<std::string, const LedgerLine*> by;
  for (const LedgerLine& l : *lines) by[std::string(EntryKindName(l.kind)) + " " + l.note] = &l;
  ASSERT_EQ(by.size(), 3u);
  const LedgerLine* t = by.at("reservation reservation 'train'");
  EXPECT_EQ(t->quantity, static_cast<__int128>(4) * kGpuUnit * 4 * kHourMs) << "2 h + the 2 h of the second window in the day";
  EXPECT_EQ(t->amount, 16 * 2500000) << "16 GPU-hours at 2.50, no premium";
  EXPECT_EQ(t->tenant, "research/cv");
  EXPECT_EQ(by.at("reservation reservation 'gone'")->amount, 2 * 2500000) << "2 GPUs for the hour before its cancel";
  const LedgerLine* used = by.at("usage covered by its reservation");
  EXPECT_EQ(used->usage_class, UsageClass::kReserved);
  EXPECT_EQ(used->quantity, static_cast<__int128>(4) * kGpuUnit * kHourMs);
  EXPECT_EQ(used->amount, 0);
  std::vector<LedgerEntry> entries;
  for (const LedgerLine& l : *lines) entries.push_back({static_cast<int64_t>(entries.size() + 1), l, "", "", ""});
  Invoice inv = BuildInvoice(entries, "research", "day", "USD").value();
  EXPECT_EQ(inv.by_class["reservation"], 18 * 2500000);
  EXPECT_EQ(inv.total, 18 * 2500000);
}

TEST_F(RatingTest, AModelWithoutAPriceIsRefusedByName) {
  card.gpu_hour.clear();
  card.gpu_hour["A100-80GB"] = 1;
  std::vector<OrgPeriod> periods = {{org, Period{"day", 0, 24 * kHourMs}, BillingMode::kUsage}};
  auto lines = Rate({c.state.tenants(), c.state.resource_names(), card}, periods, intervals);
  ASSERT_FALSE(lines.has_value());
  EXPECT_NE(lines.error().message().find("no price for H100-80GB"), std::string::npos) << lines.error().message();
}

// Lines whose sum leaves 64 bits make the invoice an error, not a total wrapped to the other sign.
TEST(InvoiceTest, AnInvoiceWhoseLinesDoNotFitIsRefusedNotWrapped) {
  std::vector<LedgerEntry> entries;
  for (int i = 0; i < 2; ++i) {
    LedgerLine l;
    l.period = "2026-11";
    l.tenant = "research/cv";
    l.kind = EntryKind::kAdjustment;
    l.amount = INT64_MAX / 2 + 1;
    entries.push_back({i + 1, l, "", "", ""});
  }
  auto inv = BuildInvoice(entries, "research", "2026-11", "USD");
  ASSERT_FALSE(inv.has_value()) << inv->total;
  EXPECT_NE(inv.error().message().find("does not fit"), std::string::npos) << inv.error().message();
}

}  // namespace
}  // namespace allot
