// The seeded scenario generator: a fleet, a tenant tree and a day's jobs from a GenerateSpec
// (a scenario's generate: section).
#pragma once

#include "spec/scenario.h"

namespace allot {

// Appends the generated fleet, tenants and jobs (seeded, deterministic).
void Generate(const GenerateSpec& spec, Scenario& scenario);

// Puts jobs[first, end) into submit order, ties in their present order (as a stable sort):
// indexes are sorted, then each job is moved once along the permutation's cycles (a merge sort
// of a month of jobs moves each ~20 times and holds half of them twice).
void OrderBySubmit(std::deque<ScenarioJob>& jobs, size_t first = 0);

}  // namespace allot
