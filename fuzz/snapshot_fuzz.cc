// A state snapshot: RestoreSnapshot, as start-up does. The header's length and checksum are
// set to match the body, so mutations reach the body's decoding rather than stopping at the
// checksum. A restored state must encode to bytes that restore and encode the same again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "state/snapshot.h"

namespace {

void PutLe64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  constexpr size_t kHeader = 17;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= kHeader) {
    std::string_view body = std::string_view(bytes).substr(kHeader);
    PutLe64(bytes, 1, body.size());
    PutLe64(bytes, 9, SnapshotChecksum(body));
  }
  ClusterState state;
  if (!RestoreSnapshot(bytes, state).ok()) return 0;
  std::string once = EncodeSnapshot(state);
  ClusterState again;
  Status s = RestoreSnapshot(once, again);
  if (!s.ok() || EncodeSnapshot(again) != once) {
    std::fprintf(stderr, "restored, but its encoding does not round-trip%s%s\n", s.ok() ? "" : ": ", s.message().c_str());
    std::abort();
  }
  return 0;
}
