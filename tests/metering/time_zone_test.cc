// Billing months in an org's time zone, from the tzdata TZif files, DST-correct.
#include <gtest/gtest.h>

#include "billing/zoneinfo.h"
#include "metering/time_zone.h"

namespace allot {
namespace {

constexpr int64_t kHourMs = 3600 * 1000;

// 2025-03-31T22:00:00Z and friends, as UTC ms.
int64_t Utc(int64_t y, unsigned mo, unsigned d, int64_t h = 0) { return (DaysFromCivil(y, mo, d) * 24 + h) * kHourMs; }

TimeZone Zone(const std::string& name) {
  auto tz = LoadTimeZone(name);
  EXPECT_TRUE(tz.has_value()) << tz.error().message();
  return tz.value_or(TimeZone::Utc());
}

TEST(TimeZone, BerlinMonthsStartAtLocalMidnightInWinterAndSummerTime) {
  TimeZone berlin = Zone("Europe/Berlin");
  struct Case { int64_t y; unsigned m; int64_t want_ms; const char* why; };
  const Case cases[] = {
      {2025, 3, Utc(2025, 2, 28, 23), "CET (+1): 1 March 00:00 local = 28 Feb 23:00 UTC"},
      {2025, 4, Utc(2025, 3, 31, 22), "CEST (+2) since 30 March: 1 April 00:00 local = 31 March 22:00 UTC"},
      {2025, 11, Utc(2025, 10, 31, 23), "CET again since 26 October"},
      {2100, 4, 4110213600000, "past the TZif table: from the footer rule CET-1CEST,M3.5.0,M10.5.0/3"},
      {2100, 11, 4128706800000, "footer rule, winter"},
  };
  for (const Case& c : cases) EXPECT_EQ(MonthStartMs(berlin, c.y, c.m), c.want_ms) << c.why;
}

TEST(TimeZone, MonthsWithADstChangeHaveAnHourLessOrMore) {
  TimeZone berlin = Zone("Europe/Berlin");
  // March 2025: 31 days × 24 h − 1 h (clocks forward on the 30th) = 743 h.
  Period march = *ParseMonth(berlin, "2025-03");
  EXPECT_EQ(march.label, "2025-03");
  EXPECT_EQ(march.end_ms - march.start_ms, 743 * kHourMs);
  // October 2025: 31 × 24 + 1 (clocks back on the 26th) = 745 h.
  Period october = *ParseMonth(berlin, "2025-10");
  EXPECT_EQ(october.end_ms - october.start_ms, 745 * kHourMs);
  // UTC has no DST: 744 h.
  Period utc = *ParseMonth(TimeZone::Utc(), "2025-03");
  EXPECT_EQ(utc.end_ms - utc.start_ms, 744 * kHourMs);
}

TEST(TimeZone, DaysAcrossDstChangesLastTwentyThreeAndTwentyFiveHours) {
  TimeZone berlin = Zone("Europe/Berlin");
  auto day = [&](int64_t y, unsigned m, unsigned d) {
    int64_t local = DaysFromCivil(y, m, d) * 86400;
    return (berlin.LocalToUtc(local + 86400) - berlin.LocalToUtc(local)) / 3600;
  };
  EXPECT_EQ(day(2025, 3, 30), 23);  // 02:00 → 03:00
  EXPECT_EQ(day(2025, 10, 26), 25);  // 03:00 → 02:00
  EXPECT_EQ(day(2025, 6, 1), 24);
}

TEST(TimeZone, AmbiguousLocalTimesTakeTheEarlierInstantAndSkippedOnesTheGapsEnd) {
  TimeZone berlin = Zone("Europe/Berlin");
  // 26 Oct 2025 02:30 local happens twice: first at 00:30 UTC (CEST).
  EXPECT_EQ(berlin.LocalToUtc((DaysFromCivil(2025, 10, 26) * 24 + 2) * 3600 + 1800),
            (DaysFromCivil(2025, 10, 26) * 24) * 3600 + 1800);
  // 30 Mar 2025 02:30 local never happens: the gap ends at 01:00 UTC.
  EXPECT_EQ(berlin.LocalToUtc((DaysFromCivil(2025, 3, 30) * 24 + 2) * 3600 + 1800),
            (DaysFromCivil(2025, 3, 30) * 24 + 1) * 3600);
}

TEST(TimeZone, SouthernHemisphereRulesWork) {
  TimeZone sydney = Zone("Australia/Sydney");
  // AEDT (+11) until 6 April 2025: 1 April 00:00 local = 31 March 13:00 UTC.
  EXPECT_EQ(MonthStartMs(sydney, 2025, 4), Utc(2025, 3, 31, 13));
  EXPECT_EQ(MonthStartMs(sydney, 2100, 4), 4110181200000);  // footer rule
  EXPECT_EQ(MonthStartMs(sydney, 2100, 10), 4125996000000);
}

TEST(TimeZone, MonthContainingAnInstantIsTheLocalMonth) {
  TimeZone berlin = Zone("Europe/Berlin");
  // 31 March 2025 22:30 UTC is already 1 April 00:30 in Berlin.
  Period p = MonthContaining(berlin, Utc(2025, 3, 31, 22) + 1800000);
  EXPECT_EQ(p.label, "2025-04");
  EXPECT_EQ(p.start_ms, Utc(2025, 3, 31, 22));
  EXPECT_EQ(MonthContaining(TimeZone::Utc(), Utc(2025, 3, 31, 22)).label, "2025-03");
}

TEST(TimeZone, BadNamesAndBytesAreRefusedSayingWhatWasExpected) {
  auto missing = LoadTimeZone("Europe/Atlantis");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("Europe/Atlantis"), std::string::npos);
  EXPECT_FALSE(LoadTimeZone("../../etc/passwd").has_value());
  EXPECT_FALSE(LoadTimeZone("/etc/localtime").has_value());
  auto month = ParseMonth(TimeZone::Utc(), "2025-13");
  ASSERT_FALSE(month.has_value());
  EXPECT_NE(month.error().message().find("YYYY-MM"), std::string::npos);
}

}  // namespace
}  // namespace allot
