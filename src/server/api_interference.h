// The noisy-neighbour responses and findings as the API shows them (docs/noisy-neighbour.md):
// GET /v1/interference and the "interference" of a job's explain. A job of a tenant the caller
// may not read is shown as "another tenant's job", without its name or tenant.
#pragma once

#include <nlohmann/json.hpp>

#include "state/cluster_state.h"
#include "tenancy/access.h"

namespace allot {

// The responses in force naming job `id` as victim or neighbour, each as InterferenceJson.
nlohmann::json InterferenceOfJob(const ClusterState& st, JobId id, const Principal& who);

}  // namespace allot
