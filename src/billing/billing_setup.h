// A rate card file made ready to price with: the card and every time zone it names, loaded. The
// one loader for allotd (daemon/open_metering.h) and the simulator (`allot sim --rates`), so both
// price with the same card the same way.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "metering/billing.h"

namespace allot {

// Reads the rate card at `rates_file` and loads the zones it names from the OS tz database.
// Errors name the file and what was wrong.
Result<std::shared_ptr<const BillingSetup>> LoadBillingSetup(const std::string& rates_file);

}  // namespace allot
