// Bearer tokens: 256 random bits, shown once; only a hash (BLAKE2b-256 via libsodium) is kept.
#pragma once

#include <string>
#include <string_view>

namespace allot {

// A new token: "allot_" + 43 base64url characters (32 random bytes).
std::string NewToken();
// Hex of BLAKE2b-256 of `bytes`.
std::string Blake2bHex(std::string_view bytes);
// Hex of the token's hash: what the journal and the access table keep.
inline std::string HashToken(std::string_view token) { return Blake2bHex(token); }

}  // namespace allot
