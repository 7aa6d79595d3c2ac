// How a job's sizing by workload (JobSpec::sizing, docs/sizing.md) is shown: the same JSON in
// the API's job and explain (server/api_json.cc) and in `allot sim --json`'s jobs (sim/report.cc).
#pragma once

#include <nlohmann/json.hpp>

#include "state/job.h"

namespace allot {

// One object per sized task group: {"group", "model": {as written, the catalogue's values
// filled in}, "estimate": {"total", "weights", "kv_cache", "training", "overhead" as "NMi"
// quantities, "total_mib"}, "allocation", "why"}. An empty array when none is sized.
nlohmann::json SizingJson(const JobSpec& spec);

}  // namespace allot
