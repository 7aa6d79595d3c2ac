// Placement of tasks that hold a share of one GPU (MIG instance, MPS client, time-slice
// replica) on the nodes of the matching pool.
//
// Packing, so whole idle GPUs stay whole for larger shares and for re-profiling:
//   mig        a free instance of the profile on the busiest GPU; else one created on free
//              slices of a busy GPU, then of an idle one, at the start that leaves the most
//              (profile, start) choices open on that GPU
//   mps        first among GPUs holding no other tenant's MPS clients (a tenant's clients share
//              its server; two tenants' servers on a GPU are time-sliced against each other,
//              docs/real-gpu.md), then among all: by the pass's share scorer when it has one
//              (SchedulerConfig::share_policy, `allot` by default: fragmentation-aware, against
//              the MPS shapes submitted so far); else the GPU with the most active-thread percent
//              already held that still has room (percent within the oversubscription factor,
//              memory, 48 clients)
//   timeslice  the GPU with the most replicas already held
// Ties go to the lowest node id, then GPU index, then start slice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "placement/fleet_view.h"
#include "state/job.h"

namespace allot {

// Places one task of shared group `g` of a job of `tenant` and takes it in `view`; nullopt when
// nothing fits. With `eligible` (FleetView::Eligible of the job's `require`), only on nodes in it.
std::optional<TaskPlacement> PlaceShare(FleetView& view, ResourceId res, const TaskGroup& g, TenantId tenant,
                                        const Bitset* eligible = nullptr);

// What one task of `g` would hold, for messages: "a 1g.10gb MIG instance", "an MPS share
// (30%, 24Gi)", "a time-slice replica".
std::string DescribeShare(const Fleet& fleet, ResourceId res, const TaskGroup& g, const ResourceNames& names);

// Why a shared group of `spec` can never be placed on this fleet (no pool of its kind and
// model, a task larger than every such node), or nullopt.
std::optional<std::string> ShareNeverFits(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names);

// Why the first shared group that does not fit now does not, or empty if each fits alone.
// Tries placements in `view` and rolls them back.
std::string ExplainShareNoFit(FleetView& view, const JobSpec& spec, const ResourceNames& names);

}  // namespace allot
