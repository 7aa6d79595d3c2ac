// POST /v1/agent/heartbeat: the body as the agent route reads it (JSON, then ParseHeartbeat).
// A heartbeat that parses must survive its own JSON form: the agent writes what allotd reads.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "wire/agent_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  Json body = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  auto hb = ParseHeartbeat(body);
  if (!hb) return 0;
  auto again = ParseHeartbeat(HeartbeatJson(*hb));
  if (!again) {
    std::fprintf(stderr, "a parsed heartbeat does not parse back from HeartbeatJson: %s\n", again.error().message().c_str());
    std::abort();
  }
  return 0;
}
