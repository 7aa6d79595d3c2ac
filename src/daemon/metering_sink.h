// The daemon's metering: closes billing periods into the ledger, on the writer thread.
//
// The ledger is journaled state (LedgerAppended events, state/billing_state.h), so an
// acknowledged close is never lost and a replay rebuilds the ledger byte for byte. The usage
// it prices comes from the state too (metering/state_usage.h: every run, ended or open, with
// its class), so nothing is kept beside the journal and a restart neither loses nor
// double-counts an interval: a period is closed once (the state remembers the last closed) and
// from the state as it stands at the close.
//
// A period label ("2026-11") closes at the first batch after it has ended in every org's zone:
// one Rate over every org's month (rating/h: one line per tenant, resource, class, topology,
// rounded once), then a close entry signed with the daemon's ed25519 key, all in one
// LedgerAppended. Lines appended earlier for that label (credits) are in its close's sum.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "metering/billing.h"
#include "metering/credit.h"
#include "metering/ledger.h"
#include "state/cluster_state.h"

namespace allot {

class MeteringSink {
 public:
  MeteringSink(std::shared_ptr<const BillingSetup> billing, std::shared_ptr<const LedgerCrypto> crypto)
      : billing_(std::move(billing)), crypto_(std::move(crypto)) {}

  // The events closing every period that has ended by now_ms (usually none), continuing the
  // state's ledger. REQUIRES: the writer thread, with the state as it is now. A failure (a GPU
  // model without a price) is returned and nothing is closed; the next batch tries again.
  Result<std::vector<LedgerAppended>> Due(const ClusterState& state, int64_t now_ms);

  // A credit for GPU time lost to a node fault (metering/credit.h) as the event that appends
  // it to the ledger, for the node-health code to Execute. It joins its period's close, or the
  // first open period's when its own has closed already.
  Result<LedgerAppended> Credit(const ClusterState& state, const FaultLoss& loss, int64_t at_ms) const;
  // An operator's correction: `amount_micros` (negative refunds) on tenant `path`'s invoice for
  // the first open month, saying why. Closed months are never edited. Fails naming the field:
  // an unknown tenant, a zero amount, a note that is empty, multi-line or over 500 characters.
  Result<LedgerAppended> Adjustment(const ClusterState& state, const std::string& path, int64_t amount_micros,
                                    const std::string& note, int64_t at_ms) const;

  // The ledger as `allot ledger verify` reads it: header (with this daemon's public key) and
  // every entry.
  std::string LedgerText(const ClusterState& state) const;
  // The state's ledger entries, decoded.
  Result<std::vector<LedgerEntry>> Entries(const ClusterState& state) const;

  const BillingSetup& billing() const { return *billing_; }
  std::shared_ptr<const BillingSetup> shared_billing() const { return billing_; }
  const LedgerCrypto& crypto() const { return *crypto_; }

 private:
  // A closed month's invoice is signed and stays as it is: an entry for it goes on the first open
  // month's instead. Returns the month it was for when it was moved, else "".
  std::string OntoOpenPeriod(const ClusterState& state, LedgerLine& line) const;
  // `line` as the event that appends it after the state's last entry.
  Result<LedgerAppended> Append(const ClusterState& state, LedgerLine line) const;
  // The first label to close: the month after the last closed, else the earliest month any
  // org's zone gives the first run's start; "" when no job has run yet.
  std::string FirstOpenLabel(const ClusterState& state) const;

  std::shared_ptr<const BillingSetup> billing_;
  std::shared_ptr<const LedgerCrypto> crypto_;
  std::string next_label_;     // writer thread: the next label to close, once known
  int64_t next_close_ms_ = 0;  // when it may close (0: not computed)
};

// "2026-11" → "2026-12"; "2026-12" → "2027-01".
std::string NextMonthLabel(const std::string& label);

}  // namespace allot
