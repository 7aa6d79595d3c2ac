// Admission: does a job fit under every ancestor's max, and is it guaranteed or burstable?
//
//   fits        at every ancestor a, for every resource r the job asks: usage + request <= max.
//   guaranteed  every GPU model the job asks for (or, for a job without GPUs, some resource it
//               asks for) has a guarantee set somewhere on its path, and at every ancestor that
//               sets a guarantee for r: guaranteed usage + request <= guarantee. Resources with
//               no guarantee anywhere on the path (often CPU and memory) do not constrain.
//   burstable   fits but is not guaranteed: it borrows idle capacity and may be reclaimed.
#pragma once

#include <algorithm>
#include <cstdint>
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
// The resources a demand is admitted on: CPU, memory and its GPU model (index 2, the model
// filled in by each caller).
inline constexpr ResourceId kDemandResources[3] = {kCpu, kMemory, 0};

struct PathRoom {
  ResourceId gpu_resource = 0;
  int64_t max_room[3];
  int64_t guarantee_room[3];
  bool guaranteed[3];
};
// (Inline: built where it is kept, a tenant a pass.)
inline PathRoom RoomOnPath(const UsageOverlay& usage, TenantId tenant, ResourceId gpu_resource) {
  const QuotaTree& tree = usage.tree();
  const ResourceId rs[3] = {kDemandResources[0], kDemandResources[1], gpu_resource};
  PathRoom room;
  room.gpu_resource = gpu_resource;
  for (int i = 0; i < 3; ++i) {
    room.max_room[i] = room.guarantee_room[i] = INT64_MAX;
    room.guaranteed[i] = false;
  }
  for (TenantId a = tenant; a.valid(); a = tree.tenant(a).parent) {
    const Tenant& t = tree.tenant(a);
    for (int i = 0; i < 3; ++i) {
      const ResourceId r = rs[i];
      if (t.max[r] != kUnlimited) room.max_room[i] = std::min(room.max_room[i], t.max[r] - usage.Usage(a, r));
      if (t.has_guarantee(r)) {
        room.guaranteed[i] = true;
        room.guarantee_room[i] = std::min(room.guarantee_room[i], t.guarantee[r] - usage.GuaranteedUsage(a, r));
      }
    }
  }
  return room;
}
// Admit(usage, tenant, demand) for the usage and tenant `room` was taken with, when the demand
// fits every max on the path; nullopt when it does not (Admit then names where), or when the
// demand asks GPUs of another model than the room's.
// (Inline: asked for every waiting group of every pass.)
inline std::optional<AdmissionResult> AdmitInRoom(const PathRoom& room, const Demand& demand) {
  const int nrs = demand.gpu > 0 ? 3 : 2;
  if (nrs == 3 && demand.gpu_resource != room.gpu_resource) return std::nullopt;
  const ResourceId rs[3] = {kDemandResources[0], kDemandResources[1], room.gpu_resource};
  // As Admit: a max anywhere on the path that the request would pass blocks it (Admit names it).
  for (int i = 0; i < nrs; ++i) {
    const int64_t req = demand.Get(rs[i]);
    if (req != 0 && req > room.max_room[i]) return std::nullopt;
  }
  bool covered_gpu = false, covered_any = false, within = true;
  for (int i = 0; i < nrs; ++i) {
    const int64_t req = demand.Get(rs[i]);
    if (req == 0 || !room.guaranteed[i]) continue;
    covered_any = true;
    if (i == 2) covered_gpu = true;
    if (req > room.guarantee_room[i]) within = false;
  }
  AdmissionResult out;
  const bool covered = demand.gpu > 0 ? covered_gpu : covered_any;
  out.admission = covered && within ? AdmissionClass::kGuaranteed : AdmissionClass::kBurstable;
  return out;
}

// "tenant research/nlp at max for gpu/H100-80GB: 32 of 32 in use, job asks 8"
std::string QuotaReason(const AdmissionResult& r, const QuotaTree& tree, const ResourceNames& names);

}  // namespace allot
