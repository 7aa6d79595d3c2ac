#include "metering/time_zone.h"

#include <algorithm>
#include <cstdio>

namespace allot {
namespace {

constexpr int64_t kDay = 86400;
// Years the footer rule is expanded to: past any period a ledger will bill.
constexpr int64_t kLastRuleYear = 2200;

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

class Bytes {
 public:
  explicit Bytes(std::string_view b) : b_(b) {}
  bool Has(size_t n) const { return pos_ + n <= b_.size(); }
  int64_t Be(int n) {  // big-endian signed n-byte integer; REQUIRES Has(n)
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(b_[pos_++]);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ULL << (8 * n);
    return static_cast<int64_t>(v);
  }
  void Skip(size_t n) { pos_ += n; }
  size_t pos() const { return pos_; }
  std::string_view Rest() const { return b_.substr(std::min(pos_, b_.size())); }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

// The footer: a POSIX TZ string such as "CET-1CEST,M3.5.0,M10.5.0/3".
struct PosixRule {
  int32_t std_off = 0;  // seconds east of UTC
  bool has_dst = false;
  int32_t dst_off = 0;
  struct Date { unsigned month, week, weekday; int32_t time; } start{}, end{};
};

class PosixParser {
 public:
  explicit PosixParser(std::string_view s) : s_(s) {}
  bool Parse(PosixRule& r) {
    if (!Name()) return false;
    int32_t o;
    if (!Offset(o)) return false;
    r.std_off = -o;  // POSIX offsets are west of UTC
    if (i_ == s_.size()) return true;
    if (!Name()) return false;
    r.has_dst = true;
    r.dst_off = r.std_off + 3600;
    if (i_ < s_.size() && s_[i_] != ',') {
      if (!Offset(o)) return false;
      r.dst_off = -o;
    }
    if (i_ == s_.size()) return false;  // DST without a rule: the TZif table must cover it
    return Eat(',') && RuleDate(r.start) && Eat(',') && RuleDate(r.end) && i_ == s_.size();
  }

 private:
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool Name() {
    if (Eat('<')) {
      size_t close = s_.find('>', i_);
      if (close == std::string_view::npos) return false;
      i_ = close + 1;
      return true;
    }
    size_t from = i_;
    while (i_ < s_.size() && ((s_[i_] >= 'A' && s_[i_] <= 'Z') || (s_[i_] >= 'a' && s_[i_] <= 'z'))) ++i_;
    return i_ - from >= 3;
  }
  bool Num(int64_t& v) {
    size_t from = i_;
    v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9' && i_ - from < 4) v = v * 10 + (s_[i_++] - '0');
    return i_ > from;
  }
  // [+-]hh[:mm[:ss]] in seconds (hours up to 167 in TZif v3 rule times).
  bool Offset(int32_t& out) {
    int sign = 1;
    if (Eat('-')) sign = -1;
    else Eat('+');
    int64_t h, m = 0, sec = 0;
    if (!Num(h)) return false;
    if (Eat(':') && !Num(m)) return false;
    if (Eat(':') && !Num(sec)) return false;
    out = static_cast<int32_t>(sign * (h * 3600 + m * 60 + sec));
    return true;
  }
  // Only the Mm.w.d form: every zone in tzdata uses it (Jn and n are refused).
  bool RuleDate(PosixRule::Date& d) {
    int64_t m, w, wd;
    if (!Eat('M') || !Num(m) || !Eat('.') || !Num(w) || !Eat('.') || !Num(wd)) return false;
    if (m < 1 || m > 12 || w < 1 || w > 5 || wd > 6) return false;
    d = {static_cast<unsigned>(m), static_cast<unsigned>(w), static_cast<unsigned>(wd), 7200};
    if (Eat('/') && !Offset(d.time)) return false;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// Local seconds (from 1970-01-01 local) at which a rule date falls in year y.
int64_t RuleLocal(const PosixRule::Date& d, int64_t y) {
  int64_t first = DaysFromCivil(y, d.month, 1);
  int64_t first_wd = ((first + 4) % 7 + 7) % 7;  // 1970-01-01 was a Thursday
  int64_t day = 1 + (static_cast<int64_t>(d.weekday) - first_wd + 7) % 7 + (d.week - 1) * 7;
  while (day > DaysInMonth(y, d.month)) day -= 7;
  return (first + day - 1) * kDay + d.time;
}

}  // namespace

TimeZone TimeZone::Utc() {
  TimeZone tz;
  tz.name_ = "UTC";
  return tz;
}

Result<TimeZone> TimeZone::FromTzif(std::string name, std::string_view bytes) {
  auto bad = [&](const std::string& why) {
    return Err(InvalidArgument("time zone " + name + ": " + why + "; expected a TZif file (RFC 8536)"));
  };
  Bytes in(bytes);
  struct Header { int version; int64_t isut, isstd, leap, time, type, chars; };
  auto header = [&](Header& h) {
    if (!in.Has(44) || bytes.substr(in.pos(), 4) != "TZif") return false;
    in.Skip(4);
    char v = bytes[in.pos()];
    h.version = v == 0 ? 1 : v - '0';
    in.Skip(16);
    h.isut = in.Be(4), h.isstd = in.Be(4), h.leap = in.Be(4);
    h.time = in.Be(4), h.type = in.Be(4), h.chars = in.Be(4);
    return h.version >= 1 && h.version <= 4 && h.type >= 1 && h.time >= 0 && h.chars >= 0 && h.isut >= 0 &&
           h.isstd >= 0 && h.leap >= 0;
  };
  auto block_size = [](const Header& h, int t) {
    return static_cast<size_t>(h.time * t + h.time + h.type * 6 + h.chars + h.leap * (t + 4) + h.isstd + h.isut);
  };
  Header h{};
  if (!header(h)) return bad("no valid TZif header");
  int t = 4;
  if (h.version >= 2) {  // skip the 32-bit block: the 64-bit one follows
    if (!in.Has(block_size(h, 4))) return bad("truncated version 1 data");
    in.Skip(block_size(h, 4));
    if (!header(h)) return bad("no valid version 2+ header");
    t = 8;
  }
  if (h.leap > 0) return bad("leap-second records present (a right/ zone)");
  if (!in.Has(block_size(h, t))) return bad("truncated transition data");
  TimeZone tz;
  tz.name_ = std::move(name);
  std::vector<int64_t> at(h.time);
  for (auto& a : at) a = in.Be(t);
  std::vector<uint8_t> idx(h.time);
  for (auto& i : idx) i = static_cast<uint8_t>(in.Be(1));
  std::vector<int32_t> type_off(h.type);
  for (auto& o : type_off) {
    o = static_cast<int32_t>(in.Be(4));
    in.Skip(2);
  }
  in.Skip(h.chars + h.isstd + h.isut);
  for (size_t k = 0; k < at.size(); ++k) {
    if (idx[k] >= type_off.size()) return bad("transition " + std::to_string(k) + " names a missing type");
    if (k > 0 && at[k] <= at[k - 1]) return bad("transitions out of order at " + std::to_string(k));
    tz.at_.push_back(at[k]);
    tz.off_.push_back(type_off[idx[k]]);
  }
  tz.initial_ = type_off[0];
  if (t == 8) {
    std::string_view rest = in.Rest();
    if (rest.size() < 2 || rest[0] != '\n') return bad("missing footer");
    size_t end = rest.find('\n', 1);
    if (end == std::string_view::npos) return bad("unterminated footer");
    std::string_view footer = rest.substr(1, end - 1);
    if (!footer.empty()) {
      PosixRule r;
      if (!PosixParser(footer).Parse(r)) return bad("footer rule '" + std::string(footer) + "' not understood");
      int64_t last = tz.at_.empty() ? INT64_MIN : tz.at_.back();
      if (!r.has_dst) {
        if (tz.at_.empty()) tz.initial_ = r.std_off;
      } else {
        int64_t y0 = 1970;
        if (!tz.at_.empty()) {
          unsigned m, d;
          CivilFromDays(FloorDiv(last, kDay), y0, m, d);
        }
        for (int64_t y = y0; y <= kLastRuleYear; ++y) {
          // Start is given in standard time, end in daylight time.
          std::pair<int64_t, int32_t> tr[2] = {{RuleLocal(r.start, y) - r.std_off, r.dst_off},
                                               {RuleLocal(r.end, y) - r.dst_off, r.std_off}};
          if (tr[1].first < tr[0].first) std::swap(tr[0], tr[1]);  // southern hemisphere
          for (auto& [when, off] : tr) {
            if (when <= last) continue;
            tz.at_.push_back(when);
            tz.off_.push_back(off);
            last = when;
          }
        }
      }
    }
  }
  return tz;
}

int32_t TimeZone::OffsetAt(int64_t utc_s) const {
  auto it = std::upper_bound(at_.begin(), at_.end(), utc_s);
  return it == at_.begin() ? initial_ : off_[it - at_.begin() - 1];
}

int64_t TimeZone::LocalToUtc(int64_t local_s) const {
  // No zone moves more than a day at once, so the offsets a day either side bracket local_s.
  int32_t before = OffsetAt(local_s - 2 * kDay), after = OffsetAt(local_s + 2 * kDay);
  int64_t best = INT64_MAX;
  for (int32_t o : {before, after}) {
    if (OffsetAt(local_s - o) == o) best = std::min(best, local_s - o);
  }
  if (best != INT64_MAX) return best;
  // Skipped: the gap ends at the last transition at or before local_s - before.
  auto it = std::upper_bound(at_.begin(), at_.end(), local_s - before);
  return it == at_.begin() ? local_s - before : *(it - 1);
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
