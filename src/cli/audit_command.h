#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// `allot audit verify --data DIR`: recomputes the audit log's hash chain from the journal.
void AddAuditCommand(CLI::App& app);

}  // namespace allot::cli
