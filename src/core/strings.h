// Small string helpers shared by readers and the CLI.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace allot {

// "a,b,,c" → {"a", "b", "", "c"}; "" → {""}.
inline std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace allot
