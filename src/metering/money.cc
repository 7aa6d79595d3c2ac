#include "metering/money.h"

#include <algorithm>

namespace allot {

Result<int64_t> ParseMicros(std::string_view text, std::string_view what) {
  auto bad = [&](const char* why) {
    return Err(InvalidArgument(std::string(what) + ": '" + std::string(text) + "' " + why));
  };
  if (text.empty()) return bad("is empty; expected a decimal number such as 2.50");
  if (text[0] == '-') return bad("is negative; expected a price or multiplier >= 0");
  __int128 whole = 0;
  size_t i = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    if (whole > kMaxMicros / kMicros) return bad("is too large; expected at most 1000000000");
  }
  int64_t frac = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int n = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++n) {
      if (n == 6) return bad("has more than six decimals; expected at most micro-units (0.000001)");
      frac = frac * 10 + (text[i] - '0');
    }
    if (n == 0) return bad("has no digits after '.'");
    for (; n < 6; ++n) frac *= 10;
    digits = true;
  }
  if (!digits || i != text.size()) return bad("is not a decimal number; expected digits such as 2.50");
  __int128 v = whole * kMicros + frac;
  if (v > kMaxMicros) return bad("is too large; expected at most 1000000000");
  return static_cast<int64_t>(v);
}

Result<int64_t> AddMicros(int64_t a, int64_t b, std::string_view what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return Err(InvalidArgument(std::string(what) + ": " + FormatMicros(a) + " + " + FormatMicros(b) +
                               " does not fit; expected a total from -9223372036854.775808 to 9223372036854.775807"));
  }
  return sum;
}

std::string FormatMicros(int64_t micros) {
  bool neg = micros < 0;
  unsigned __int128 m = neg ? -static_cast<__int128>(micros) : micros;
  std::string frac = std::to_string(static_cast<uint64_t>(m % kMicros));
  frac.insert(0, 6 - frac.size(), '0');
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  return (neg ? "-" : "") + std::to_string(static_cast<uint64_t>(m / kMicros)) + "." + frac;
}

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

bool ParseInt128(std::string_view text, __int128& out) {
  size_t i = 0;
  bool neg = !text.empty() && text[0] == '-';
  if (neg) i = 1;
  if (i == text.size() || text.size() - i > 38) return false;
  __int128 v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  out = neg ? -v : v;
  return true;
}

int64_t MulDivRoundHalfUp(__int128 q, __int128 p, __int128 d1, __int128 d2, bool* overflow) {
  // q × p / (d1 d2) = (q1 d1 + r1) p / (d1 d2) with q = q1 d1 + r1
  //                 = a1 + (a0 d1 + r1 p) / (d1 d2)  with q1 p = a1 d2 + a0.
  __int128 q1 = q / d1, r1 = q % d1, a, b, c;
  if (__builtin_mul_overflow(q1, p, &a) || __builtin_mul_overflow(r1, p, &b)) {
    *overflow = true;
    return 0;
  }
  __int128 a1 = a / d2, a0 = a % d2;
  if (__builtin_mul_overflow(a0, d1, &c) || __builtin_add_overflow(c, b, &c)) {
    *overflow = true;
    return 0;
  }
  __int128 den = d1 * d2;
  __int128 v = a1 + c / den + (2 * (c % den) >= den ? 1 : 0);
  if (v > INT64_MAX) {
    *overflow = true;
    return 0;
  }
  return static_cast<int64_t>(v);
}

}  // namespace allot
