#include "metering/business_hours.h"

#include <array>
#include <vector>

#include "core/calendar.h"

namespace allot {
namespace {

constexpr std::array<const char*, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr int64_t kDayS = 86400;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t from = 0;
  for (size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep, from)) {
    out.push_back(s.substr(from, at - from));
    from = at + 1;
  }
  out.push_back(s.substr(from));
  return out;
}

std::optional<int> Day(std::string_view name) {
  for (size_t i = 0; i < kDays.size(); ++i) {
    if (name == kDays[i]) return static_cast<int>(i);
  }
  return std::nullopt;
}

// "Mon-Fri,Sun" → a mask; a range may wrap ("Fri-Mon").
std::optional<uint8_t> Days(std::string_view text) {
  uint8_t mask = 0;
  for (std::string_view item : Split(text, ',')) {
    std::vector<std::string_view> ends = Split(item, '-');
    if (ends.size() > 2) return std::nullopt;
    std::optional<int> from = Day(ends[0]);
    std::optional<int> to = Day(ends.back());
    if (!from || !to) return std::nullopt;
    for (int d = *from;; d = (d + 1) % 7) {
      mask |= static_cast<uint8_t>(1u << d);
      if (d == *to) break;
    }
  }
  return mask;
}

// "08:00" → 480; "24:00" allowed (a closing at midnight).
std::optional<int32_t> Minutes(std::string_view t) {
  if (t.size() != 5 || t[2] != ':') return std::nullopt;
  for (size_t i : {0, 1, 3, 4}) {
    if (t[i] < '0' || t[i] > '9') return std::nullopt;
  }
  int32_t h = (t[0] - '0') * 10 + (t[1] - '0');
  int32_t m = (t[3] - '0') * 10 + (t[4] - '0');
  if (m > 59 || h > 24 || (h == 24 && m != 0)) return std::nullopt;
  return h * 60 + m;
}

bool ZoneName(std::string_view z) {
  if (z.empty() || z[0] == '/' || z.find("..") != std::string_view::npos) return false;
  for (char c : z) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
              c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

std::string Clock(int32_t min) {
  std::string s = "00:00";
  s[0] = static_cast<char>('0' + min / 600);
  s[1] = static_cast<char>('0' + min / 60 % 10);
  s[3] = static_cast<char>('0' + min % 60 / 10);
  s[4] = static_cast<char>('0' + min % 10);
  return s;
}

int64_t LocalSeconds(const TimeZone& tz, int64_t utc_ms) {
  int64_t utc_s = FloorDiv(utc_ms, 1000);
  return utc_s + tz.OffsetAt(utc_s);
}

// Monday 0 … Sunday 6 of a day counted from 1970-01-01, a Thursday.
int Weekday(int64_t day) { return static_cast<int>(((day + 3) % 7 + 7) % 7); }

}  // namespace

Result<BusinessHours> ParseBusinessHours(std::string_view text, const std::string& field) {
  auto bad = [&](const std::string& why) {
    return Err(InvalidArgument(field + ": '" + std::string(text) + "' " + why +
                               "; expected '<days> <HH:MM>-<HH:MM> <time zone>' such as 'Mon-Fri 08:00-19:00 Europe/Berlin'"));
  };
  std::vector<std::string_view> parts = Split(text, ' ');
  if (parts.size() != 3) return bad("is not three parts separated by single spaces");
  BusinessHours h;
  std::optional<uint8_t> days = Days(parts[0]);
  if (!days) return bad("has days '" + std::string(parts[0]) + "' that are not Mon, Tue, Wed, Thu, Fri, Sat, Sun or ranges of them");
  h.days = *days;
  std::vector<std::string_view> times = Split(parts[1], '-');
  std::optional<int32_t> open = times.size() == 2 ? Minutes(times[0]) : std::nullopt;
  std::optional<int32_t> close = times.size() == 2 ? Minutes(times[1]) : std::nullopt;
  if (!open || !close) return bad("has hours '" + std::string(parts[1]) + "' that are not HH:MM-HH:MM from 00:00 to 24:00");
  if (*open >= *close) return bad("opens at " + Clock(*open) + ", not before it closes at " + Clock(*close));
  h.open_min = *open;
  h.close_min = *close;
  if (!ZoneName(parts[2])) return bad("has time zone '" + std::string(parts[2]) + "' that is not an IANA name");
  h.zone = std::string(parts[2]);
  return h;
}

std::string FormatBusinessHours(const BusinessHours& h) {
  std::string days;
  for (int d = 0; d < 7; ++d) {
    if (!((h.days >> d) & 1)) continue;
    int end = d;
    while (end + 1 < 7 && ((h.days >> (end + 1)) & 1)) ++end;
    if (!days.empty()) days += ",";
    days += kDays[d];
    if (end > d) days += std::string("-") + kDays[end];
    d = end;
  }
  return days + " " + Clock(h.open_min) + "-" + Clock(h.close_min) + " " + h.zone;
}

bool WithinBusinessHours(const BusinessHours& hours, const TimeZone& tz, int64_t utc_ms) {
  return !OutOfHoursSince(hours, tz, utc_ms).has_value();
}

std::optional<int64_t> OutOfHoursSince(const BusinessHours& hours, const TimeZone& tz, int64_t utc_ms) {
  const int64_t local = LocalSeconds(tz, utc_ms);
  const int64_t today = FloorDiv(local, kDayS);
  // Back day by day to the last business day's closing at or before now (at most a week back).
  for (int64_t day = today; day >= today - 7; --day) {
    if (!((hours.days >> Weekday(day)) & 1)) continue;
    const int64_t open = day * kDayS + hours.open_min * 60;
    const int64_t close = day * kDayS + hours.close_min * 60;
    if (open <= local && local < close) return std::nullopt;
    if (close <= local) return close;
  }
  return std::nullopt;  // no business day at all: never out of hours (the parser refuses that)
}

}  // namespace allot
