// allotd's metering set-up: the rate card, the time zones it names, and the ledger's signing
// key, kept in the data directory like the admin token.
#pragma once

#include <memory>
#include <string>

#include "daemon/metering_sink.h"

namespace allot {

// Reads the rate card at `rates_file` and its zones (billing/billing_setup.h), and the ed25519 seed
// in `data_dir`/ledger-key (64 hex digits), writing a fresh one (mode 0600) when there is none;
// its public key goes to ledger-key.pub.
// Errors name the file and what was wrong.
Result<std::shared_ptr<MeteringSink>> OpenMetering(const std::string& rates_file, const std::string& data_dir);

}  // namespace allot
