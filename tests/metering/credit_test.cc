// Credits for GPU time lost to a node fault: the model's price, no premium, negative, in the
// period of the tenant's org; bad input names the field and changes nothing.
#include "metering/credit.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace allot {
namespace {

constexpr int64_t kNov1 = 1793491200000;  // 2026-11-01T00:00:00Z
constexpr __int128 kHourMs = 3600 * 1000;

class CreditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    billing_.card.gpu_hour["H100-80GB"] = 2500000;  // 2.50 per GPU-hour
    billing_.card.burst_premium = 2000000;           // not applied to credits
    c_.AddNodes("h", 1, "z", "r", 64, 512, "H100-80GB", 8);
    leaf_ = c_.Tenant("research");
    leaf_ = c_.Tenant("research/nlp");
  }
  FaultLoss Loss(__int128 unit_ms) {
    return FaultLoss{leaf_, c_.Res("gpu/H100-80GB"), unit_ms, "h0", "XID 79 on GPU 3"};
  }
  testing::Cluster c_;
  BillingSetup billing_;
  TenantId leaf_;
};

TEST_F(CreditTest, CreditsLostGpuTimeAtTheModelsPriceWithoutPremium) {
  // 3 GPUs × 40 min = 2 GPU-h × 2.50 = 5.00, credited: −5.00.
  auto l = FaultCredit(c_.state.tenants(), c_.state.resource_names(), billing_, Loss(3 * kGpuUnit * kHourMs * 2 / 3),
                       kNov1 + 1000);
  ASSERT_TRUE(l.has_value()) << l.error().message();
  EXPECT_EQ(l->kind, EntryKind::kCredit);
  EXPECT_EQ(l->period, "2026-11");
  EXPECT_EQ(l->tenant, "research/nlp");
  EXPECT_EQ(l->resource, "gpu/H100-80GB");
  EXPECT_EQ(l->unit_price, 2500000);
  EXPECT_EQ(l->amount, -5000000);
  EXPECT_EQ(l->note, "node h0: XID 79 on GPU 3");
}

TEST_F(CreditTest, AMigSliceIsCreditedByItsShareRoundedOnceHalfUp) {
  // 1/7 GPU × 1 h × 2.50 = 0.357142857… → 0.357143.
  auto l = FaultCredit(c_.state.tenants(), c_.state.resource_names(), billing_, Loss(kGpuUnit / 7 * kHourMs), kNov1);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->amount, -357143);
}

TEST_F(CreditTest, RefusesNoTimeAnUnknownTenantAndAModelWithoutAPrice) {
  const auto& tree = c_.state.tenants();
  const auto& names = c_.state.resource_names();
  auto none = FaultCredit(tree, names, billing_, Loss(0), kNov1);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("credit.gpu_unit_ms: 0"), std::string::npos);
  FaultLoss bad = Loss(kHourMs);
  bad.tenant = TenantId(999);
  auto unknown = FaultCredit(tree, names, billing_, bad, kNov1);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("credit.tenant: id 999"), std::string::npos);
  BillingSetup unpriced;
  auto no_price = FaultCredit(tree, names, unpriced, Loss(kHourMs), kNov1);
  ASSERT_FALSE(no_price.has_value());
  EXPECT_NE(no_price.error().message().find("no price for H100-80GB"), std::string::npos);
}

}  // namespace
}  // namespace allot
