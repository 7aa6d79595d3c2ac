#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// `allot alerts [--after ID] [--kind K]`: the anomaly alerts allotd raised (GET /v1/alerts).
void AddAlertsCommand(CLI::App& app);

}  // namespace allot::cli
