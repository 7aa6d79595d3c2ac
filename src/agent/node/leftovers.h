// What a previous run of the agent left on the node, found and removed at start-up, before the
// agent registers. After a kill -9 or a crash nobody stopped its tasks' cgroups, MPS daemons or
// MIG instances, and allotd has requeued (or will requeue, at the registration) its jobs:
//   - task cgroups under its group, in every hierarchy: what is still inside is killed, then
//     the cgroups are removed;
//   - MPS control daemons it recorded starting (MpsControl::StopLeftovers);
//   - MIG instances: one is made per task, so every instance on the node's GPUs was a task's;
//   - per-task files: the preempt files under each tenant's work directory.
#pragma once

#include <string>
#include <vector>

#include "agent/gpu_backend.h"
#include "agent/run/cgroup_layout.h"
#include "agent/run/group_cgroups.h"
#include "agent/run/mps_control.h"

namespace allot {

struct LeftoverPlaces {
  CgroupLayout cgroups;    // the runner's layout and group
  std::string group;
  std::string work_root;   // tenants' directories: <work_root>/<tenant>/work/.allot/preempt-<key>
};

struct Leftovers {
  GroupSweep cgroups;
  int mps_daemons = 0;
  int mig_instances = 0;
  int preempt_files = 0;
  std::vector<std::string> problems;
  // One line for the agent's log.
  std::string Describe() const;
};

// REQUIRES: nothing of this run started yet (every task cgroup of the group is a leftover).
// `gpus` may be null (no NVML).
Leftovers CleanLeftovers(const LeftoverPlaces& at, MpsControl& mps, GpuBackend* gpus);

// Destroys every MIG instance on the node's GPUs: how many. What failed goes to `problems` when
// given. The reset after a software fault, and a leftover sweep.
int DestroyAllMigInstances(GpuBackend& gpus, std::vector<std::string>* problems = nullptr);

}  // namespace allot
