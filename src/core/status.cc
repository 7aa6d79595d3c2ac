#include "core/status.h"

#include <cstdio>
#include <cstdlib>

namespace allot {

int HttpStatus(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kInvalidArgument: return 400;
    case Code::kUnsupportedMediaType: return 415;
    case Code::kUnauthenticated: return 401;
    case Code::kPermissionDenied: return 403;
    case Code::kNotFound: return 404;
    case Code::kConflict:
    case Code::kFailedPrecondition: return 409;
    case Code::kResourceExhausted: return 429;
    case Code::kUnavailable: return 503;
    case Code::kInternal: return 500;
  }
  return 500;
}

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kUnsupportedMediaType: return "unsupported_media_type";
    case Code::kUnauthenticated: return "unauthenticated";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kNotFound: return "not_found";
    case Code::kConflict: return "conflict";
    case Code::kFailedPrecondition: return "failed_precondition";
    case Code::kResourceExhausted: return "resource_exhausted";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

// Writing to stderr here is the one I/O the core does: a broken invariant is a bug and the
// process must say where before it dies.
void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "ALLOT_CHECK failed at %s:%d: %s\n", file, line, cond);
  std::abort();
}

}  // namespace allot
