// GET /v1/agent/assignments, read by the agent: allotd's answer as the agent parses it
// (ParseAssignments, ParseDesiredMig). A malformed answer must be refused, not crash the agent.
#include <cstddef>
#include <cstdint>

#include "wire/agent_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  Json body = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  (void)ParseAssignments(body);
  (void)ParseDesiredMig(body);
  return 0;
}
