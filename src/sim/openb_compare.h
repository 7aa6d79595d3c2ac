// Side-by-side openb runs: several policies × seeds on one workload, with means, a CSV of the
// curves, an SVG plot and the JSON report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/openb.h"

namespace allot {

struct OpenbCompareOptions {
  std::string dir;                    // folder of the openb CSVs
  std::string workload = "default";   // pod list openb_pod_list_<workload>.csv
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  double inflate = 1.3;
};

struct OpenbCompare {
  std::string workload;
  std::vector<OpenbResult> runs;  // policies × seeds, in that order
  // Mean value(X) over the seeds, per policy (same order as the options).
  std::vector<std::pair<std::string, std::vector<double>>> means;
  int64_t total_gpus = 0;
};

Result<OpenbCompare> RunOpenbCompare(const OpenbCompareOptions& options);

// "42-51" or "42,43,50" → seeds.
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);

void PrintOpenbTable(const OpenbCompare& c, std::ostream& out);
void WriteOpenbJson(const OpenbCompare& c, std::ostream& out);
void WriteOpenbCsv(const OpenbCompare& c, std::ostream& out);   // x, then one column per policy (mean)
void WriteOpenbSvg(const OpenbCompare& c, std::ostream& out);

}  // namespace allot
