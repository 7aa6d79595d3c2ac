// Rate cards: read exactly; bad ones refused naming file, line, field, value and expectation.
#include <gtest/gtest.h>

#include "billing/rate_card_yaml.h"
#include "billing/zoneinfo.h"

namespace allot {
namespace {

TEST(RateCard, ReadsEveryFieldExactly) {
  auto card = ParseRateCard(R"(currency: EUR
mode: floor+burst
time_zone: Europe/Berlin
gpu_hour: {H100-80GB: 2.50, A100-80GB: 1.333333}
cpu_hour: 0.02
memory_gib_hour: 0.003
burst_premium: 1.2
topology_premium: {nvlink: 1.1, rack: 1.05}
orgs:
  research: {mode: usage, time_zone: America/New_York}
  search: {}
)", "rates.yaml", ZoneCheck::kLookUp);
  ASSERT_TRUE(card.has_value()) << card.error().message();
  EXPECT_EQ(card->currency, "EUR");
  EXPECT_EQ(card->mode, BillingMode::kFloorBurst);
  EXPECT_EQ(card->gpu_hour.at("H100-80GB"), 2500000);
  EXPECT_EQ(card->gpu_hour.at("A100-80GB"), 1333333);
  EXPECT_EQ(card->cpu_hour, 20000);
  EXPECT_EQ(card->memory_gib_hour, 3000);
  EXPECT_EQ(card->burst_premium, 1200000);
  EXPECT_EQ(card->topology_premium[static_cast<int>(Topology::kNvlink)], 1100000);
  EXPECT_EQ(card->topology_premium[static_cast<int>(Topology::kZone)], 1000000);
  EXPECT_EQ(card->ModeOf("research"), BillingMode::kUsage);
  EXPECT_EQ(card->ModeOf("search"), BillingMode::kFloorBurst);
  EXPECT_EQ(card->TimeZoneOf("research"), "America/New_York");
  EXPECT_EQ(card->TimeZoneOf("search"), "Europe/Berlin");
}

TEST(RateCard, BadCardsAreRefusedNamingLineFieldValueAndExpectation) {
  struct Case { const char* yaml; const char* want; };
  const Case cases[] = {
      {"currency: USD\ngpu_hour: {H100-80GB: 2.5000001}\n",
       "rates.yaml:2: gpu_hour.H100-80GB: '2.5000001' is not valid; expected a price per GPU-hour"},
      {"currency: USD\ngpu_hour: {H100-80GB: -1}\n", "rates.yaml:2: gpu_hour.H100-80GB: '-1' is not valid"},
      {"currency: USD\ngpu_hour: {H999: 1}\n", "rates.yaml:2: gpu_hour.H999: 'H999' is not a known GPU model; expected one of:"},
      {"currency: usd\ngpu_hour: {H100-80GB: 1}\n", "rates.yaml:1: currency: 'usd' is not valid; expected three capital letters"},
      {"currency: USD\nmode: spot\ngpu_hour: {H100-80GB: 1}\n", "rates.yaml:2: mode: 'spot' is not a billing mode; expected usage or floor+burst"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\nburst_premium: 1.2x\n", "rates.yaml:3: burst_premium: '1.2x' is not valid; expected a multiplier"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\ntime_zone: Mars/Olympus\n", "rates.yaml:3: time_zone: time zone 'Mars/Olympus' is unknown"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\ngpu_hours: 2\n", "rates.yaml:3: gpu_hours: unknown field; expected one of:"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\ntopology_premium: {node: 2}\n", "rates.yaml:3: topology_premium.node: unknown field"},
      {"currency: USD\n", "rates.yaml:1: gpu_hour: expected a mapping of GPU model to price"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\norgs: {a/b: {}}\n", "rates.yaml:3: orgs: 'a/b' is not an org; expected a top-level tenant name, 1 to 63"},
      // An org name follows the one name rule, and what is echoed is escaped.
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\norgs: {\"..\": {}}\n", "rates.yaml:3: orgs: '..' is not an org"},
      {"currency: USD\ngpu_hour: {H100-80GB: 1}\norgs: {\"a\\eb\": {}}\n", "rates.yaml:3: orgs: 'a\\x1bb' is not an org"},
      {"currency: [USD\n", "rates.yaml:2: malformed YAML"},
  };
  for (const Case& c : cases) {
    auto card = ParseRateCard(c.yaml, "rates.yaml", ZoneCheck::kLookUp);
    ASSERT_FALSE(card.has_value()) << c.yaml;
    EXPECT_NE(card.error().message().find(c.want), std::string::npos) << card.error().message();
  }
}

}  // namespace
}  // namespace allot
