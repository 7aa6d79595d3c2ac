// Status and Result: errors cross module boundaries as values, never as exceptions.
// Codes map 1:1 to HTTP so the daemon can answer without a translation table of its own.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace allot {

enum class Code {
  kOk,
  kInvalidArgument,     // 400: the request or file is malformed; fix it and retry.
  kUnsupportedMediaType,  // 415: a body in a format the endpoint does not read; resend it as one it does.
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403
  kNotFound,            // 404
  kConflict,            // 409: already exists, or state forbids it now.
  kFailedPrecondition,  // 409
  kResourceExhausted,   // 429
  kUnavailable,         // 503: retry later.
  kInternal,            // 500: a bug.
};

int HttpStatus(Code code);
const char* CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }

template <class T>
using Result = tl::expected<T, Status>;

inline tl::unexpected<Status> Err(Status s) { return tl::unexpected<Status>(std::move(s)); }

}  // namespace allot

// For broken invariants only: a bug, never a user error.
#define ALLOT_CHECK(cond)                                         \
  do {                                                            \
    if (!(cond)) ::allot::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (0)

namespace allot {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond);
}
