// A rate card: what each resource costs per hour, the premiums, and how each org is billed.
// Prices are integer micro-units of one currency, multipliers parts per million, both parsed
// exactly from their decimals (billing/rate_card_yaml.h reads the YAML).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "metering/money.h"
#include "state/job.h"

namespace allot {

// usage: every interval priced by consumption. floor+burst: an org's guarantees billed for the
// whole period whether used or not; usage beyond them (burstable, best effort) by consumption.
enum class BillingMode : uint8_t { kUsage, kFloorBurst };
const char* BillingModeName(BillingMode m);  // "usage", "floor+burst"

// chargeback: usage counts against budgets (a job that would break one is held). showback:
// reported and warned about, never held.
enum class Accounting : uint8_t { kChargeback, kShowback };
const char* AccountingName(Accounting a);  // "chargeback", "showback"

struct OrgBilling {
  std::optional<BillingMode> mode;       // unset: the card's
  std::optional<Accounting> accounting;  // unset: the card's
  std::optional<std::string> time_zone;  // unset: the card's
};

struct RateCard {
  std::string currency = "USD";
  BillingMode mode = BillingMode::kUsage;
  Accounting accounting = Accounting::kChargeback;
  std::string time_zone = "UTC";  // IANA name; the period (a month) is local to it
  std::map<std::string, int64_t> gpu_hour;  // GPU model ("H100-80GB") → micros per GPU-hour
  int64_t cpu_hour = 0;                     // micros per CPU-hour (1000 millicores)
  int64_t memory_gib_hour = 0;              // micros per GiB-hour (1024 MiB)
  // On burstable and best-effort usage, every resource.
  int64_t burst_premium = kPpm;
  // On the GPU time of gangs constrained to an NVLink domain, a rack or a zone, by Topology.
  std::array<int64_t, 4> topology_premium = {kPpm, kPpm, kPpm, kPpm};
  std::map<std::string, OrgBilling> orgs;  // by org path (a top-level tenant)

  BillingMode ModeOf(const std::string& org) const {
    auto it = orgs.find(org);
    return it != orgs.end() && it->second.mode ? *it->second.mode : mode;
  }
  Accounting AccountingOf(const std::string& org) const {
    auto it = orgs.find(org);
    return it != orgs.end() && it->second.accounting ? *it->second.accounting : accounting;
  }
  const std::string& TimeZoneOf(const std::string& org) const {
    auto it = orgs.find(org);
    return it != orgs.end() && it->second.time_zone ? *it->second.time_zone : time_zone;
  }
};

}  // namespace allot
