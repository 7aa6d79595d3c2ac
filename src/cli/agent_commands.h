// What `allot` asks about node agents and the tasks they run: `allot logs`, `allot nodes show`
// and `allot nodes check` (server/api_nodes.cc).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/client.h"

namespace allot::cli {

// logs JOB [--task N] [--run R] [-f]
void AddLogsCommand(CLI::App& app);
// The node with its agent's heartbeat, GPU telemetry, tasks and newest health report.
int ShowNode(const Conn& conn, const std::string& node);
// Asks the node's agent for a health check and waits (up to `wait_s`) for its report: 0 when it
// passed, 1 when it failed (the failures listed), 3 when no report came.
int CheckNode(const Conn& conn, const std::string& node, int wait_s);

}  // namespace allot::cli
