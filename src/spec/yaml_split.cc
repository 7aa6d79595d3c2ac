#include "spec/yaml_split.h"

namespace allot {
namespace {

struct Line {
  size_t begin, end;  // without the line break
};

std::vector<Line> Lines(std::string_view text) {
  std::vector<Line> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    out.push_back({at, end});
    at = end + 1;
  }
  return out;
}

// Blank or only a comment.
bool Empty(std::string_view line) {
  size_t c = line.find_first_not_of(" \t\r");
  return c == std::string_view::npos || line[c] == '#';
}

}  // namespace

std::optional<SplitSequence> SplitTopLevelSequence(std::string_view text, std::string_view key) {
  const std::vector<Line> lines = Lines(text);
  auto at = [&](size_t i) { return text.substr(lines[i].begin, lines[i].end - lines[i].begin); };
  // 1. The key at column 0, nothing after it but a comment.
  size_t k = 0;
  for (; k < lines.size(); ++k) {
    std::string_view l = at(k);
    if (l == "---" || l == "..." || l.rfind("--- ", 0) == 0 || l.rfind("%", 0) == 0) return std::nullopt;  // several documents
    if (l.size() > key.size() && l.substr(0, key.size()) == key && l[key.size()] == ':') {
      if (!Empty(l.substr(key.size() + 1))) return std::nullopt;  // a flow sequence, or a scalar
      break;
    }
  }
  if (k == lines.size()) return std::nullopt;
  // 2. The block: the lines up to the next one that starts at column 0 with something other than
  //    an item of this sequence or a comment.
  size_t end = k + 1;
  int indent = -1;  // the items' "- " column
  SplitSequence out;
  for (; end < lines.size(); ++end) {
    std::string_view l = at(end);
    if (Empty(l)) continue;
    size_t col = l.find_first_not_of(' ');
    if (l[col] == '\t') return std::nullopt;
    if (col == 0 && l[0] != '-') break;
    if (l == "---" || l.rfind("--- ", 0) == 0 || l == "...") return std::nullopt;
    if (l.find_first_of("&*!") != std::string_view::npos) return std::nullopt;  // anchors, aliases, tags
    if (indent < 0) indent = static_cast<int>(col);
    if (static_cast<int>(col) < indent) return std::nullopt;
    bool item = static_cast<int>(col) == indent;
    if (item && !(l[col] == '-' && (col + 1 == l.size() || l[col + 1] == ' '))) return std::nullopt;
    if (item) {
      if (!out.items.empty()) out.items.back().end = lines[end].begin;
      out.items.push_back({lines[end].begin, 0, static_cast<int>(end)});
    }
  }
  if (out.items.empty()) return std::nullopt;
  out.items.back().end = end < lines.size() ? lines[end].begin : text.size();
  // A trailing comment block before the next key stays with the last item: harmless.
  // 3. The rest: the key's line and its block blank, so every other line keeps its number.
  out.rest.reserve(text.size() - (out.items.back().end - lines[k].begin));
  out.rest.append(text.substr(0, lines[k].begin));
  for (size_t i = k; i < end; ++i) out.rest += '\n';
  if (end < lines.size()) out.rest.append(text.substr(lines[end].begin));
  return out;
}

}  // namespace allot
