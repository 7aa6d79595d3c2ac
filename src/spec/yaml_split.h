// A top-level block sequence cut out of a YAML document, so that its items can be parsed a few
// at a time: yaml-cpp's tree costs ~15 KB a job, and a 30,000-job scenario held as one tree took
// 443 MB. Only the plain shape is cut (the key at column 0 with nothing after it, then "- "
// items, no anchors, aliases, tags or document markers in the block); anything else is left to
// the whole-document parse, which reads it as before.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allot {

struct SplitSequence {
  std::string rest;  // the document with the key and its block blanked, line for line
  struct Item {
    size_t begin = 0, end = 0;  // bytes of the original text, from the item's line start
    int first_line = 0;         // 0-based line of `begin`
  };
  std::vector<Item> items;  // in order; contiguous (comments between items belong to the one before)
};

// nullopt: `key` is absent at the top level or not in the plain shape above.
std::optional<SplitSequence> SplitTopLevelSequence(std::string_view text, std::string_view key);

}  // namespace allot
