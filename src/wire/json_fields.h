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

// Reads fields of one JSON object; the first error names the field's path and is kept. One map
// lookup per field read, and a nested object's path ("heartbeat.gpus[3]") is spelled only when
// it has an error: a heartbeat (thousands a second) reads dozens of fields.
class JsonFields {
 public:
  JsonFields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) Fail("", "expected an object");
  }
  // Element `index` of `parent`'s list `key`; `parent` must outlive it.
  JsonFields(const Json& j, const JsonFields& parent, const char* key, size_t index)
      : j_(j), parent_(&parent), key_(key), index_(index) {
    if (!j_.is_object()) Fail("", "expected an object");
  }
  bool ok() const { return error_.ok(); }
  const Status& error() const { return error_; }
  bool Has(const char* k) const { return Get(k) != nullptr; }

  std::string Str(const char* k, bool required = false) {
    const Json* v = Get(k);
    if (!v) {
      if (required) Fail(k, "missing");
      return "";
    }
    if (!v->is_string()) return Fail(k, "expected a string"), "";
    return v->get<std::string>();
  }
  int64_t Int(const char* k, int64_t fallback = 0, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
    const Json* j = Get(k);
    if (!j) return fallback;
    if (!j->is_number_integer()) return Fail(k, "expected an integer"), fallback;
    int64_t v = j->get<int64_t>();
    if (v < lo || v > hi) return Fail(k, std::to_string(v) + " is out of range " + std::to_string(lo) + " to " + std::to_string(hi)), fallback;
    return v;
  }
  std::optional<int64_t> Opt(const char* k) {
    if (!Has(k)) return std::nullopt;
    return Int(k);
  }
  bool Bool(const char* k) {
    const Json* v = Get(k);
    if (!v) return false;
    if (!v->is_boolean()) return Fail(k, "expected true or false"), false;
    return v->get<bool>();
  }
  const Json& Array(const char* k) {
    static const Json kEmpty = Json::array();
    const Json* v = Get(k);
    if (!v) return kEmpty;
    if (!v->is_array()) return Fail(k, "expected a list"), kEmpty;
    return *v;
  }
  std::vector<std::string> Strings(const char* k) {
    std::vector<std::string> out;
    for (const Json& v : Array(k)) {
      if (!v.is_string()) return Fail(k, "expected a list of strings"), out;
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::string Path(const char* k) const {
    std::string base = Base();
    return base.empty() ? k : base + "." + k;
  }
  void Fail(const char* k, const std::string& what) {
    if (error_.ok()) error_ = InvalidArgument((*k ? Path(k) : Base()) + ": " + what);
  }
  void Fail(const Status& s) {
    if (error_.ok()) error_ = s;
  }

 private:
  // The field's value; null when absent or JSON null.
  const Json* Get(const char* k) const {
    if (!j_.is_object()) return nullptr;
    auto it = j_.find(k);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Base() const { return parent_ ? parent_->Path(key_) + "[" + std::to_string(index_) + "]" : path_; }

  const Json& j_;
  std::string path_;
  const JsonFields* parent_ = nullptr;
  const char* key_ = "";
  size_t index_ = 0;
  Status error_;
};

}  // namespace allot
