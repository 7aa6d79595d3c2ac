// `allot sim FILE`: a scenario file (ParseScenario), then its fleet and tenants applied and its
// jobs resolved (BuildInitialState), where a scenario's semantic errors surface.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spec/scenario.h"
#include "spec/setup.h"
#include "state/cluster_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  auto sc = ParseScenario(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!sc || sc->generate) return 0;  // the generator's output is not the file's
  ClusterState state;
  (void)BuildInitialState(*sc, state);
  return 0;
}
