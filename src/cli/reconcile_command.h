#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// `allot reconcile`: the scheduler's GPU time per allocation against what the node agents
// reported (GET /v1/reconciliation). Exit 0: nothing over tolerance; 1: findings listed.
void AddReconcileCommand(CLI::App& app);

}  // namespace allot::cli
