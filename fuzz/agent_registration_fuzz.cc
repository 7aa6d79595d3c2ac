// POST /v1/agent/register: the body as the agent route reads it (JSON, then ParseRegistration).
#include <cstddef>
#include <cstdint>

#include "server/agent_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  Json body = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  (void)ParseRegistration(body);
  return 0;
}
