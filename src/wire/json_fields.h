// Reading one JSON object of a wire form field by field (wire/agent_messages.cc,
// server/agent_wire.cc, server/job_environment_json.cc): the first error names the field's path and is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace allot {

using Json = nlohmann::json;

// Reads fields of one JSON object; the first error names the field's path and is kept.
class JsonFields {
 public:
  JsonFields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) Fail("", "expected an object");
  }
  bool ok() const { return error_.ok(); }
  const Status& error() const { return error_; }
  bool Has(const char* k) const { return j_.is_object() && j_.contains(k) && !j_[k].is_null(); }

  std::string Str(const char* k, bool required = false) {
    if (!Has(k)) {
      if (required) Fail(k, "missing");
      return "";
    }
    if (!j_[k].is_string()) return Fail(k, "expected a string"), "";
    return j_[k].get<std::string>();
  }
  int64_t Int(const char* k, int64_t fallback = 0, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
    if (!Has(k)) return fallback;
    if (!j_[k].is_number_integer()) return Fail(k, "expected an integer"), fallback;
    int64_t v = j_[k].get<int64_t>();
    if (v < lo || v > hi) return Fail(k, std::to_string(v) + " is out of range " + std::to_string(lo) + " to " + std::to_string(hi)), fallback;
    return v;
  }
  std::optional<int64_t> Opt(const char* k) {
    if (!Has(k)) return std::nullopt;
    return Int(k);
  }
  bool Bool(const char* k) {
    if (!Has(k)) return false;
    if (!j_[k].is_boolean()) return Fail(k, "expected true or false"), false;
    return j_[k].get<bool>();
  }
  const Json& Array(const char* k) {
    static const Json kEmpty = Json::array();
    if (!Has(k)) return kEmpty;
    if (!j_[k].is_array()) return Fail(k, "expected a list"), kEmpty;
    return j_[k];
  }
  std::vector<std::string> Strings(const char* k) {
    std::vector<std::string> out;
    for (const Json& v : Array(k)) {
      if (!v.is_string()) return Fail(k, "expected a list of strings"), out;
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::string Path(const char* k) const { return path_.empty() ? k : path_ + "." + k; }
  void Fail(const char* k, const std::string& what) {
    if (error_.ok()) error_ = InvalidArgument((*k ? Path(k) : path_) + ": " + what);
  }
  void Fail(const Status& s) {
    if (error_.ok()) error_ = s;
  }

 private:
  const Json& j_;
  std::string path_;
  Status error_;
};

}  // namespace allot
