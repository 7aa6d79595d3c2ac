// POST /v1/tokens: the body as IssueToken reads it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/api_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  allot::TokenBody body;
  (void)allot::ParseTokenBody(std::string(reinterpret_cast<const char*>(data), size), body);
  return 0;
}
