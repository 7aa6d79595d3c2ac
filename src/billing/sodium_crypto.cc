#include "billing/sodium_crypto.h"

#include <sodium.h>

#include <cstdlib>

namespace allot {
namespace {

void InitSodium() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) std::abort();  // no libsodium: nothing can be signed or verified
}

std::string Hex(const unsigned char* b, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), b, n);
  out.pop_back();
  return out;
}

bool Unhex(std::string_view hex, unsigned char* out, size_t n) {
  size_t len = 0;
  return hex.size() == 2 * n && sodium_hex2bin(out, n, hex.data(), hex.size(), nullptr, &len, nullptr) == 0 &&
         len == n;
}

}  // namespace

SodiumLedgerCrypto SodiumLedgerCrypto::FromSeedBytes(const unsigned char* seed) {
  InitSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, seed);
  std::string secret(reinterpret_cast<char*>(sk), sizeof sk);
  sodium_memzero(sk, sizeof sk);
  return SodiumLedgerCrypto(std::move(secret), Hex(pk, sizeof pk));
}

Result<SodiumLedgerCrypto> SodiumLedgerCrypto::FromSeed(std::string_view seed_hex) {
  unsigned char seed[crypto_sign_SEEDBYTES];
  if (!Unhex(seed_hex, seed, sizeof seed)) {
    return Err(InvalidArgument("ledger key: expected " + std::to_string(2 * crypto_sign_SEEDBYTES) +
                               " hex digits (an ed25519 seed), got " + std::to_string(seed_hex.size()) + " characters"));
  }
  SodiumLedgerCrypto c = FromSeedBytes(seed);
  sodium_memzero(seed, sizeof seed);
  return c;
}

SodiumLedgerCrypto SodiumLedgerCrypto::Generate() {
  InitSodium();
  unsigned char seed[crypto_sign_SEEDBYTES];
  randombytes_buf(seed, sizeof seed);
  SodiumLedgerCrypto c = FromSeedBytes(seed);
  sodium_memzero(seed, sizeof seed);
  return c;
}

std::string SodiumLedgerCrypto::SeedHex() const {
  if (secret_.size() < crypto_sign_SEEDBYTES) return "";
  return Hex(reinterpret_cast<const unsigned char*>(secret_.data()), crypto_sign_SEEDBYTES);
}

SodiumLedgerCrypto SodiumLedgerCrypto::VerifyOnly() {
  InitSodium();
  return SodiumLedgerCrypto("", "");
}

std::string SodiumLedgerCrypto::Hash(std::string_view data) const {
  unsigned char h[crypto_generichash_BYTES];  // 32: BLAKE2b-256
  crypto_generichash(h, sizeof h, reinterpret_cast<const unsigned char*>(data.data()), data.size(), nullptr, 0);
  return Hex(h, sizeof h);
}

Result<std::string> SodiumLedgerCrypto::Sign(std::string_view message) const {
  if (secret_.empty()) return Err(FailedPrecondition("ledger: no signing key loaded; expected a key to close a period"));
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                       reinterpret_cast<const unsigned char*>(secret_.data()));
  return Hex(sig, sizeof sig);
}

bool SodiumLedgerCrypto::Verify(std::string_view message, std::string_view signature_hex,
                                std::string_view public_key_hex) const {
  unsigned char sig[crypto_sign_BYTES], pk[crypto_sign_PUBLICKEYBYTES];
  if (!Unhex(signature_hex, sig, sizeof sig) || !Unhex(public_key_hex, pk, sizeof pk)) return false;
  return crypto_sign_verify_detached(sig, reinterpret_cast<const unsigned char*>(message.data()), message.size(), pk) == 0;
}

}  // namespace allot
