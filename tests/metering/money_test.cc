// Money is exact: prices parsed from their decimals, amounts rounded once per line, half up.
#include <gtest/gtest.h>

#include "core/resources.h"
#include "metering/ledger.h"
#include "metering/money.h"

namespace allot {
namespace {

TEST(Money, ParsesPricesExactlyFromTheirDecimals) {
  EXPECT_EQ(*ParseMicros("2.50", "p"), 2500000);
  EXPECT_EQ(*ParseMicros("0.000001", "p"), 1);
  EXPECT_EQ(*ParseMicros("3", "p"), 3000000);
  EXPECT_EQ(*ParseMicros("0.1", "p"), 100000);  // a double would give 0.1000000000000000055…
  for (const char* bad : {"", "-1", "1.0000001", "1e3", "1.", ".", "2,50", "0x10"}) {
    auto v = ParseMicros(bad, "gpu_hour.H100-80GB");
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_NE(v.error().message().find("gpu_hour.H100-80GB: '" + std::string(bad) + "'"), std::string::npos)
        << v.error().message();
  }
}

// 9223372036854.775808 passed the whole-part check and wrapped to INT64_MIN; its negation
// stayed INT64_MIN. Every amount is at most a billion units of the currency.
TEST(Money, RefusesAmountsPastABillionUnitsInsteadOfWrapping) {
  EXPECT_EQ(*ParseMicros("1000000000", "p"), kMaxMicros);
  EXPECT_EQ(*ParseSignedMicros("-1000000000", "p"), -kMaxMicros);
  for (const char* bad : {"9223372036854.775808", "-9223372036854.775808", "9223372036854.775807", "1000000000.000001",
                          "99999999999999999999"}) {
    auto v = ParseSignedMicros(bad, "amount");
    ASSERT_FALSE(v.has_value()) << bad << " → " << *v;
    EXPECT_NE(v.error().message().find("at most 1000000000"), std::string::npos) << v.error().message();
  }
}

TEST(Money, SumsThatDoNotFitAreRefusedNotWrapped) {
  EXPECT_EQ(*AddMicros(INT64_MAX - 1, 1, "total"), INT64_MAX);
  EXPECT_EQ(*AddMicros(INT64_MIN + 1, -1, "total"), INT64_MIN);
  auto over = AddMicros(INT64_MAX, 1, "invoice org 2026-11");
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message().rfind("invoice org 2026-11: ", 0), 0u) << over.error().message();
  EXPECT_FALSE(AddMicros(INT64_MIN, -1, "total").has_value());
}

TEST(Money, FormatsMicrosWithTwoDecimalsAtLeast) {
  EXPECT_EQ(FormatMicros(2500000), "2.50");
  EXPECT_EQ(FormatMicros(357143), "0.357143");
  EXPECT_EQ(FormatMicros(-1500000), "-1.50");
  EXPECT_EQ(FormatMicros(0), "0.00");
}

TEST(Money, MulDivRoundsHalfUpExactly) {
  struct Case { __int128 q, p, d1, d2; int64_t want; const char* why; };
  const Case cases[] = {
      {1, 1, 2, 1, 1, "1/2 = 0.5 rounds up"},
      {1, 1, 3, 1, 0, "1/3 = 0.33 rounds down"},
      {5, 1, 2, 1, 3, "5/2 = 2.5 → 3"},
      {7, 3, 2, 5, 2, "21/10 = 2.1 → 2"},
      // 3·10^26 × 4·10^19 / (7.56·10^10 × 10^12) = 1.587…·10^23: past int64, flagged below.
  };
  for (const Case& c : cases) {
    bool overflow = false;
    EXPECT_EQ(MulDivRoundHalfUp(c.q, c.p, c.d1, c.d2, &overflow), c.want) << c.why;
    EXPECT_FALSE(overflow) << c.why;
  }
  bool overflow = false;
  MulDivRoundHalfUp(static_cast<__int128>(3e26), static_cast<__int128>(4e19), 75600000000, static_cast<__int128>(1e12), &overflow);
  EXPECT_TRUE(overflow);
}

// One line: quantity (resource base units × ms) × unit price × premiums, rounded once.
TEST(Money, PricesSharesOfAGpuByTheirUnitsWithWorkedSums) {
  constexpr int64_t kHour = 3600000;
  constexpr int64_t kH100 = 2500000;  // 2.50 a GPU-hour
  struct Case { const char* resource; __int128 quantity; int64_t price, burst, topo, want; const char* sum; };
  const Case cases[] = {
      {"gpu/H100-80GB", __int128{kGpuUnit} * kHour, kH100, kPpm, kPpm, 2500000, "1 GPU × 1 h × 2.50 = 2.50"},
      {"gpu/H100-80GB", __int128{3000} * kHour, kH100, kPpm, kPpm, 357143, "MIG 1g (1/7) × 1 h × 2.50 = 0.3571428… → 0.357143"},
      {"gpu/H100-80GB", __int128{6300} * kHour, kH100, kPpm, kPpm, 750000, "MPS 30% × 1 h × 2.50 = 0.75"},
      {"gpu/H100-80GB", __int128{5250} * 5400000, kH100, 1200000, kPpm, 1125000,
       "time-slice 1/4 × 1.5 h × 2.50 × 1.2 burst = 1.125"},
      {"gpu/H100-80GB", __int128{8 * kGpuUnit} * kHour, kH100, 1200000, 1100000, 26400000,
       "8 GPUs × 1 h × 2.50 × 1.2 burst × 1.1 nvlink = 26.40"},
      {"gpu/H100-80GB", __int128{kGpuUnit} * 1800000, 1, kPpm, kPpm, 1, "1 GPU × 0.5 h × 0.000001 = 0.5 micro → 1 (half up)"},
      {"gpu/H100-80GB", __int128{3000} * kHour, 1, kPpm, kPpm, 0, "1/7 GPU × 1 h × 0.000001 = 0.14 micro → 0"},
      {"cpu", __int128{4000} * 2 * kHour, 20000, kPpm, kPpm, 160000, "4 CPUs × 2 h × 0.02 = 0.16"},
      {"memory", __int128{512 * 1024} * 2 * kHour, 3000, kPpm, kPpm, 3072000, "512 GiB × 2 h × 0.003 = 3.072"},
  };
  for (const Case& c : cases) {
    auto v = PriceLine(c.resource, c.quantity, c.price, c.burst, c.topo);
    ASSERT_TRUE(v.has_value()) << c.sum << ": " << v.error().message();
    EXPECT_EQ(*v, c.want) << c.sum;
  }
  EXPECT_FALSE(PriceLine("gpus", 1, 1, kPpm, kPpm).has_value());
}

}  // namespace
}  // namespace allot
