// What pricing needs beyond the state: the rate card and the time zones it names, loaded by a
// driver (billing/ reads the files) and shared read-only by the pass's budget gate, the
// daemon's period close and its API.
#pragma once

#include <map>
#include <string>

#include "metering/rate_card.h"
#include "metering/rating.h"
#include "metering/time_zone.h"

namespace allot {

struct BillingSetup {
  RateCard card;
  std::map<std::string, TimeZone> zones;  // by IANA name: every zone the card names

  // The zone of a top-level tenant (its path); UTC when the card's zone was not loaded.
  const TimeZone& ZoneOf(const std::string& org) const;
  // The org's billing month holding `t_ms`.
  Period PeriodOf(const std::string& org, int64_t t_ms) const { return MonthContaining(ZoneOf(org), t_ms); }
  // One OrgPeriod per live org for the month labelled `label` in its zone.
  Result<std::vector<OrgPeriod>> OrgPeriods(const QuotaTree& tree, const std::string& label) const;
};

// "4812500000" micros → "4,812.50 USD".
std::string FormatMoney(int64_t micros, const std::string& currency);
// Thousandths of a GPU-hour → "1,000.5 GPU-hours".
std::string FormatGpuHours(int64_t milli);

}  // namespace allot
