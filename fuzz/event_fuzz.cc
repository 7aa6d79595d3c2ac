// A journal record: DecodeEvent, as replay does once a row's checksum matches. What decodes must
// encode to bytes that decode to the same event and encode the same again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "state/event_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  auto e = DecodeEvent(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!e) return 0;
  std::string once = EncodeEvent(*e);
  auto again = DecodeEvent(once);
  if (!again || EncodeEvent(*again) != once) {
    std::fprintf(stderr, "%s: decoded, but its encoding does not round-trip%s%s\n", EventTypeName(*e),
                 again ? "" : ": ", again ? "" : again.error().message().c_str());
    std::abort();
  }
  return 0;
}
