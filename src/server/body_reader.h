// API request bodies read by their Content-Type: JSON strictly as JSON, YAML only when the type
// says YAML. Both become the YAML::Node tree the field readers (src/sim/scenario_reader.cc)
// walk, so a job or a tenant has one reader whatever it was written in.
#pragma once

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

enum class BodyFormat { kJson, kYaml };

// The format a Content-Type names, case-insensitive, parameters (`; charset=utf-8`) ignored:
// application/json, or no Content-Type at all → JSON; application/yaml, application/x-yaml,
// text/yaml, text/x-yaml → YAML. Anything else is kUnsupportedMediaType (415) naming the type
// and what is expected.
Result<BodyFormat> BodyFormatOf(std::string_view content_type);

// Nesting deeper than this is refused before any field is read.
inline constexpr int kMaxBodyDepth = 64;

// Parses `body` as `format`. JSON is strict RFC 8259: one value and nothing after it, no key
// twice in one object (the error names the key's path under `root`, e.g. "job.tasks.gpus"),
// valid UTF-8, escapes decoded (surrogate pairs included). The tree holds JSON strings and
// numbers as scalars spelled as written, null as a null node. YAML is yaml-cpp's first
// document. Errors read "body: ..." or "body:LINE: ...".
Result<YAML::Node> ParseBody(BodyFormat format, const std::string& body, const std::string& root);

// BodyFormatOf, then ParseBody: what a handler calls.
Result<YAML::Node> ReadBody(std::string_view content_type, const std::string& body, const std::string& root);

// A JSON-only body (tokens, budgets, ledger adjustments) as nlohmann::json, as strictly as
// ParseBody reads JSON: nothing after the value, no key twice in one object (named by its path).
Result<nlohmann::json> ParseStrictJson(const std::string& body);

}  // namespace allot
