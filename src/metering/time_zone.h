// Time zones and billing periods in local time. GCC 12's libstdc++ has no std::chrono::tzdb, so a
// zone is Howard Hinnant's date/tz (package libhowardhinnant-date-dev, the library C++20's tzdb
// was made from) over the OS tz database (/usr/share/zoneinfo, package tzdata). date/tz reads a
// zone's transition table only, which tzdata writes out to 2037; past its end the zone's POSIX
// rule (the TZif footer, "CET-1CEST,M3.5.0,M10.5.0/3") is applied by date's Posix::time_zone. A
// TimeZone only computes; billing/zoneinfo.h looks zones up, which reads the database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/calendar.h"
#include "core/status.h"

namespace date {
class time_zone;
}
namespace Posix {
class time_zone;
}

namespace allot {

class TimeZone {
 public:
  static TimeZone Utc();
  // `zone` from date::locate_zone, its table already read (billing/zoneinfo.h), with `footer_rule`, the POSIX rule its
  // TZif file ends with ("" for none), in force past the end of its table. Errors name the zone
  // and a rule that is not understood.
  static Result<TimeZone> Of(const date::time_zone* zone, const std::string& footer_rule);

  const std::string& name() const { return name_; }
  // Seconds east of UTC in force at `utc_s`.
  int32_t OffsetAt(int64_t utc_s) const;
  // The UTC instant of local wall time `local_s` (seconds from 1970-01-01 00:00 local). A time
  // that occurs twice (clocks set back) gives the earlier instant; a time that is skipped
  // (clocks set forward) gives the instant the gap ends.
  int64_t LocalToUtc(int64_t local_s) const;

 private:
  std::string name_ = "UTC";
  const date::time_zone* zone_ = nullptr;  // nullptr: UTC, which needs no database
  std::shared_ptr<const Posix::time_zone> rule_;
  int64_t rule_from_s_ = 0;
};


// A billing period: [start_ms, end_ms) in UTC ms, labelled as people say it ("2025-03").
struct Period {
  std::string label;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  bool operator==(const Period&) const = default;
};

// Local midnight on the first of year-month in `tz`, as UTC ms.
int64_t MonthStartMs(const TimeZone& tz, int64_t year, unsigned month);
// The first local month start after `utc_ms` (MonthContaining(tz, utc_ms).end_ms, without
// building the label: the Meter asks this for every interval).
int64_t NextMonthStartMs(const TimeZone& tz, int64_t utc_ms);
// The local calendar month holding the instant `utc_ms`.
Period MonthContaining(const TimeZone& tz, int64_t utc_ms);
// "2025-03" → that month in `tz`. Errors name the value and the expected form.
Result<Period> ParseMonth(const TimeZone& tz, std::string_view label);

}  // namespace allot
