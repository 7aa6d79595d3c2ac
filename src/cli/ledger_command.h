#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// `allot ledger verify FILE`: recomputes a ledger's hash chain, amounts and close signatures.
// `allot ledger invoice FILE --org ORG --period P [--csv]`: one org's invoice from a ledger.
void AddLedgerCommand(CLI::App& app);

}  // namespace allot::cli
