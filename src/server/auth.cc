#include "server/auth.h"

#include <sodium.h>

#include <cstdlib>

namespace allot {
namespace {

void InitSodium() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) std::abort();  // no randomness: refuse to mint tokens
}

}  // namespace

std::string NewToken() {
  InitSodium();
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(b64, sizeof b64, raw, sizeof raw, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(raw, sizeof raw);
  return std::string("allot_") + b64;
}

std::string Blake2bHex(std::string_view token) {
  InitSodium();
  unsigned char h[crypto_generichash_BYTES];
  crypto_generichash(h, sizeof h, reinterpret_cast<const unsigned char*>(token.data()), token.size(), nullptr, 0);
  char hex[crypto_generichash_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, h, sizeof h);
  return hex;
}

}  // namespace allot
