// Time zones from TZif bytes (RFC 8536; the files under /usr/share/zoneinfo, package tzdata) and
// billing periods in local time. GCC 12's libstdc++ has no std::chrono::tzdb, so this is a small
// reader of its own: the transition table, then the footer's POSIX rule for later years. The
// core reads no file: the bytes come in (billing/zoneinfo.h reads them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.h"
#include "core/status.h"

namespace allot {

class TimeZone {
 public:
  static TimeZone Utc();
  // Parses TZif versions 1–4. Leap-second ("right/") zones are refused: billing counts POSIX
  // time. Errors name the zone and what was malformed.
  static Result<TimeZone> FromTzif(std::string name, std::string_view bytes);

  const std::string& name() const { return name_; }
  // Seconds east of UTC in force at `utc_s`.
  int32_t OffsetAt(int64_t utc_s) const;
  // The UTC instant of local wall time `local_s` (seconds from 1970-01-01 00:00 local). A time
  // that occurs twice (clocks set back) gives the earlier instant; a time that is skipped
  // (clocks set forward) gives the instant the gap ends.
  int64_t LocalToUtc(int64_t local_s) const;

 private:
  std::string name_;
  int32_t initial_ = 0;       // offset before the first transition
  std::vector<int64_t> at_;   // transition instants, UTC seconds, ascending
  std::vector<int32_t> off_;  // offset from at_[i] on
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
