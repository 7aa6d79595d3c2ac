#include "core/calendar.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/quantity.h"

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

std::string FormatWhen(int64_t ms) { return LooksLikeWallClock(ms) ? FormatRfc3339(ms) : "t=" + FormatSeconds(ms) + "s"; }

std::optional<int64_t> ParseRfc3339(std::string_view v) {
  // YYYY-MM-DDTHH:MM:SS, optional fraction, then Z or ±HH:MM.
  auto digits = [&](size_t at, size_t n, int& out) {
    if (at + n > v.size()) return false;
    out = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (v[i] < '0' || v[i] > '9') return false;
      out = out * 10 + (v[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, s;
  if (!digits(0, 4, y) || v.size() < 20 || v[4] != '-' || !digits(5, 2, mo) || v[7] != '-' || !digits(8, 2, d) ||
      (v[10] != 'T' && v[10] != 't') || !digits(11, 2, h) || v[13] != ':' || !digits(14, 2, mi) || v[16] != ':' ||
      !digits(17, 2, s)) {
    return std::nullopt;
  }
  size_t at = 19;
  int64_t frac_ms = 0;
  if (v[at] == '.') {
    size_t n = 0;
    for (++at; at < v.size() && v[at] >= '0' && v[at] <= '9'; ++at, ++n) {
      if (n < 3) frac_ms = frac_ms * 10 + (v[at] - '0');
    }
    if (n == 0) return std::nullopt;
    for (; n < 3; ++n) frac_ms *= 10;
  }
  int64_t offset_min = 0;
  if (at < v.size() && (v[at] == 'Z' || v[at] == 'z') && at + 1 == v.size()) {
  } else if (at + 6 == v.size() && (v[at] == '+' || v[at] == '-') && v[at + 3] == ':') {
    int oh, om;
    if (!digits(at + 1, 2, oh) || !digits(at + 4, 2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_min = (v[at] == '-' ? -1 : 1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return std::nullopt;
  const chr::year_month_day ymd{chr::year{y}, chr::month{static_cast<unsigned>(mo)}, chr::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  const int64_t days = chr::sys_days{ymd}.time_since_epoch().count();
  return ((days * 24 + h) * 60 + mi - offset_min) * 60000 + int64_t{s} * 1000 + frac_ms;
}

}  // namespace allot
