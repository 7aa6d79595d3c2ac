#include "state/share_request.h"

#include "core/quantity.h"
#include "fleet/gpu_catalog.h"

namespace allot {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool HasPool(const Fleet& fleet, ResourceId res, Sharing s) { return (fleet.pool_kinds(res) >> static_cast<int>(s)) & 1; }

}  // namespace

int CoveringMigProfile(const MigGeometry& g, int64_t units, int64_t gpu_memory) {
  int best = -1;
  int64_t need_mem = CeilDiv(units * gpu_memory, kGpuUnit);
  for (size_t i = 0; i < g.profiles.size(); ++i) {
    const MigProfile& p = g.profiles[i];
    if (p.media_extensions) continue;
    if (int64_t{p.compute_slices} * kGpuUnit < units * g.compute_slices || p.memory_mib < need_mem) continue;
    if (best < 0 || p.compute_slices < g.profiles[best].compute_slices ||
        (p.compute_slices == g.profiles[best].compute_slices && p.memory_mib < g.profiles[best].memory_mib)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

Status ResolveShares(JobSpec& spec, const Fleet& fleet, const ResourceNames& names, uint8_t allowed) {
  auto may = [&](Sharing s) { return (allowed >> static_cast<int>(s)) & 1; };
  const std::string where = "job '" + spec.name + "' tasks";
  for (TaskGroup& g : spec.groups) {
    if (g.gpu > int64_t{kMaxGpusPerNode} * kGpuUnit) {
      return InvalidArgument(where + ".gpus: " + FormatGpus(g.gpu) + " is more than one node can hold; expected at most " +
                             std::to_string(kMaxGpusPerNode) + " per task");
    }
    if (g.share == ShareKind::kWhole && g.gpu % kGpuUnit != 0) {
      if (g.gpu > kGpuUnit) {
        return InvalidArgument(where + ".gpus: " + FormatGpus(g.gpu) +
                               " is neither whole GPUs nor a share of one; expected an integer or a fraction below 1");
      }
      g.fractional = true;
    }
    if (!g.shared()) continue;
    if (spec.topology != Topology::kNone) {
      return InvalidArgument("job '" + spec.name + "' topology: " + TopologyName(spec.topology) +
                             " with tasks that share a GPU; expected none (a share lives on one GPU)");
    }
    if (spec.gpu_resource < kFirstGpu || spec.gpu_resource >= names.size()) {
      return InvalidArgument(where + ".gpu_model: a GPU share needs a GPU model of the fleet");
    }
    std::string model = names.Name(spec.gpu_resource).substr(4);
    const GpuModelInfo* info = FindGpuModel(model);
    int64_t gpu_memory = info ? info->memory_mib : 0;
    const MigGeometry* geo = FindMigGeometry(model);
    ResourceId res = spec.gpu_resource;
    if (g.fractional) {
      // A bare fraction: the mechanism the pools of this model offer.
      int profile = geo ? CoveringMigProfile(*geo, g.gpu, gpu_memory) : -1;
      if (may(Sharing::kMps) && HasPool(fleet, res, Sharing::kMps)) {
        g.share = ShareKind::kMps;
        g.percent = static_cast<uint16_t>(CeilDiv(g.gpu * 100, kGpuUnit));
        g.gpu_memory = CeilDiv(g.gpu * gpu_memory, kGpuUnit);
      } else if (may(Sharing::kMig) && HasPool(fleet, res, Sharing::kMig) && profile >= 0) {
        g.share = ShareKind::kMig;
        g.mig_profile = static_cast<uint8_t>(profile);
      } else if (may(Sharing::kTimeslice) && HasPool(fleet, res, Sharing::kTimeslice)) {
        g.share = ShareKind::kTimeslice;
      } else {
        continue;  // no pool offers it: NeverFits says so
      }
    }
    switch (g.share) {
      case ShareKind::kWhole:
        break;
      case ShareKind::kMig:
        if (!geo) return InvalidArgument(where + ".mig: " + model + " has no MIG; expected a MIG-capable GPU model");
        if (g.mig_profile >= geo->profiles.size()) return InvalidArgument(where + ".mig: unknown profile index");
        g.gpu = int64_t{geo->profiles[g.mig_profile].compute_slices} * kGpuUnit / geo->compute_slices;
        break;
      case ShareKind::kMps:
        if (g.percent < 1 || g.percent > 100) {
          return InvalidArgument(where + ".mps.percent: " + std::to_string(g.percent) + " is out of range; expected 1 to 100");
        }
        if (g.gpu_memory == 0) g.gpu_memory = CeilDiv(int64_t{g.percent} * gpu_memory, 100);
        g.gpu = int64_t{g.percent} * kGpuUnit / 100;
        break;
      case ShareKind::kTimeslice: {
        int n = fleet.timeslice_replicas(res);
        g.gpu = n > 0 ? kGpuUnit / n : kGpuUnit;
        break;
      }
    }
  }
  return Status::Ok();
}

std::string PoolViolation(const JobSpec& spec, uint8_t allowed) {
  for (size_t i = 0; i < spec.groups.size(); ++i) {
    const TaskGroup& g = spec.groups[i];
    if (g.gpu == 0 && !g.shared()) continue;  // CPU-only
    Sharing pool = g.share == ShareKind::kMig ? Sharing::kMig
                   : g.share == ShareKind::kMps ? Sharing::kMps
                   : g.share == ShareKind::kTimeslice ? Sharing::kTimeslice
                                                      : Sharing::kExclusive;
    if (g.fractional && g.share == ShareKind::kWhole) continue;  // unresolved: NeverFits says why
    if ((allowed >> static_cast<int>(pool)) & 1) continue;
    const char* what = pool == Sharing::kMig ? "a MIG instance"
                       : pool == Sharing::kMps ? "an MPS share"
                       : pool == Sharing::kTimeslice ? "a time-slice replica"
                                                     : "whole GPUs";
    std::string may;
    for (int k = 0; k < 4; ++k) {
      if ((allowed >> k) & 1) may += std::string(may.empty() ? "" : ", ") + SharingName(static_cast<Sharing>(k));
    }
    return "task group " + std::to_string(i) + " asks " + what + " (" + SharingName(pool) + " pools); it may use " +
           (may.empty() ? std::string("none") : may);
  }
  return "";
}

}  // namespace allot
