#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// login, submit, jobs, describe, explain, cancel, quota, nodes, tokens: allotd's API client.
void AddClientCommands(CLI::App& app);

}  // namespace allot::cli
