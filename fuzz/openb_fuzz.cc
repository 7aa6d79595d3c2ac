// `allot sim openb`: the same bytes read as an openb node list and as a pod list.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "sim/openb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream nodes(text), pods(text);
  (void)allot::ReadOpenbNodes(nodes, "nodes.csv");
  (void)allot::ReadOpenbPods(pods, "pods.csv");
  return 0;
}
