// POST /v1/jobs: the body as SubmitJob reads it (ReadBody by its Content-Type, then
// ReadJobObject), then resolved against a small cluster (ResolveJob), as allotd does before it
// journals the submission. The first byte picks the Content-Type: odd → YAML, even → JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_state.h"
#include "server/body_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  if (size == 0) return 0;
  const ClusterState& state = fuzz::FixtureState();
  const char* type = data[0] & 1 ? "application/yaml" : "application/json";
  auto tree = ReadBody(type, std::string(reinterpret_cast<const char*>(data + 1), size - 1), "job");
  if (!tree) return 0;
  auto job = ReadJobObject(*tree, "body");
  if (job) (void)ResolveJob(*job, state, "job.");
  return 0;
}
