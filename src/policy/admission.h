// Admission: does a job fit under every ancestor's max, and is it guaranteed or burstable?
//
//   fits        at every ancestor a, for every resource r the job asks: usage + request <= max.
//   guaranteed  every GPU model the job asks for (or, for a job without GPUs, some resource it
//               asks for) has a guarantee set somewhere on its path, and at every ancestor that
//               sets a guarantee for r: guaranteed usage + request <= guarantee. Resources with
//               no guarantee anywhere on the path (often CPU and memory) do not constrain.
//   burstable   fits but is not guaranteed: it borrows idle capacity and may be reclaimed.
#pragma once

#include <optional>
#include <string>

#include "core/resources.h"
#include "state/job.h"
#include "tenancy/usage_overlay.h"

namespace allot {

struct AdmissionResult {
  bool fits = true;
  AdmissionClass admission = AdmissionClass::kNone;
  // When !fits: where the max was hit.
  TenantId blocking;
  ResourceId resource = 0;
  int64_t usage = 0;
  int64_t limit = 0;
  int64_t request = 0;
};

AdmissionResult Admit(const UsageOverlay& usage, TenantId tenant, const Demand& demand);

// What a tenant's path leaves while usage stays as it is, for CPU, memory and one GPU model
// (indexes 0, 1, 2): the least room under a max and under a guarantee set on the path
// (INT64_MAX where none is set), and whether a guarantee is set. One walk of the path answers
// Admit for every demand of that tenant that fits (the pass's triage: a few groups a tenant).
struct PathRoom {
  ResourceId gpu_resource = 0;
  int64_t max_room[3];
  int64_t guarantee_room[3];
  bool guaranteed[3];
};
PathRoom RoomOnPath(const UsageOverlay& usage, TenantId tenant, ResourceId gpu_resource);
// Admit(usage, tenant, demand) for the usage and tenant `room` was taken with, when the demand
// fits every max on the path; nullopt when it does not (Admit then names where), or when the
// demand asks GPUs of another model than the room's.
std::optional<AdmissionResult> AdmitInRoom(const PathRoom& room, const Demand& demand);

// "tenant research/nlp at max for gpu/H100-80GB: 32 of 32 in use, job asks 8"
std::string QuotaReason(const AdmissionResult& r, const QuotaTree& tree, const ResourceNames& names);

}  // namespace allot
