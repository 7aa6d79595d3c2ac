// Sizing by workload, the choice (docs/sizing.md): each task group sized from a model gets the
// smallest allocation of the fleet that holds its estimate, written into the ordinary task
// group fields (so the scheduler sees a MIG, MPS or whole-GPU request like any other) and
// recorded in JobSpec::sizing with a one-line why.
#pragma once

#include <string>

#include "core/status.h"
#include "spec/job_spec.h"
#include "state/cluster_state.h"

namespace allot {

// In order: a MIG profile (the smallest that covers the estimate in memory and in compute
// share, as a bare fraction of the GPU is resolved), else an MPS share with the estimate as its
// memory limit, else ceil(estimate / GPU memory) whole GPUs (topology nvlink when more than one
// and the model has NVLink). Among the fleet's GPU models (the job's gpu_model only, when it
// names one), the pools the tenant may use, and at each level the allocation holding the least
// memory, then the model's name. A job with a topology takes whole GPUs only. Groups with
// `override: true` keep what they wrote; their estimate is recorded beside it. No allocation
// that fits: an error naming the group's model field, the estimate, and what each model offers.
// REQUIRES: job.spec.tenant resolved.
Status ChooseSizedAllocations(ScenarioJob& job, const ClusterState& state, const std::string& where);

}  // namespace allot
