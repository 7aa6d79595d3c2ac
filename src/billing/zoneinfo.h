// Looks IANA time zones up in the OS tz database (package tzdata) through date/tz.
#pragma once

#include <string>

#include "metering/time_zone.h"

namespace allot {

// Where date/tz reads the database (its build's choice; named in messages).
inline constexpr const char* kZoneinfoDir = "/usr/share/zoneinfo";

// "Europe/Berlin" → that zone; "UTC" always works, database or not. Errors name the zone and
// what was expected.
Result<TimeZone> LoadTimeZone(const std::string& name);

}  // namespace allot
