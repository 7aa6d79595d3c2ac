#include "spec/model_choice.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "state/share_request.h"

namespace allot {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

enum class Level : uint8_t { kMig, kMps, kWhole };

// One allocation a group could take.
struct Candidate {
  Level level = Level::kWhole;
  int64_t held_mib = 0;   // GPU memory the allocation holds
  std::string model;      // GPU model name
  int mig_profile = -1;   // kMig
  int percent = 0;        // kMps
  int gpus = 0;           // kWhole
  bool nvlink = false;    // kWhole, gpus > 1: the model has NVLink
  // The order: 1. level (MIG, MPS, whole GPUs), 2. memory held, 3. the model's name (a stable id).
  auto Key() const { return std::tie(level, held_mib, model); }
};

bool Has(uint32_t kinds, Sharing s) { return (kinds >> static_cast<int>(s)) & 1; }

// The most GPUs one exclusive node of `res` has.
int MaxExclusiveGpus(const Fleet& fleet, ResourceId res) {
  int most = 0;
  for (const Fleet::NodeShape& s : fleet.shapes()) {
    if (s.gpu_resource == res && s.sharing == Sharing::kExclusive) most = std::max(most, s.gpus);
  }
  return most;
}

// The allocations of one GPU model for `estimate` MiB, appended to `out`; why none, to `misses`.
void Candidates(const ClusterState& state, ResourceId res, uint32_t kinds, bool whole_only, int64_t estimate,
                std::vector<Candidate>& out, std::vector<std::string>& misses) {
  const std::string model = state.resource_names().Name(res).substr(4);
  const GpuModelInfo* info = FindGpuModel(model);
  if (!info) return;
  const int64_t mem = info->memory_mib;
  const size_t before = out.size(), misses_before = misses.size();
  if (!whole_only && estimate <= mem) {
    const MigGeometry* geo = FindMigGeometry(model);
    if (geo && Has(kinds, Sharing::kMig)) {
      int p = CoveringMigProfile(*geo, CeilDiv(estimate * kGpuUnit, mem), mem);
      if (p >= 0) out.push_back({.level = Level::kMig, .held_mib = geo->profiles[p].memory_mib, .model = model, .mig_profile = p});
    }
    if (Has(kinds, Sharing::kMps)) {
      out.push_back({.level = Level::kMps, .held_mib = estimate, .model = model,
                     .percent = static_cast<int>(std::max<int64_t>(1, CeilDiv(estimate * 100, mem)))});
    }
  }
  if (Has(kinds, Sharing::kExclusive)) {
    const int64_t gpus = CeilDiv(estimate, mem);
    const int most = MaxExclusiveGpus(state.fleet(), res);
    if (gpus <= most) {
      out.push_back({.level = Level::kWhole, .held_mib = gpus * mem, .model = model, .gpus = static_cast<int>(gpus),
                     .nvlink = gpus > 1 && info->nvlink});
    } else {
      misses.push_back(model + " would need " + std::to_string(gpus) + " GPUs of " + FormatMemoryMiB(mem) +
                       " on one node; its nodes have at most " + std::to_string(most));
    }
  }
  if (out.size() == before && misses.size() == misses_before) {
    misses.push_back(model + " has no pool open to the tenant that holds it" + (whole_only ? " (a topology asks whole GPUs)" : ""));
  }
}

std::string GroupField(const std::string& where, const ScenarioJob& j, size_t group) {
  return where + "tasks" + (j.spec.groups.size() > 1 ? "[" + std::to_string(group) + "]" : "") + ".model";
}

std::string Breakdown(const MemoryEstimate& e) {
  std::string s = "weights " + FormatMemoryMiB(e.weights_mib);
  if (e.kv_cache_mib > 0) s += " + KV cache " + FormatMemoryMiB(e.kv_cache_mib);
  if (e.training_mib > 0) s += " + training state " + FormatMemoryMiB(e.training_mib);
  return s + " + overhead " + FormatMemoryMiB(e.overhead_mib);
}

// Writes `c` into the group and says what was chosen and why.
void Take(const Candidate& c, int64_t estimate, bool others_shared, ScenarioJob& j, size_t group, GroupSizing& sizing) {
  TaskGroup& g = j.spec.groups[group];
  j.gpu_model = c.model;
  const std::string est = "estimated " + FormatMemoryMiB(estimate);
  switch (c.level) {
    case Level::kMig: {
      const MigGeometry* geo = FindMigGeometry(c.model);
      const MigProfile& p = geo->profiles[c.mig_profile];
      g.share = ShareKind::kMig;
      g.mig_profile = static_cast<uint8_t>(c.mig_profile);
      j.mig[group] = std::string(p.name);
      sizing.allocation = "MIG " + std::string(p.name) + " on " + c.model;
      sizing.why = est + "; " + std::string(p.name) + " (" + FormatMemoryMiB(p.memory_mib) + ", " + std::to_string(p.compute_slices) +
                   " of " + std::to_string(geo->compute_slices) + " compute slices) is the smallest MIG profile covering it in memory "
                   "and compute share";
      break;
    }
    case Level::kMps:
      g.share = ShareKind::kMps;
      g.percent = static_cast<uint16_t>(c.percent);
      g.gpu_memory = estimate;
      sizing.allocation = "MPS " + std::to_string(c.percent) + "% with " + FormatMemoryMiB(estimate) + " on " + c.model;
      sizing.why = est + "; no MIG pool open to it has a profile that holds that, so an MPS share of " + c.model + " limited to that memory, " +
                   "its threads in proportion";
      break;
    case Level::kWhole:
      g.gpu = int64_t{c.gpus} * kGpuUnit;
      sizing.allocation = std::to_string(c.gpus) + " × " + c.model + (c.gpus > 1 ? " GPUs" : " GPU");
      if (c.gpus == 1) {
        sizing.why = est + "; no share open to it holds that, so one whole GPU (" + FormatMemoryMiB(c.held_mib) + ")";
      } else {
        const bool nvlink = c.nvlink && j.spec.topology == Topology::kNone && !others_shared;
        if (nvlink) j.spec.topology = Topology::kNvlink;
        if (nvlink || j.spec.topology == Topology::kNvlink) sizing.allocation += " (nvlink)";
        sizing.why = est + ", more than one " + c.model + "'s " + FormatMemoryMiB(c.held_mib / c.gpus) + ": " + std::to_string(c.gpus) +
                     " GPUs" + (nvlink ? " in one NVLink domain" : c.nvlink ? "" : " (the model has no NVLink)");
      }
      break;
  }
}

}  // namespace

Status ChooseSizedAllocations(ScenarioJob& j, const ClusterState& state, const std::string& where) {
  if (j.spec.sizing.empty()) return Status::Ok();
  const uint8_t allowed = state.AllowedPools(j.spec.tenant);
  // The fleet's GPU models, by name.
  std::vector<ResourceId> models;
  for (const Fleet::NodeShape& s : state.fleet().shapes()) {
    if (s.gpu_resource < kFirstGpu) continue;
    if (std::find(models.begin(), models.end(), s.gpu_resource) == models.end()) models.push_back(s.gpu_resource);
  }
  std::sort(models.begin(), models.end(), [&](ResourceId a, ResourceId b) {
    return state.resource_names().Name(a) < state.resource_names().Name(b);
  });
  for (GroupSizing& sizing : j.spec.sizing) {
    const size_t gi = static_cast<size_t>(sizing.group);
    const int64_t estimate = sizing.estimate.total_mib();
    if (sizing.model.override) {
      sizing.allocation = "as written";
      sizing.why = "override: the group's own allocation stands; estimated " + FormatMemoryMiB(estimate) + " (" +
                   Breakdown(sizing.estimate) + ")";
      continue;
    }
    bool others_shared = false;
    for (size_t k = 0; k < j.spec.groups.size(); ++k) others_shared |= k != gi && j.spec.groups[k].shared();
    std::vector<Candidate> found;
    std::vector<std::string> misses;
    for (ResourceId res : models) {
      const std::string name = state.resource_names().Name(res).substr(4);
      if (!j.gpu_model.empty() && name != j.gpu_model) continue;
      Candidates(state, res, state.fleet().pool_kinds(res) & allowed, j.spec.topology != Topology::kNone, estimate, found, misses);
    }
    if (found.empty()) {
      std::string why;
      for (const std::string& m : misses) why += (why.empty() ? "" : "; ") + m;
      if (why.empty()) why = j.gpu_model.empty() ? "the fleet has no GPUs" : "no node has GPU model '" + j.gpu_model + "'";
      return InvalidArgument(GroupField(where, j, gi) + ": an estimated " + FormatMemoryMiB(estimate) + " per task (" +
                             Breakdown(sizing.estimate) + ") fits no allocation: " + why +
                             "; expected a model, precision, context or batch that fits, or override: true with gpus");
    }
    const Candidate& best = *std::min_element(found.begin(), found.end(),
                                              [](const Candidate& a, const Candidate& b) { return a.Key() < b.Key(); });
    Take(best, estimate, others_shared, j, gi, sizing);
    sizing.why += " (" + Breakdown(sizing.estimate) + ")";
  }
  return Status::Ok();
}

}  // namespace allot
