// allotd --rates FILE and `allot sim --rates`: a rate card. Time zone names are not looked up
// (no zoneinfo directory): the harness reads no files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "billing/rate_card_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)allot::ParseRateCard(std::string(reinterpret_cast<const char*>(data), size), "rates.yaml", allot::ZoneCheck::kNameOnly);
  return 0;
}
