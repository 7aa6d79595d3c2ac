// allot keys add / POST /v1/keys, and the agent before it authorises a key: one OpenSSH public
// key line. What parses must print back (Line) to a line that parses to the same key.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "wire/ssh_public_key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto key = allot::ParseSshPublicKey(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!key) return 0;
  auto again = allot::ParseSshPublicKey(key->Line());
  if (!again || again->type != key->type || again->body != key->body || again->comment != key->comment) std::abort();
  return 0;
}
