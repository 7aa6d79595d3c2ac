// An invoice as JSON: totals and breakdowns as exact integer micros ("amount_micros") with the
// decimal beside them for people ("amount": "12.34").
#pragma once

#include <string>

#include "metering/invoice.h"

namespace allot {

std::string InvoiceJson(const Invoice& invoice);

}  // namespace allot
