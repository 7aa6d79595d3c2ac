#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// invoices, budgets list|set: allotd's billing API.
void AddBillingCommands(CLI::App& app);

}  // namespace allot::cli
