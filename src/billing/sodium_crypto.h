// LedgerCrypto over libsodium: BLAKE2b-256 chain hashes, ed25519 close signatures.
#pragma once

#include <string>

#include "metering/ledger.h"

namespace allot {

class SodiumLedgerCrypto : public LedgerCrypto {
 public:
  // From a 32-byte seed (64 hex digits): the same seed, the same key, the same signatures.
  static Result<SodiumLedgerCrypto> FromSeed(std::string_view seed_hex);
  // A fresh random key.
  static SodiumLedgerCrypto Generate();
  // Hashes and verifies; Sign fails.
  static SodiumLedgerCrypto VerifyOnly();

  std::string Hash(std::string_view data) const override;
  Result<std::string> Sign(std::string_view message) const override;
  bool Verify(std::string_view message, std::string_view signature_hex, std::string_view public_key_hex) const override;
  std::string PublicKey() const override { return public_hex_; }
  // The 32-byte seed in hex, to keep the key (FromSeed reads it back); empty when verify-only.
  std::string SeedHex() const;

 private:
  SodiumLedgerCrypto(std::string secret, std::string public_hex)
      : secret_(std::move(secret)), public_hex_(std::move(public_hex)) {}
  static SodiumLedgerCrypto FromSeedBytes(const unsigned char* seed);

  std::string secret_;  // 64 bytes (libsodium's seed ‖ public key); empty: verify only
  std::string public_hex_;
};

}  // namespace allot
