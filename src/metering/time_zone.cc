#include "metering/time_zone.h"

#include <date/tz.h>

#include <chrono>
#include <cstdio>

#include "metering/date_ptz.h"

namespace allot {
namespace {

constexpr int64_t kDay = 86400;

}  // namespace

TimeZone TimeZone::Utc() { return TimeZone(); }

Result<TimeZone> TimeZone::Of(const date::time_zone* zone, const std::string& footer_rule) {
  TimeZone tz;
  tz.name_ = zone->name();
  tz.zone_ = zone;
  // The table's last period runs to the end of time; the rule takes over where it begins.
  tz.rule_from_s_ = zone->get_info(date::sys_days{date::year{2200} / 1 / 1}).begin.time_since_epoch().count();
  if (!footer_rule.empty()) {
    try {
      tz.rule_ = std::make_shared<const Posix::time_zone>(footer_rule);
    } catch (const std::exception& e) {
      return Err(InvalidArgument("time zone '" + tz.name_ + "': its rule '" + footer_rule + "' is not understood (" +
                                 e.what() + ")"));
    }
  }
  return tz;
}

int32_t TimeZone::OffsetAt(int64_t utc_s) const {
  if (zone_ == nullptr) return 0;
  const date::sys_seconds at{std::chrono::seconds{utc_s}};
  const date::sys_info info = rule_ && utc_s >= rule_from_s_ ? rule_->get_info(at) : zone_->get_info(at);
  return static_cast<int32_t>(info.offset.count());
}

int64_t TimeZone::LocalToUtc(int64_t local_s) const {
  if (zone_ == nullptr) return local_s;
  const date::local_seconds at{std::chrono::seconds{local_s}};
  // A local time two days past the table's end is past it in every zone (offsets are under a day).
  const date::local_info info = rule_ && local_s >= rule_from_s_ + 2 * kDay ? rule_->get_info(at) : zone_->get_info(at);
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:  // `first` is the period before the clocks went back
      return local_s - info.first.offset.count();
    case date::local_info::nonexistent:  // `first` ends where the gap does
    default:
      return info.first.end.time_since_epoch().count();
  }
}

int64_t MonthStartMs(const TimeZone& tz, int64_t year, unsigned month) {
  return tz.LocalToUtc(DaysFromCivil(year, month, 1) * kDay) * 1000;
}

int64_t NextMonthStartMs(const TimeZone& tz, int64_t utc_ms) {
  int64_t s = FloorDiv(utc_ms, 1000);
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(s + tz.OffsetAt(s), kDay), y, m, d);
  return m == 12 ? MonthStartMs(tz, y + 1, 1) : MonthStartMs(tz, y, m + 1);
}

Period MonthContaining(const TimeZone& tz, int64_t utc_ms) {
  int64_t s = FloorDiv(utc_ms, 1000);
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(s + tz.OffsetAt(s), kDay), y, m, d);
  char label[32];
  std::snprintf(label, sizeof label, "%04lld-%02u", static_cast<long long>(y), m);
  int64_t ny = m == 12 ? y + 1 : y;
  unsigned nm = m == 12 ? 1 : m + 1;
  return {label, MonthStartMs(tz, y, m), MonthStartMs(tz, ny, nm)};
}

Result<Period> ParseMonth(const TimeZone& tz, std::string_view label) {
  auto digits = [&](size_t from, size_t n, int64_t& v) {
    v = 0;
    for (size_t i = from; i < from + n; ++i) {
      if (label[i] < '0' || label[i] > '9') return false;
      v = v * 10 + (label[i] - '0');
    }
    return true;
  };
  int64_t y, m;
  if (label.size() != 7 || label[4] != '-' || !digits(0, 4, y) || !digits(5, 2, m) || m < 1 || m > 12) {
    return Err(InvalidArgument("period: '" + std::string(label) + "' is not a month; expected YYYY-MM such as 2025-03"));
  }
  return MonthContaining(tz, MonthStartMs(tz, y, static_cast<unsigned>(m)));
}

}  // namespace allot
