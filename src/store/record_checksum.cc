#include "store/record_checksum.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "state/event_codec.h"

namespace allot {
namespace {

uint64_t LoadLe64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
}

// MurmurHash3's finalizer: every input bit reaches every output bit.
uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

uint64_t RecordChecksum(uint64_t seq, std::string_view b) {
  uint64_t h = Avalanche(seq ^ 0x9E3779B97F4A7C15ULL) ^ (b.size() * 0xC2B2AE3D27D4EB4FULL);
  auto mix = [&](uint64_t w) {
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;  // odd multiplier: a bijection
    h ^= h >> 32;
  };
  size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) mix(LoadLe64(b.data() + i));
  uint64_t tail = 0;
  for (size_t k = 0; i + k < b.size(); ++k) tail |= uint64_t{static_cast<uint8_t>(b[i + k])} << (8 * k);
  mix(tail);
  return Avalanche(h);
}

Result<Event> DecodeCheckedRecord(const std::string& where, uint64_t seq, std::string_view record, uint64_t stored) {
  auto e = DecodeEvent(record);
  uint64_t computed = RecordChecksum(seq, record);
  if (computed != stored) {
    std::string what = e ? std::string("(") + EventTypeName(*e) + ")" : "(" + e.error().message() + ")";
    return Err(Internal("journal " + where + ": event " + std::to_string(seq) + " " + what + ": checksum " + Hex(computed) +
                        " does not match the stored " + Hex(stored) +
                        "; the record changed after it was written (restore the journal from a backup)"));
  }
  if (!e) return Err(Internal("journal " + where + ": event " + std::to_string(seq) + ": " + e.error().message()));
  return e;
}

}  // namespace allot
