// Turning what a task asks of a shared GPU into what it holds and is charged.
#pragma once

#include "core/resources.h"
#include "core/status.h"
#include "fleet/fleet.h"
#include "state/job.h"

namespace allot {

// Resolves each shared task group of `spec` against the pools the fleet has for the job's GPU
// model: a bare fraction becomes an MPS share (percent and memory in proportion), else the
// smallest MIG instance that covers it, else a time-slice replica — MIG only for an untrusted
// tenant (in general: among the pool kinds `allowed`, bit 1 << Sharing). Fills an MPS share's memory when omitted (in proportion to its percentage) and sets
// each group's charge (TaskGroup::gpu). A group whose mechanism no pool offers is left for
// NeverFits to reject with its reason. Errors name the field of a malformed request.
Status ResolveShares(JobSpec& spec, const Fleet& fleet, const ResourceNames& names, uint8_t allowed);

// The smallest MIG profile of `g` (compute, then memory; no media extensions) with at least
// `units` (GPU units) of compute and the same share of `gpu_memory`; -1 if none. How a bare
// fraction becomes MIG, and how sizing by model picks a profile (spec/model_choice.h).
int CoveringMigProfile(const MigGeometry& g, int64_t units, int64_t gpu_memory);

// Why `spec` may not run on the pool kinds `allowed` (bit 1 << Sharing), or empty: "task group
// 0 asks an MPS share".
std::string PoolViolation(const JobSpec& spec, uint8_t allowed);

}  // namespace allot
