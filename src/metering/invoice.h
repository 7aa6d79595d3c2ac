// Invoices: one org's ledger lines for one period, summed, with breakdowns by team, project,
// user, GPU model, class and kind. Every breakdown partitions the same lines, so each sums to
// the total exactly.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "metering/ledger.h"

namespace allot {

struct Invoice {
  std::string org;
  std::string period;
  std::string currency;
  std::vector<LedgerLine> lines;  // in ledger order; closes left out
  int64_t total = 0;              // micros
  // Keys: the tenant path cut at that depth ("research/nlp" is team research/nlp), or
  // "(org)", "(team)", "(project)" for lines billed above it; resource names; class names, with
  // "floor", "credit" and "adjustment" for lines that are not usage.
  std::map<std::string, int64_t> by_team, by_project, by_user, by_model, by_class;
};

// The lines of `org` (its path) in `period` from a ledger, including credits and adjustments.
Result<Invoice> BuildInvoice(const std::vector<LedgerEntry>& entries, const std::string& org, const std::string& period,
                     const std::string& currency);

// CSV: one row per line (period, tenant, team, project, user, kind, resource, class, topology,
// quantity in hours of the whole unit to 6 decimals, unit price, premiums, amount), then a total
// row. Amounts as decimals of the currency, exact.
std::string InvoiceCsv(const Invoice& invoice);

// Resource × ms in hours of the whole unit (GPU, CPU, GiB), rounded half up to 6 decimals.
std::string FormatUnitHours(const std::string& resource, __int128 quantity);

}  // namespace allot
