// The ledger: append-only priced lines, each chained to the one before by a hash, and a signed
// close entry at the end of each period. A correction is a new adjustment entry, never an edit.
//
// Text form (what `allot sim --ledger` writes and `allot ledger verify` reads), one entry a line,
// tab-separated, after a header line "allot-ledger 1<TAB>public_key=<hex>":
//   seq period tenant kind resource class topology quantity unit_price burst_ppm topology_ppm
//   amount note signature prev_hash hash
// hash = Hash(prev_hash "\n" <the first fourteen fields as written>); the first entry's
// prev_hash is "-". A close entry's quantity is the number of entries of its period so far,
// its amount their sum, its note the currency, and its signature covers
// "allot-ledger close <period> <seq> <prev_hash>". The public key in the header is only a hint:
// pass the one you trust to VerifyLedger.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "metering/interval.h"
#include "metering/money.h"

namespace allot {

// kReservation: a reservation's windows in the period, billed whether used or not (issue 16).
enum class EntryKind : uint8_t { kFloor, kUsage, kCredit, kAdjustment, kClose, kReservation };
const char* EntryKindName(EntryKind k);  // "floor", "usage", "credit", "adjustment", "close", "reservation"

struct LedgerLine {
  std::string period;  // "2025-03"
  std::string tenant;  // path; "" for a close
  EntryKind kind = EntryKind::kUsage;
  std::string resource;  // "gpu/H100-80GB", "cpu", "memory"; "" when none
  UsageClass usage_class = UsageClass::kGuaranteed;  // usage lines; guaranteed otherwise
  Topology topology = Topology::kNone;
  // Resource base units × ms: GPU units·ms (kGpuUnit per GPU), millicore·ms, MiB·ms.
  __int128 quantity = 0;
  int64_t unit_price = 0;             // micros per GPU-, CPU- or GiB-hour
  int64_t burst_ppm = kPpm;
  int64_t topology_ppm = kPpm;
  int64_t amount = 0;  // micros; credits negative
  std::string note;
  TenantId tenant_id;  // in memory only (not written): the what-if sums subtrees by id
};

// amount = round_half_up(quantity × unit_price × burst × topology / (unit × 1h × 10^12)), where
// unit is kGpuUnit, 1000 millicores or 1024 MiB: the exact product, rounded once per line.
// Fails naming the resource when it is not one of those or the amount does not fit.
Result<int64_t> PriceLine(std::string_view resource, __int128 quantity, int64_t unit_price, int64_t burst_ppm,
                          int64_t topology_ppm);

struct LedgerEntry {
  int64_t seq = 0;  // from 1
  LedgerLine line;
  std::string signature;  // close entries: hex; else empty
  std::string prev_hash;
  std::string hash;
};

// The crypto a ledger needs, kept behind an interface so the core stays deterministic and free
// of libraries with global state (billing/sodium_crypto.h: BLAKE2b-256 and ed25519).
class LedgerCrypto {
 public:
  virtual ~LedgerCrypto() = default;
  virtual std::string Hash(std::string_view data) const = 0;  // hex
  // Signs with the private key; fails when this instance holds none.
  virtual Result<std::string> Sign(std::string_view message) const = 0;  // hex
  virtual bool Verify(std::string_view message, std::string_view signature_hex,
                      std::string_view public_key_hex) const = 0;
  virtual std::string PublicKey() const = 0;  // hex; empty when none
};

class Ledger {
 public:
  explicit Ledger(const LedgerCrypto& crypto) : crypto_(crypto) {}
  // Continues a ledger already written (the daemon's, from its journal).
  Ledger(const LedgerCrypto& crypto, std::vector<LedgerEntry> entries) : crypto_(crypto), entries_(std::move(entries)) {}
  // Appends one line (any kind but close) and chains it.
  const LedgerEntry& Append(LedgerLine line);
  // Closes `period`: a close entry summing its lines, signed over the head hash.
  Result<const LedgerEntry*> Close(const std::string& period, const std::string& currency);
  const std::vector<LedgerEntry>& entries() const { return entries_; }
  const std::string& head() const;
  // The text form (see the top of this file), byte-identical for identical appends.
  std::string Encode() const;

 private:
  const LedgerCrypto& crypto_;
  std::vector<LedgerEntry> entries_;
};

// One entry's line of the text form, without its newline.
std::string EncodeEntry(const LedgerEntry& e);
// The text form's header line, without its newline.
std::string LedgerHeader(const std::string& public_key_hex);

// The fields hashed for an entry, tab-separated and escaped (\t, \n, \\).
std::string CanonicalFields(const LedgerEntry& e);
std::string CloseMessage(const std::string& period, int64_t seq, const std::string& prev_hash);

// Parses the text form; errors name the line and field. *public_key gets the header's hint.
Result<std::vector<LedgerEntry>> DecodeLedger(std::string_view text, std::string* public_key);

struct LedgerSummary {
  int64_t entries = 0;
  int64_t closes = 0;
  int64_t unsealed = 0;  // entries after the last close (not yet signed)
  std::string head;      // hash of the last entry
};
// Recomputes every hash, seq and chain link, every priced amount and close sum, and checks each
// close signature against `public_key_hex`. The first problem fails, naming the entry.
Result<LedgerSummary> VerifyLedger(const std::vector<LedgerEntry>& entries, const LedgerCrypto& crypto,
                                   std::string_view public_key_hex);

}  // namespace allot
