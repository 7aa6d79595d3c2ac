// Reads a rate card (YAML). Strict: unknown fields, bad prices, unknown GPU models, modes and
// time zones are refused naming the file, line, field, the value and what was expected.
//
//   currency: USD                 # three capital letters (ISO 4217)
//   mode: usage                   # or floor+burst
//   accounting: chargeback        # or showback: report and warn, never hold jobs over budget
//   time_zone: Europe/Berlin      # the billing month is local to it (default UTC)
//   gpu_hour: {H100-80GB: 2.50}   # per GPU-hour, per model
//   cpu_hour: 0.02                # per CPU-hour
//   memory_gib_hour: 0.003        # per GiB-hour
//   burst_premium: 1.2            # on burstable and best-effort usage
//   topology_premium: {nvlink: 1.1, rack: 1.05, zone: 1.0}
//   orgs: {research: {mode: floor+burst, accounting: showback, time_zone: America/New_York}}
//
// Per-org billing lives here, not in the tenant tree: how an org is billed is finance's
// configuration, versioned with its prices; the tree holds what the scheduler enforces.
#pragma once

#include <string>

#include "metering/rate_card.h"

namespace allot {

// Whether an org's time zone is looked up in the tz database (billing/zoneinfo.h) or only kept
// as written (tests and the fuzz harness, which read no database).
enum class ZoneCheck { kLookUp, kNameOnly };

Result<RateCard> ParseRateCard(const std::string& text, const std::string& file, ZoneCheck zones);
Result<RateCard> LoadRateCard(const std::string& path, ZoneCheck zones);

}  // namespace allot
