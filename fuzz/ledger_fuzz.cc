// `allot ledger verify FILE` and GET /v1/ledger's readers: DecodeLedger, then VerifyLedger with
// a stand-in crypto whose every hash is "h" and every signature good, so entries that chain
// with "h" reach the checks past the hashes (seq, prices, close sums).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "metering/ledger.h"

namespace {

class FixedCrypto : public allot::LedgerCrypto {
 public:
  std::string Hash(std::string_view) const override { return "h"; }
  allot::Result<std::string> Sign(std::string_view) const override { return std::string("s"); }
  bool Verify(std::string_view, std::string_view, std::string_view) const override { return true; }
  std::string PublicKey() const override { return "k"; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  std::string key;
  auto entries = DecodeLedger(std::string_view(reinterpret_cast<const char*>(data), size), &key);
  if (!entries) return 0;
  static const FixedCrypto crypto;
  (void)VerifyLedger(*entries, crypto, key);
  return 0;
}
