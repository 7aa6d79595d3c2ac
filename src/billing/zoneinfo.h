// Reads IANA time zones from the TZif files of package tzdata.
#pragma once

#include <string>

#include "metering/time_zone.h"

namespace allot {

inline constexpr const char* kZoneinfoDir = "/usr/share/zoneinfo";

// "Europe/Berlin" → the zone from <dir>/Europe/Berlin; "UTC" always works, file or not.
// Errors name the zone and what was expected.
Result<TimeZone> LoadTimeZone(const std::string& name, const std::string& dir = kZoneinfoDir);

}  // namespace allot
