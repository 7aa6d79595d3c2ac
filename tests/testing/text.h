// Small helpers for tests that read logs and outputs.
#pragma once

#include <string>

namespace allot::testing {

// How many times `what` occurs in `text`, overlapping occurrences counted.
inline int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace allot::testing
