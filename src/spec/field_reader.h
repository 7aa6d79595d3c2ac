// The spec field reader (src/spec/): the one reader of people's input. Jobs, tenants and
// scenarios (spec/), allotd's config (allotd/config.cc), the rate card (billing/rate_card_yaml.cc)
// and every API body (server/api_bodies.cc, the job and tenant routes) walk a YAML tree with
// it; API bodies arrive as strict JSON turned into the same tree (server/body_reader.h).
// Errors read "FILE:LINE: FIELD.PATH: what was wrong; expected what", or "body: FIELD.PATH: …"
// for JSON, which has no lines. (The agent protocol is machines' input: src/wire/ reads it.)
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

class TemplateCatalog;  // spec/job_template.h

// A decimal integer (an optional '-', then digits only) within [min, max]; nullopt otherwise.
// The one rule behind YamlReader::Integer and the JSON Lines / CSV readers (spec/job_stream.h).
inline std::optional<int64_t> ParseInteger(std::string_view t, int64_t min, int64_t max) {
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  int64_t v = 0;
  bool ok = !t.empty();
  for (char c : t) {
    if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + (c - '0');
  }
  if (neg) v = -v;
  if (!ok || v < min || v > max) return std::nullopt;
  return v;
}

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  // Nodes parsed from a piece of the file that starts after `lines` lines (a scenario's jobs are
  // parsed a few at a time): their marks count from the piece, errors from the file.
  void set_line_offset(int lines) { line_offset_ = lines; }
  // The job templates a job's `template:` may name (spec/job_template.h); none when null. Not
  // owned: it outlives the reading.
  void set_templates(const TemplateCatalog* templates) { templates_ = templates; }
  const TemplateCatalog* templates() const { return templates_; }

  // A node built from JSON (server/body_reader.h) has no line: "FILE: FIELD.PATH: ...".
  Status Error(const YAML::Node& n, const std::string& path, const std::string& msg) const {
    if (n.IsDefined() && n.Mark().is_null()) return InvalidArgument(file_ + ": " + path + ": " + msg);
    int line = n.IsDefined() ? n.Mark().line + 1 + line_offset_ : 0;
    return InvalidArgument(file_ + ":" + std::to_string(line) + ": " + path + ": " + msg);
  }

  // A check from core/names.h ("FIELD: 'value' …; expected …") placed at the node's line.
  Status At(const YAML::Node& n, const Status& checked) const {
    if (checked.ok()) return checked;
    if (n.IsDefined() && n.Mark().is_null()) return InvalidArgument(file_ + ": " + checked.message());
    int line = n.IsDefined() ? n.Mark().line + 1 + line_offset_ : 0;
    return InvalidArgument(file_ + ":" + std::to_string(line) + ": " + checked.message());
  }

  // Fails on keys outside `allowed`.
  Status Fields(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> allowed) const {
    if (!n.IsMap()) return Error(n, path, "expected a mapping");
    for (const auto& kv : n) {
      std::string key = kv.first.as<std::string>();
      bool ok = false;
      std::string list;
      for (const char* a : allowed) {
        ok |= key == a;
        list += std::string(list.empty() ? "" : ", ") + a;
      }
      if (!ok) return Error(kv.first, Join(path, key), "unknown field; expected one of: " + list);
    }
    return Status::Ok();
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  Result<std::string> Scalar(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) return Err(Error(n, path, "expected a scalar value"));
    return n.Scalar();
  }

  // Applies `parse` to the scalar and prefixes its error with the location.
  Result<int64_t> Quantity(const YAML::Node& n, const std::string& path,
                           const std::function<Result<int64_t>(std::string_view)>& parse) const {
    auto s = Scalar(n, path);
    if (!s) return Err(s.error());
    auto v = parse(*s);
    if (!v) return Err(Error(n, path, v.error().message()));
    return *v;
  }

  // Quantity, then from lo to hi. Errors quote the value as written and say `range` in the
  // field's own units ("a duration from 1ms to 3650d").
  Result<int64_t> Bounded(const YAML::Node& n, const std::string& path,
                          const std::function<Result<int64_t>(std::string_view)>& parse, int64_t lo, int64_t hi,
                          const std::string& range) const {
    auto s = Scalar(n, path);
    if (!s) return Err(s.error());
    auto v = parse(*s);
    if (!v) return Err(Error(n, path, v.error().message() + "; expected " + range));
    if (*v < lo || *v > hi) return Err(Error(n, path, "'" + *s + "' is out of range; expected " + range));
    return *v;
  }

  Result<int64_t> Integer(const YAML::Node& n, const std::string& path, int64_t min, int64_t max) const {
    auto s = Scalar(n, path);
    if (!s) return Err(s.error());
    std::optional<int64_t> v = ParseInteger(*s, min, max);
    if (!v) {
      return Err(Error(n, path, "'" + *s + "' is not valid; expected an integer from " + std::to_string(min) +
                                    " to " + std::to_string(max)));
    }
    return *v;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  int line_offset_ = 0;
  const TemplateCatalog* templates_ = nullptr;
};

// One object (an API body, already parsed): `read` turns the mapping into T; errors name
// `source`, the line, and the field under `what`.
template <class T, class Read>
Result<T> ReadObject(const YAML::Node& root, const std::string& source, const std::string& what,
                     const std::string& expected, Read read, const TemplateCatalog* templates = nullptr) {
  YamlReader rd(source);
  rd.set_templates(templates);
  try {
    if (!root.IsMap()) return Err(rd.Error(root, what, "expected an object with " + expected));
    return read(rd, root);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
}

inline Result<YAML::Node> LoadObject(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
}

}  // namespace allot

// Early returns for the readers: the error of a Result or a Status, else the value.
#ifndef TRY_ASSIGN
#define TRY_ASSIGN(lhs, expr)              \
  do {                                     \
    auto _r = (expr);                      \
    if (!_r) return Err(_r.error());       \
    lhs = *_r;                             \
  } while (0)
#endif
#ifndef TRY_STATUS
#define TRY_STATUS(expr)                   \
  do {                                     \
    Status _s = (expr);                    \
    if (!_s.ok()) return Err(_s);          \
  } while (0)
#endif
