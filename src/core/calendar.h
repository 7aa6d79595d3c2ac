// The proleptic Gregorian calendar in whole days since 1970-01-01 (Hinnant's algorithms), for
// billing months (metering) and RFC 3339 times (the API). No time zones here: see
// metering/time_zone.h.
#pragma once

#include <cstdint>

namespace allot {

// a / b rounded toward negative infinity (b > 0).
inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d);

}  // namespace allot
