// Money and exact rates: amounts in integer micro-units of one currency, multipliers in parts
// per million, and the one rounding rule metering uses (half up, once per ledger line).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

inline constexpr int64_t kMicros = 1000000;  // micro-units per currency unit
inline constexpr int64_t kPpm = 1000000;     // a multiplier of 1.0

// The largest amount, price or multiplier any file or request may write: a billion units of
// the currency (1e15 micro-units). Sums of amounts are checked all the same (AddMicros).
inline constexpr int64_t kMaxMicros = 1'000'000'000 * kMicros;

// "2.50" → 2,500,000, from 0 to kMaxMicros. At most six decimals: a price is taken exactly as written, never rounded
// (and never through a double). `what` names the field in the error.
Result<int64_t> ParseMicros(std::string_view text, std::string_view what);
// "-12.50" → -12,500,000: an amount that may be negative (a correction, down to -kMaxMicros),
// else as ParseMicros.
inline Result<int64_t> ParseSignedMicros(std::string_view text, std::string_view what) {
  bool negative = !text.empty() && text[0] == '-';
  auto v = ParseMicros(negative ? text.substr(1) : text, what);
  if (!v) return v;
  return negative ? -*v : *v;
}
// "1.2" → 1,200,000 ppm. Same rules as ParseMicros.
inline Result<int64_t> ParsePpm(std::string_view text, std::string_view what) { return ParseMicros(text, what); }

// a + b, or an error naming `what` when the sum does not fit in 64 bits (it never wraps).
Result<int64_t> AddMicros(int64_t a, int64_t b, std::string_view what);

// 2,500,000 → "2.50" (at least two decimals, trailing zeros past them dropped); negative
// amounts keep their sign.
std::string FormatMicros(int64_t micros);
// An exact 128-bit integer in decimal; Parse returns false on anything else.
std::string Int128ToString(__int128 v);
bool ParseInt128(std::string_view text, __int128& out);

// round_half_up(q × p / (d1 × d2)) for q, p ≥ 0 and d1, d2 > 0, exactly, without the 256-bit
// product: q is split by d1, the quotient's product by d2. Sets *overflow when the result or an
// intermediate product does not fit (far past any fleet: q × p / d1 must stay under 2^127).
int64_t MulDivRoundHalfUp(__int128 q, __int128 p, __int128 d1, __int128 d2, bool* overflow);

}  // namespace allot
