#include "core/quantity.h"

#include "core/resources.h"

#include <cstdio>
#include <utility>

namespace allot {
namespace {

// Parses a non-negative decimal and returns it scaled by `scale` (a power of ten times an
// integer factor), rounded half-up. Rejects signs, exponents and empty parts. Errors quote
// `whole_text`, the value as the person wrote it (unit included), not just the number part.
Result<int64_t> ParseScaled(std::string_view text, int64_t scale, std::string_view what, std::string_view whole_text) {
  auto bad = [&](const char* why) {
    return Err(InvalidArgument("'" + std::string(whole_text) + "' is not a valid " + std::string(what) +
                               ": " + why));
  };
  if (text.empty()) return bad("empty");
  if (text[0] == '-') return bad("must not be negative");
  __int128 whole = 0;
  size_t i = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    if (whole > (__int128)INT64_MAX) return bad("too large");
  }
  __int128 frac_num = 0, frac_den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    bool fdigits = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (frac_den < (__int128)1000000000000000000LL) {
        frac_num = frac_num * 10 + (text[i] - '0');
        frac_den *= 10;
      }
      fdigits = true;
    }
    if (!fdigits) return bad("expected digits after '.'");
    digits = true;
  }
  if (!digits || i != text.size()) return bad("expected a non-negative decimal number");
  __int128 v = whole * scale + (frac_num * scale * 2 + frac_den) / (frac_den * 2);
  if (v > (__int128)INT64_MAX) return bad("too large");
  return static_cast<int64_t>(v);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<int64_t> ParseMilli(std::string_view text) { return ParseScaled(text, 1000, "quantity", text); }
Result<int64_t> ParseGpus(std::string_view text) { return ParseScaled(text, kGpuUnit, "GPU quantity", text); }

Result<int64_t> ParseMemoryMiB(std::string_view text) {
  struct Unit { const char* suffix; int64_t mib; };
  static constexpr Unit kUnits[] = {{"Mi", 1}, {"Gi", 1024}, {"Ti", 1024 * 1024}};
  for (const Unit& u : kUnits) {
    if (EndsWith(text, u.suffix)) {
      return ParseScaled(text.substr(0, text.size() - 2), u.mib, "memory quantity", text);
    }
  }
  return Err(InvalidArgument("'" + std::string(text) +
                             "' is not a valid memory quantity: expected a number with unit Mi, Gi or Ti"));
}

Result<int64_t> ParseDurationMs(std::string_view text) {
  struct Unit { char suffix; int64_t ms; };
  static constexpr Unit kUnits[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}};
  if (!text.empty()) {
    for (const Unit& u : kUnits) {
      if (text.back() == u.suffix) {
        return ParseScaled(text.substr(0, text.size() - 1), u.ms, "duration", text);
      }
    }
  }
  return Err(InvalidArgument("'" + std::string(text) +
                             "' is not a valid duration: expected a number with unit s, m, h or d"));
}

namespace {
std::string FormatScaled(int64_t v, int64_t scale) {
  const char* sign = v < 0 ? "-" : "";
  uint64_t a = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  uint64_t w = a / scale, f = a % scale;
  std::string out = sign + std::to_string(w);
  if (f == 0) return out;
  std::string fs = std::to_string(f);
  int width = 0;
  for (int64_t s = scale; s > 1; s /= 10) ++width;
  fs.insert(0, width - fs.size(), '0');
  while (!fs.empty() && fs.back() == '0') fs.pop_back();
  return out + "." + fs;
}
}  // namespace

std::string FormatMilli(int64_t milli) { return FormatScaled(milli, 1000); }
int64_t GpuMilli(int64_t units) {
  constexpr int64_t kPerMilli = kGpuUnit / 1000;
  __int128 u = units;
  return static_cast<int64_t>((u >= 0 ? 2 * u + kPerMilli : 2 * u - kPerMilli) / (2 * kPerMilli));
}
std::string FormatGpus(int64_t units) { return FormatScaled(GpuMilli(units), 1000); }

std::string FormatMemoryMiB(int64_t mib) {
  if (mib != 0 && mib % (1024 * 1024) == 0) return FormatScaled(mib / 1024, 1024) + "Ti";
  if (mib != 0 && mib % 1024 == 0) return std::to_string(mib / 1024) + "Gi";
  return std::to_string(mib) + "Mi";
}

std::string FormatSeconds(int64_t ms) { return FormatScaled(ms, 1000); }

std::string FormatDuration(int64_t ms) {
  constexpr std::pair<int64_t, const char*> kUnits[] = {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}};
  for (const auto& [unit, name] : kUnits) {
    if (ms != 0 && ms % unit == 0) return std::to_string(ms / unit) + name;
  }
  return FormatScaled(ms, 1000) + "s";
}

}  // namespace allot
