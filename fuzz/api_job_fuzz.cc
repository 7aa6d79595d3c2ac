// POST /v1/jobs: the body as SubmitJob reads it (ParseJob), then resolved against a small
// cluster (ResolveJob), as allotd does before it journals the submission.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  const ClusterState& state = fuzz::FixtureState();
  auto job = ParseJob(std::string(reinterpret_cast<const char*>(data), size), "body");
  if (job) (void)ResolveJob(*job, state, "job.");
  return 0;
}
