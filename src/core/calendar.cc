#include "core/calendar.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace allot {

namespace chr = std::chrono;

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  const chr::year_month_day ymd{chr::year{static_cast<int>(y)}, chr::month{m}, chr::day{d}};
  return chr::sys_days{ymd}.time_since_epoch().count();
}

void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d) {
  const chr::year_month_day ymd{chr::sys_days{chr::days{days}}};
  y = static_cast<int>(ymd.year());
  m = static_cast<unsigned>(ymd.month());
  d = static_cast<unsigned>(ymd.day());
}

std::string FormatRfc3339(int64_t ms) {
  // RFC 3339 has four-digit years: an instant outside 0000–9999 is shown at the nearer end.
  constexpr int64_t kFirstMs = -62'167'219'200'000, kLastMs = 253'402'300'799'999;
  const chr::sys_seconds at{chr::seconds{FloorDiv(std::clamp(ms, kFirstMs, kLastMs), 1000)}};
  const chr::sys_days day = chr::floor<chr::days>(at);
  const chr::year_month_day ymd{day};
  const chr::hh_mm_ss hms{at - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02lldZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
  return buf;
}

}  // namespace allot
