// The proleptic Gregorian calendar in whole days since 1970-01-01 (std::chrono's civil dates), for
// billing months (metering) and RFC 3339 times (the API). No time zones here: see
// metering/time_zone.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace allot {

// a / b rounded toward negative infinity (b > 0).
inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d);

// Unix milliseconds as RFC 3339 UTC to the second: 1795521600000 → "2026-11-24T12:00:00Z".
std::string FormatRfc3339(int64_t ms);
// An RFC 3339 time with its offset ("2026-12-01T09:00:00+01:00", "…Z", an optional fraction,
// milliseconds kept) as Unix milliseconds; nullopt when it is not one or names no real day.
std::optional<int64_t> ParseRfc3339(std::string_view text);
// Whether `ms` reads as a wall-clock time (after 2001-09-09) rather than a simulation's clock,
// which starts at 0: reasons show the former as RFC 3339, the latter as "t=130s".
inline bool LooksLikeWallClock(int64_t ms) { return ms >= 1'000'000'000'000; }
// A time in a reason: RFC 3339 for a wall-clock time, "t=130s" for a simulation's.
std::string FormatWhen(int64_t ms);

}  // namespace allot
