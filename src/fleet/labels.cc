#include "fleet/labels.h"

#include <algorithm>
#include <tuple>

#include "core/names.h"

namespace allot {
namespace {

Status Invalid(std::string_view field, std::string_view value, std::string_view why, std::string_view expected) {
  return InvalidArgument(std::string(field) + ": '" + EscapeText(value) + "' " + std::string(why) + "; expected " +
                         std::string(expected));
}

bool IsLabelNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
bool IsLabelValueChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '+' || c == '-';
}

bool IsOrdered(RequireOp op) { return op != RequireOp::kEq && op != RequireOp::kNe; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Status CheckLabelName(std::string_view field, std::string_view name) {
  if (name.empty() || name.size() > kMaxLabelNameBytes) {
    return Invalid(field, name, "is " + std::to_string(name.size()) + " bytes long", kLabelNameExpected);
  }
  if (name.front() == '_' || name.front() == '.' || name.front() == '-') {
    return Invalid(field, name, "does not start with a letter or digit", kLabelNameExpected);
  }
  for (char c : name) {
    if (!IsLabelNameChar(c)) return Invalid(field, name, "has the character '" + EscapeText({&c, 1}) + "'", kLabelNameExpected);
  }
  return Status::Ok();
}

Status CheckLabelValue(std::string_view field, std::string_view value) {
  if (value.empty() || value.size() > kMaxLabelValueBytes) {
    return Invalid(field, value, "is " + std::to_string(value.size()) + " bytes long", kLabelValueExpected);
  }
  for (char c : value) {
    if (!IsLabelValueChar(c)) return Invalid(field, value, "has the character '" + EscapeText({&c, 1}) + "'", kLabelValueExpected);
  }
  return Status::Ok();
}

Status CheckLabels(std::string_view field, const NodeLabels& labels) {
  if (labels.size() > kMaxLabels) {
    return InvalidArgument(std::string(field) + ": " + std::to_string(labels.size()) + " labels; expected at most " +
                           std::to_string(kMaxLabels));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto& [name, value] = labels[i];
    if (Status s = CheckLabelName(std::string(field) + " (a name)", name); !s.ok()) return s;
    if (Status s = CheckLabelValue(std::string(field) + "." + name, value); !s.ok()) return s;
    for (size_t k = 0; k < i; ++k) {
      if (labels[k].first == name) {
        return InvalidArgument(std::string(field) + "." + name + ": the label is given twice; expected each name once");
      }
    }
  }
  return Status::Ok();
}

void SortLabels(NodeLabels& labels) { std::stable_sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first < b.first; }); }

const std::string* FindLabel(const NodeLabels& labels, std::string_view name) {
  auto it = std::lower_bound(labels.begin(), labels.end(), name,
                             [](const auto& l, std::string_view n) { return std::string_view(l.first) < n; });
  return it != labels.end() && it->first == name ? &it->second : nullptr;
}

std::string FormatLabels(const NodeLabels& labels) {
  if (labels.empty()) return "none";
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "" : ", ") + name + "=" + value;
  return out;
}

const char* RequireOpText(RequireOp op) {
  switch (op) {
    case RequireOp::kEq: return "=";
    case RequireOp::kNe: return "!=";
    case RequireOp::kGe: return ">=";
    case RequireOp::kGt: return ">";
    case RequireOp::kLe: return "<=";
    case RequireOp::kLt: return "<";
  }
  return "?";
}

std::optional<std::vector<uint32_t>> ParseVersion(std::string_view s) {
  std::vector<uint32_t> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find('.', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(start, end - start);
    if (part.empty() || part.size() > 9 || out.size() == 8) return std::nullopt;
    uint32_t v = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    out.push_back(v);
    if (end == s.size()) return out;
    start = end + 1;
  }
}

int CompareVersions(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    uint32_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

Result<Requirement> ParseRequirement(std::string_view field, std::string_view label, std::string_view condition) {
  std::string where = std::string(field) + "." + std::string(label);
  if (Status s = CheckLabelName(std::string(field) + " (a label name)", label); !s.ok()) return Err(s);
  std::string_view c = Trim(condition);
  Requirement r;
  r.label = std::string(label);
  static constexpr std::pair<std::string_view, RequireOp> kOps[] = {
      {">=", RequireOp::kGe}, {"<=", RequireOp::kLe}, {"!=", RequireOp::kNe}, {"==", RequireOp::kEq},
      {">", RequireOp::kGt},  {"<", RequireOp::kLt},  {"=", RequireOp::kEq}};
  for (const auto& [text, op] : kOps) {
    if (c.substr(0, text.size()) == text) {
      r.op = op;
      c = Trim(c.substr(text.size()));
      break;
    }
  }
  constexpr const char* kExpected =
      "an optional operator (=, !=, >=, >, <=, <) and a value of 1 to 63 of A-Z a-z 0-9 _ . + -";
  if (c.empty() || c.size() > kMaxLabelValueBytes ||
      !std::all_of(c.begin(), c.end(), [](char ch) { return IsLabelValueChar(ch); })) {
    return Err(Invalid(where, condition, "is not a condition", kExpected));
  }
  if (IsOrdered(r.op) && !ParseVersion(c)) {
    return Err(Invalid(where, condition, std::string("compares '") + std::string(c) + "' with " + RequireOpText(r.op) +
                                             ", which is not a version",
                       "a dotted numeric version after an ordered operator, like >=550 or >=9.0"));
  }
  r.value = std::string(c);
  return r;
}

Result<Requirements> ParseRequirementList(std::string_view field, std::string_view text) {
  Requirements out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = Trim(text.substr(start, end - start));
    if (item.empty()) {
      if (text.empty() || Trim(text).empty()) break;
      return Err(Invalid(field, text, "has an empty item", "comma-separated conditions like driver>=550,cuda>=9.0"));
    }
    size_t op = item.find_first_of("=!<>");
    if (op == std::string_view::npos) {
      return Err(Invalid(field, item, "has no operator",
                         "LABEL OP VALUE with OP one of =, !=, >=, >, <=, <, like driver>=550"));
    }
    auto r = ParseRequirement(field, Trim(item.substr(0, op)), item.substr(op));
    if (!r) return Err(r.error());
    out.push_back(std::move(*r));
    if (end == text.size()) break;
    start = end + 1;
  }
  if (Status s = NormalizeRequirements(field, out); !s.ok()) return Err(s);
  return out;
}

Status NormalizeRequirements(std::string_view field, Requirements& req) {
  std::sort(req.begin(), req.end(), [](const Requirement& a, const Requirement& b) {
    return std::tie(a.label, a.op, a.value) < std::tie(b.label, b.op, b.value);
  });
  req.erase(std::unique(req.begin(), req.end()), req.end());
  if (req.size() > kMaxRequirements) {
    return InvalidArgument(std::string(field) + ": " + std::to_string(req.size()) + " conditions; expected at most " +
                           std::to_string(kMaxRequirements));
  }
  return Status::Ok();
}

bool Satisfies(const NodeLabels& labels, const Requirement& r) {
  const std::string* have = FindLabel(labels, r.label);
  if (!have) return false;
  switch (r.op) {
    case RequireOp::kEq: return *have == r.value;
    case RequireOp::kNe: return *have != r.value;
    default: break;
  }
  auto a = ParseVersion(*have);
  auto b = ParseVersion(r.value);
  if (!a || !b) return false;  // a label that is no version never satisfies an ordered condition
  int c = CompareVersions(*a, *b);
  switch (r.op) {
    case RequireOp::kGe: return c >= 0;
    case RequireOp::kGt: return c > 0;
    case RequireOp::kLe: return c <= 0;
    case RequireOp::kLt: return c < 0;
    default: return false;
  }
}

bool Satisfies(const NodeLabels& labels, const Requirements& req) {
  for (const Requirement& r : req) {
    if (!Satisfies(labels, r)) return false;
  }
  return true;
}

std::string FormatRequirement(const Requirement& r) { return r.label + RequireOpText(r.op) + r.value; }

std::string FormatRequirements(const Requirements& req) {
  std::string out;
  for (const Requirement& r : req) out += (out.empty() ? "" : ",") + FormatRequirement(r);
  return out;
}

}  // namespace allot
