// Node labels and the requirements jobs and reservations put on them (issue 16).
//
// A label is a name and a value the node's agent reports (`driver`: the NVML driver version,
// `cuda`: the GPUs' CUDA compute capability, `interconnect`) or the operator sets (fleet and
// scenario files, the agent's --label). A requirement is `name OP value`: `=` (the default),
// `!=`, `>=`, `>`, `<=`, `<`. Ordered operators compare dotted numeric versions component by
// component, missing components as 0 ("550.54.15" >= "550"); their value must be a version,
// which the parsers check. A node without the label satisfies no requirement on it (not even
// `!=`). Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace allot {

// Sorted by name, names unique.
using NodeLabels = std::vector<std::pair<std::string, std::string>>;

inline constexpr size_t kMaxLabels = 32;           // per node
inline constexpr size_t kMaxLabelNameBytes = 63;   // [a-z0-9_.-], starting with a letter or digit
inline constexpr size_t kMaxLabelValueBytes = 63;  // [A-Za-z0-9_.+-]
inline constexpr size_t kMaxRequirements = 16;     // per job or reservation
inline constexpr const char* kLabelNameExpected = "1 to 63 of a-z 0-9 _ . -, starting with a letter or digit";
inline constexpr const char* kLabelValueExpected = "1 to 63 of A-Z a-z 0-9 _ . + -";

// "<field>: '<value>' is not valid; expected …", or Ok.
Status CheckLabelName(std::string_view field, std::string_view name);
Status CheckLabelValue(std::string_view field, std::string_view value);
// Every name and value valid, names unique, at most kMaxLabels. `field` prefixes the errors
// ("labels": "labels.driver: …").
Status CheckLabels(std::string_view field, const NodeLabels& labels);
// Sorts by name (the stored order). REQUIRES nothing; CheckLabels refuses duplicates.
void SortLabels(NodeLabels& labels);
// The value of label `name`, or nullptr.
const std::string* FindLabel(const NodeLabels& labels, std::string_view name);
// "cuda=9.0, driver=550.54.15" (empty: "none").
std::string FormatLabels(const NodeLabels& labels);

enum class RequireOp : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
const char* RequireOpText(RequireOp op);  // "=", "!=", ">=", ">", "<=", "<"

struct Requirement {
  std::string label;
  RequireOp op = RequireOp::kEq;
  std::string value;
  bool operator==(const Requirement&) const = default;
};
// Sorted by (label, op, value) and unique: equal sets compare equal and intern alike.
using Requirements = std::vector<Requirement>;

// A dotted numeric version ("550", "550.54.15", "9.0"): 1 to 8 components of 1 to 9 digits.
std::optional<std::vector<uint32_t>> ParseVersion(std::string_view s);
// <0, 0, >0 comparing versions component by component (missing ones are 0).
int CompareVersions(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

// One requirement from its label name and its condition text (">=550", "!=pcie", "nvlink";
// spaces after the operator are allowed). Errors name `field`, the value as written and what was
// expected.
Result<Requirement> ParseRequirement(std::string_view field, std::string_view label, std::string_view condition);
// "driver>=550,cuda>=9.0,interconnect=nvlink" (a query parameter, a CLI flag). Empty: none.
Result<Requirements> ParseRequirementList(std::string_view field, std::string_view text);
// Sorts, drops exact duplicates, and checks the count (kMaxRequirements).
Status NormalizeRequirements(std::string_view field, Requirements& req);
// Whether every requirement holds on `labels`.
bool Satisfies(const NodeLabels& labels, const Requirements& req);
bool Satisfies(const NodeLabels& labels, const Requirement& r);
// "driver>=550" / "driver>=550,cuda>=9.0".
std::string FormatRequirement(const Requirement& r);
std::string FormatRequirements(const Requirements& req);

}  // namespace allot
