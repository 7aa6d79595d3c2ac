// POST /v1/agent/heartbeat: the body as allotd reads it (ReadHeartbeatBody: the SAX reader, or the
// strict tree reader for what it declines). A heartbeat the SAX reader reads must be read the
// same by the tree reader (ParseStrictJson, then ParseHeartbeat), which must not refuse it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/agent_wire.h"
#include "server/body_reader.h"
#include "wire/heartbeat_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  const std::string body(reinterpret_cast<const char*>(data), size);
  auto served = ReadHeartbeatBody(body);
  auto sax = ReadPlainHeartbeat(body);
  if (!sax) return 0;
  auto tree = ParseStrictJson(body);
  auto hb = tree ? ParseHeartbeat(*tree) : Result<Heartbeat>(Err(tree.error()));
  if (!hb) {
    std::fprintf(stderr, "the SAX reader read a heartbeat the tree reader refuses: %s\n", hb.error().message().c_str());
    std::abort();
  }
  if (!(*hb == *sax) || !served || !(*served == *sax)) {
    std::fprintf(stderr, "the SAX reader and the tree reader read the heartbeat differently\n");
    std::abort();
  }
  return 0;
}
