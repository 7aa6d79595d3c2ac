// A tenant's business hours ("Mon-Fri 08:00-19:00 Europe/Berlin"): the days of the week and the
// local times between which its GPUs are expected to be in use, in an IANA zone. Usage outside
// them raises an alert (alerting/detector.h). Parsed strictly here; whether the zone exists is
// for whoever loads it (billing/zoneinfo.h), so this stays free of the tz database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "metering/time_zone.h"

namespace allot {

struct BusinessHours {
  uint8_t days = 0;        // bit d: weekday d open, Monday 0 … Sunday 6
  int32_t open_min = 0;    // local minutes after midnight, inclusive
  int32_t close_min = 0;   // exclusive; open_min < close_min <= 24 * 60 (no hours across midnight)
  std::string zone;        // "Europe/Berlin", "UTC"
  bool operator==(const BusinessHours&) const = default;
};

// "<days> <HH:MM>-<HH:MM> <zone>": days a comma list of days or day ranges ("Mon-Fri",
// "Mon,Wed,Fri", "Sun-Thu"), English three-letter names; times 00:00 to 24:00, the opening
// before the closing. Errors name `field`, the value and the expected form.
Result<BusinessHours> ParseBusinessHours(std::string_view text, const std::string& field);
// The canonical text: days as ranges where consecutive ("Mon-Fri,Sun 08:00-19:00 Europe/Berlin").
std::string FormatBusinessHours(const BusinessHours& hours);

// Whether `utc_ms` falls within the hours, read in `tz` (the zone named by hours.zone).
bool WithinBusinessHours(const BusinessHours& hours, const TimeZone& tz, int64_t utc_ms);
// Outside the hours: the local wall time (seconds from 1970-01-01 00:00 local) at which the
// current out-of-hours stretch began — the last closing before `utc_ms` — which names the
// stretch (a weekend is one stretch, Friday's closing to Monday's opening). Within the hours:
// nullopt.
std::optional<int64_t> OutOfHoursSince(const BusinessHours& hours, const TimeZone& tz, int64_t utc_ms);

}  // namespace allot
