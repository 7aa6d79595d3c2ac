// The simulator's report: JSON (the contract tests and tools read) and a human summary.
#pragma once

#include <iosfwd>
#include <string>

#include "sim/simulator.h"

namespace allot {

struct ReportOptions {
  bool timing = true;  // false: scheduler.wall_seconds is null, so reports are byte-identical
};

// Streams the report: one line per tenant and per job, so a 900,000-job report never exists
// as one document in memory.
void WriteReportJson(const SimRun& run, const ReportOptions& options, std::ostream& out);
std::string ReportJson(const SimRun& run, const ReportOptions& options);
void PrintSummary(const SimRun& run, std::ostream& out);

}  // namespace allot
