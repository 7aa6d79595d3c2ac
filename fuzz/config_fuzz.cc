// allotd --config FILE: the settings file (ParseDaemonConfig, which hands tenants: and
// scheduler: to the scenario reader).
#include <cstddef>
#include <cstdint>
#include <string>

#include "allotd/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)allot::ParseDaemonConfig(std::string(reinterpret_cast<const char*>(data), size), "/etc/allot/allot.yaml");
  return 0;
}
