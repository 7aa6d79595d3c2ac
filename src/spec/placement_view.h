// How a job's placement is shown: the other half of the job contract the simulator's report
// and the API share (a job is written as a spec, and read back with its placement).
#pragma once

#include <string>

#include "state/cluster_state.h"

namespace allot {

// A job's placement as a JSON array, one object per task: node, gpu (its first GPU index),
// gpus (whole GPUs), mig ("1g.10gb@3"), mps ({percent, memory}), timeslice, and share (the
// milli-GPU it is charged). The report (sim/report.cc) and the API (server/api_json.cc) both
// write it.
std::string PlacementJson(const ClusterState& st, const Job& j);

}  // namespace allot
