// The seeded scenario generator: a fleet, a tenant tree and a day's jobs from a GenerateSpec
// (a scenario's generate: section).
#pragma once

#include "spec/scenario.h"

namespace allot {

// Appends the generated fleet, tenants and jobs (seeded, deterministic).
void Generate(const GenerateSpec& spec, Scenario& scenario);

}  // namespace allot
