// The scenario's `budgets:` list (docs/scenario.md): one entry per tenant, each with a spend
// and/or GPU-hour cap per billing month, read as allotd's POST /v1/budgets takes them.
#pragma once

#include <vector>

#include "spec/scenario.h"
#include "spec/field_reader.h"

namespace allot {

// Reads `budgets` (the list's node). Tenants are checked later, against the state
// (spec/setup.h). Errors read "FILE:LINE: budgets[I].FIELD: what was wrong; expected what".
Result<std::vector<ScenarioBudget>> ReadBudgets(const YamlReader& rd, const YAML::Node& budgets);

}  // namespace allot
