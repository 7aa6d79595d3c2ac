#include "core/names.h"

#include <algorithm>
#include <cstdint>

namespace allot {
namespace {

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsNameChar(char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; }

// Why `s` is not a name, or "" when it is.
std::string NameProblem(std::string_view s) {
  if (s.empty()) return "is empty";
  if (s.size() > kMaxNameBytes) return "is " + std::to_string(s.size()) + " bytes long";
  if (!IsAlnum(s[0])) return "does not start with a letter or digit";
  for (char c : s) {
    if (!IsNameChar(c)) return "has the character '" + EscapeText(std::string_view(&c, 1)) + "'";
  }
  return "";
}

Status Invalid(std::string_view field, std::string_view value, const std::string& why, std::string_view expected) {
  return InvalidArgument(std::string(field) + ": '" + EscapeText(value) + "' " + why + "; expected " + std::string(expected));
}

// The length of the well-formed UTF-8 sequence at s[i] for a code point ≥ U+00A0 that is not a
// bidirectional control, or 0.
size_t PrintableUtf8(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (d & 0x3f);
  }
  bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
  bool c1 = cp < 0xa0;
  bool bidi = cp == 0x200e || cp == 0x200f || cp == 0x061c || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
  if (overlong || surrogate || c1 || bidi || cp > 0x10ffff) return 0;
  return n;
}

}  // namespace

bool IsValidName(std::string_view s) { return NameProblem(s).empty(); }

Status CheckName(std::string_view field, std::string_view value) {
  std::string why = NameProblem(value);
  return why.empty() ? Status::Ok() : Invalid(field, value, why, kNameExpected);
}

Status CheckTenantPath(std::string_view field, std::string_view value) {
  constexpr const char* kExpected = "a path of names joined by '/' like org/team, each name 1 to 63 of A-Z a-z 0-9 . _ -, "
                                    "starting with a letter or digit";
  if (value.size() > kMaxTenantPathBytes) {
    return Invalid(field, value, "is " + std::to_string(value.size()) + " bytes long", std::string(kExpected) +
                                     ", at most " + std::to_string(kMaxTenantPathBytes) + " bytes in all");
  }
  size_t start = 0;
  while (true) {
    size_t end = std::min(value.find('/', start), value.size());
    std::string_view segment = value.substr(start, end - start);
    if (std::string why = NameProblem(segment); !why.empty()) {
      return Invalid(field, value, "has a segment '" + EscapeText(segment) + "' that " + why, kExpected);
    }
    if (end == value.size()) return Status::Ok();
    start = end + 1;
  }
}

Status CheckPrincipal(std::string_view field, std::string_view value) {
  constexpr const char* kExpected = "a name (1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit) or an e-mail "
                                    "address NAME@NAME";
  if (value.size() > kMaxPrincipalBytes) {
    return Invalid(field, value, "is " + std::to_string(value.size()) + " bytes long", kExpected);
  }
  size_t at = value.find('@');
  if (at == std::string_view::npos) {
    std::string why = NameProblem(value);
    return why.empty() ? Status::Ok() : Invalid(field, value, why, kExpected);
  }
  std::string local(value.substr(0, at));
  for (char& c : local) {
    if (c == '+') c = '-';  // alice+ci@example.com
  }
  std::string why = NameProblem(local);
  if (why.empty()) why = NameProblem(value.substr(at + 1));
  return why.empty() ? Status::Ok() : Invalid(field, value, "is not NAME@NAME", kExpected);
}

std::string EscapeText(std::string_view s, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t shown = std::min(s.size(), max_bytes);
  out.reserve(shown);
  for (size_t i = 0; i < shown;) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (size_t n = c >= 0x80 ? PrintableUtf8(s, i) : 0; n > 0 && i + n <= shown) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  if (shown < s.size()) out += "…(" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace allot
