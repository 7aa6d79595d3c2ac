// Business hours: parsed strictly, read in the tenant's zone (DST included).
#include "metering/business_hours.h"

#include <gtest/gtest.h>

#include "billing/zoneinfo.h"
#include "core/calendar.h"

namespace allot {
namespace {

int64_t Utc(int64_t y, unsigned mo, unsigned d, int64_t h, int64_t min = 0) {
  return ((DaysFromCivil(y, mo, d) * 24 + h) * 60 + min) * 60'000;
}

BusinessHours Hours(const std::string& text) {
  auto h = ParseBusinessHours(text, "business_hours");
  EXPECT_TRUE(h.has_value()) << h.error().message();
  return h.value_or(BusinessHours{});
}

TEST(BusinessHours, ParsesDaysRangesListsAndWrapsAndFormatsThemBack) {
  BusinessHours h = Hours("Mon-Fri 08:00-19:00 Europe/Berlin");
  EXPECT_EQ(h.days, 0b0011111);
  EXPECT_EQ(h.open_min, 8 * 60);
  EXPECT_EQ(h.close_min, 19 * 60);
  EXPECT_EQ(h.zone, "Europe/Berlin");
  EXPECT_EQ(FormatBusinessHours(h), "Mon-Fri 08:00-19:00 Europe/Berlin");
  EXPECT_EQ(FormatBusinessHours(Hours("Mon,Wed,Fri 09:30-24:00 UTC")), "Mon,Wed,Fri 09:30-24:00 UTC");
  EXPECT_EQ(FormatBusinessHours(Hours("Sat-Mon 00:00-12:00 UTC")), "Mon,Sat-Sun 00:00-12:00 UTC");
}

TEST(BusinessHours, RefusesBadSpecsNamingFieldValueAndExpectedForm) {
  const char* bad[] = {"",
                       "Mon-Fri 08:00-19:00",
                       "Mon-Fri  08:00-19:00 UTC",
                       "Monday 08:00-19:00 UTC",
                       "Mon-Fri-Sat 08:00-19:00 UTC",
                       "Mon-Fri 8:00-19:00 UTC",
                       "Mon-Fri 08:00-24:30 UTC",
                       "Mon-Fri 08:60-19:00 UTC",
                       "Mon-Fri 19:00-08:00 UTC",
                       "Mon-Fri 08:00-08:00 UTC",
                       "Mon-Fri 08:00-19:00 ../etc/passwd",
                       "Mon-Fri 08:00-19:00 Europe/Berlin extra"};
  for (const char* text : bad) {
    auto h = ParseBusinessHours(text, "tenant.business_hours");
    ASSERT_FALSE(h.has_value()) << text;
    const std::string& m = h.error().message();
    EXPECT_EQ(m.rfind("tenant.business_hours: '" + std::string(text) + "'", 0), 0u) << m;
    EXPECT_NE(m.find("expected '<days> <HH:MM>-<HH:MM> <time zone>'"), std::string::npos) << m;
  }
  EXPECT_NE(ParseBusinessHours("Mon-Fri 19:00-08:00 UTC", "f").error().message().find("opens at 19:00, not before it closes at 08:00"),
            std::string::npos);
}

TEST(BusinessHours, OpeningIsInsideAndClosingIsOutside) {
  BusinessHours h = Hours("Mon-Fri 08:00-19:00 UTC");
  TimeZone utc = TimeZone::Utc();
  // 2026-11-23 is a Monday.
  EXPECT_FALSE(WithinBusinessHours(h, utc, Utc(2026, 11, 23, 7, 59)));
  EXPECT_TRUE(WithinBusinessHours(h, utc, Utc(2026, 11, 23, 8)));
  EXPECT_TRUE(WithinBusinessHours(h, utc, Utc(2026, 11, 23, 19) - 1));
  EXPECT_FALSE(WithinBusinessHours(h, utc, Utc(2026, 11, 23, 19)));
}

TEST(BusinessHours, AWeekendIsOneStretchFromFridaysClosingToMondaysOpening) {
  BusinessHours h = Hours("Mon-Fri 08:00-19:00 UTC");
  TimeZone utc = TimeZone::Utc();
  const int64_t friday_close_local_s = Utc(2026, 11, 27, 19) / 1000;
  EXPECT_EQ(OutOfHoursSince(h, utc, Utc(2026, 11, 27, 20)), friday_close_local_s);
  EXPECT_EQ(OutOfHoursSince(h, utc, Utc(2026, 11, 29, 12)), friday_close_local_s);  // Sunday noon
  EXPECT_EQ(OutOfHoursSince(h, utc, Utc(2026, 11, 30, 7)), friday_close_local_s);   // Monday before opening
  EXPECT_EQ(OutOfHoursSince(h, utc, Utc(2026, 11, 30, 9)), std::nullopt);
  EXPECT_EQ(OutOfHoursSince(h, utc, Utc(2026, 11, 30, 19)), Utc(2026, 11, 30, 19) / 1000);  // a new stretch
}

TEST(BusinessHours, BerlinHoursFollowSummerTime) {
  auto berlin = LoadTimeZone("Europe/Berlin");
  ASSERT_TRUE(berlin.has_value()) << berlin.error().message();
  BusinessHours h = Hours("Mon-Fri 08:00-19:00 Europe/Berlin");
  // Friday 27 March 2026, CET (+1): 08:00 local is 07:00 UTC.
  EXPECT_FALSE(WithinBusinessHours(h, *berlin, Utc(2026, 3, 27, 6, 30)));
  EXPECT_TRUE(WithinBusinessHours(h, *berlin, Utc(2026, 3, 27, 7)));
  // Clocks go forward on Sunday 29 March. Monday 30 March, CEST (+2): 08:00 local is 06:00 UTC.
  EXPECT_TRUE(WithinBusinessHours(h, *berlin, Utc(2026, 3, 30, 6, 30)));
  EXPECT_FALSE(WithinBusinessHours(h, *berlin, Utc(2026, 3, 30, 5, 59)));
  // 19:00 CEST is 17:00 UTC.
  EXPECT_FALSE(WithinBusinessHours(h, *berlin, Utc(2026, 3, 30, 17)));
  // The weekend across the change is one stretch, from Friday 19:00 CET (18:00 UTC).
  auto since = OutOfHoursSince(h, *berlin, Utc(2026, 3, 30, 5));
  ASSERT_TRUE(since.has_value());
  EXPECT_EQ(berlin->LocalToUtc(*since) * 1000, Utc(2026, 3, 27, 18));
}

}  // namespace
}  // namespace allot
