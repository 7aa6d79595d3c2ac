#include "placement/share_place.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/quantity.h"
#include "core/rng.h"
#include "placement/score/scorer.h"

namespace allot {
namespace {

Sharing PoolFor(ShareKind k) {
  switch (k) {
    case ShareKind::kMig: return Sharing::kMig;
    case ShareKind::kMps: return Sharing::kMps;
    case ShareKind::kTimeslice: return Sharing::kTimeslice;
    case ShareKind::kWhole: break;
  }
  return Sharing::kExclusive;
}

TaskShare ShareOf(const TaskGroup& g, TenantId tenant) {
  TaskShare s;
  s.kind = g.share;
  if (g.share == ShareKind::kMig) s.mig.profile = g.mig_profile;
  if (g.share == ShareKind::kMps) {
    s.percent = g.percent;
    s.memory = static_cast<int32_t>(std::min<int64_t>(g.gpu_memory, INT32_MAX));  // larger never fits a GPU
    s.tenant = tenant;
  }
  return s;
}

int HeldCompute(const MigGeometry& geo, const GpuShareState& g) {
  int c = 0;
  for (const MigSlot& s : g.mig) c += s.held ? geo.profiles[s.instance.profile].compute_slices : 0;
  return c;
}

struct Candidate {
  NodeId node;
  int gpu = -1;
  TaskShare share;
  // Larger is better, compared in order.
  int64_t key1 = 0, key2 = 0;
  bool valid() const { return gpu >= 0; }
  bool Beats(const Candidate& o) const {
    if (!o.valid()) return true;
    if (key1 != o.key1) return key1 > o.key1;
    return key2 > o.key2;  // equal keys: the first found (lowest node, GPU, start) stays
  }
};

// An MPS node as the share scorers see it: each GPU's free active-thread share in milli-GPU
// (capped at a whole GPU), 0 where the share cannot be held (memory, 48 clients) and, unless
// `mix`, where another tenant's clients are; `*left_out` is set when a GPU that could hold the
// share was left out for that alone.
ShareNode AsShareNode(const FleetView& view, const Node& n, const TaskShare& want, bool mix, bool* left_out) {
  ShareNode s;
  s.gpus = n.gpu_count;
  s.cpu_left = view.Free(n.id).cpu;
  s.memory_left = view.Free(n.id).memory;
  const std::vector<GpuShareState>& shares = view.Shares(n.id);
  int64_t cap = 100 * n.pool.oversubscription_milli / 1000;  // percent
  for (int i = 0; i < n.gpu_count; ++i) {
    int64_t free = std::min<int64_t>(kWholeGpuMilli, (cap - shares[i].percent) * 10);
    bool holds = CanHold(n.pool, shares[i], want, view.now_ms()) && !view.KeptOff(n.id, i);
    if (holds && !mix && MpsMixes(shares[i], want.tenant)) {
      holds = false;
      *left_out = true;
    }
    s.free[i] = holds ? static_cast<int32_t>(std::max<int64_t>(free, 0)) : 0;
  }
  return s;
}

// MPS placement by a registered scorer: the highest score among nodes that fit, ties to the
// lowest node id; the scorer picks the GPU. GPUs with another tenant's clients only when no
// other fits.
std::optional<TaskPlacement> PlaceMpsScored(FleetView& view, ResourceId res, const TaskGroup& g, TenantId tenant,
                                            const Scorer& scorer, const Bitset* eligible) {
  TaskShare want = ShareOf(g, tenant);
  PodShape pod{g.cpu, g.memory, static_cast<int32_t>(g.percent) * 10, 1, 0};
  NodeId best;
  ShareNode best_node;
  for (bool mix : {false, true}) {
    int64_t best_score = INT64_MIN;
    bool left_out = false;  // a GPU that could hold the share has another tenant's clients
    for (NodeId id : view.fleet().shared_nodes(Sharing::kMps)) {
      const Node& n = view.fleet().node(id);
      if (!n.schedulable() || n.gpu_resource != res || n.gpu_count > kMaxShareGpus) continue;
      if (eligible && !eligible->Test(id.value())) continue;
      ShareNode s = AsShareNode(view, n, want, mix, &left_out);
      if (!Fits(s, pod)) continue;
      int64_t score = scorer.Score(s, pod);
      if (score > best_score) {
        best_score = score;
        best = id;
        best_node = s;
      }
    }
    if (best.valid() || !left_out) break;  // found, or mixing would offer nothing more
  }
  if (!best.valid()) return std::nullopt;
  Rng rng(best.value());  // only the random policy draws; seeded by the node for determinism
  uint64_t mask = scorer.ChooseGpus(best_node, pod, rng);
  if (mask == 0) return std::nullopt;
  TaskPlacement p{best, mask & (~mask + 1), g.cpu, g.memory, want};
  view.Take(p);
  return p;
}

}  // namespace

std::optional<TaskPlacement> PlaceShare(FleetView& view, ResourceId res, const TaskGroup& g, TenantId tenant,
                                        const Bitset* eligible) {
  const Fleet& fleet = view.fleet();
  TaskShare want = ShareOf(g, tenant);
  if (g.share == ShareKind::kMps) {
    if (const Scorer* scorer = view.ShareScorer(res)) return PlaceMpsScored(view, res, g, tenant, *scorer, eligible);
  }
  Candidate best;
  for (NodeId id : fleet.shared_nodes(PoolFor(g.share))) {
    const Node& n = fleet.node(id);
    if (!n.schedulable() || n.gpu_resource != res) continue;
    if (eligible && !eligible->Test(id.value())) continue;
    const NodeFree& f = view.Free(id);
    if (f.cpu < g.cpu || f.memory < g.memory) continue;
    const std::vector<GpuShareState>& shares = view.Shares(id);
    for (int i = 0; i < n.gpu_count; ++i) {
      if (view.KeptOff(id, i)) continue;
      const GpuShareState& gs = shares[i];
      Candidate c{id, i, want};
      switch (g.share) {
        case ShareKind::kMig: {
          if (!MigReady(gs, view.now_ms())) break;
          const MigGeometry& geo = *n.pool.mig;
          int held = HeldCompute(geo, gs);
          // 1. A free instance of the profile: no MIG operation at all. Busiest GPU first.
          for (const MigSlot& s : gs.mig) {
            if (s.held || s.instance.profile != g.mig_profile) continue;
            c.share.mig = s.instance;
            c.share.mig_created = false;
            c.key1 = 2'000'000 + held;
            c.key2 = -s.instance.start;
            if (c.Beats(best)) best = c;
          }
          // 2. Create one on free slices: busy GPUs before idle ones, then the start that
          //    keeps the most choices open.
          MigLayout layout = gs.Layout();
          for (int start : FreeMigStarts(geo, layout, g.mig_profile)) {
            layout.push_back({g.mig_profile, static_cast<uint8_t>(start)});
            c.share.mig = layout.back();
            c.share.mig_created = true;
            c.key1 = 1'000'000 + held * 1000;
            c.key2 = OpenMigChoices(geo, layout);
            layout.pop_back();
            if (c.Beats(best)) best = c;
          }
          break;
        }
        case ShareKind::kMps:
          if (!CanHold(n.pool, gs, want, view.now_ms())) break;
          c.key1 = gs.percent + (MpsMixes(gs, tenant) ? 0 : 1'000'000);  // its own tenant's or an idle GPU first
          c.key2 = gs.memory;
          if (c.Beats(best)) best = c;
          break;
        case ShareKind::kTimeslice:
          if (!CanHold(n.pool, gs, want, view.now_ms())) break;
          c.key1 = gs.clients;
          if (c.Beats(best)) best = c;
          break;
        case ShareKind::kWhole:
          break;
      }
    }
  }
  if (!best.valid()) return std::nullopt;
  TaskPlacement p{best.node, uint64_t{1} << best.gpu, g.cpu, g.memory, best.share};
  view.Take(p);
  return p;
}

std::string DescribeShare(const Fleet& fleet, ResourceId res, const TaskGroup& g, const ResourceNames& names) {
  std::string model = names.Name(res).substr(4);
  switch (g.share) {
    case ShareKind::kMig: {
      const MigGeometry* geo = FindMigGeometry(model);
      return std::string("a ") + (geo ? std::string(geo->profiles[g.mig_profile].name) : "?") + " MIG instance of " + model;
    }
    case ShareKind::kMps:
      return "an MPS share of " + model + " (" + std::to_string(g.percent) + "%, " + FormatMemoryMiB(g.gpu_memory) + ")";
    case ShareKind::kTimeslice:
      return "a time-slice replica of " + model + " (1/" + std::to_string(fleet.timeslice_replicas(res)) + ")";
    case ShareKind::kWhole:
      break;
  }
  return FormatGpus(g.gpu) + " of a " + model + " GPU";
}

std::optional<std::string> ShareNeverFits(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names) {
  for (const TaskGroup& g : spec.groups) {
    if (!g.shared()) continue;
    ResourceId res = spec.gpu_resource;
    std::string model = names.Name(res).substr(4);
    if (g.share == ShareKind::kWhole) {
      return "asks " + FormatGpus(g.gpu) + " of a " + model + " GPU; no MIG, MPS or time-sliced pool has " + model +
             " (an untrusted tenant's share needs a MIG pool and a MIG instance that covers it)";
    }
    Sharing pool = PoolFor(g.share);
    bool any_pool = false, any_room = false;
    for (NodeId id : fleet.shared_nodes(pool)) {
      const Node& n = fleet.node(id);
      if (n.gpu_resource != res || !Satisfies(fleet.labels(id), spec.require)) continue;
      any_pool = true;
      bool share_fits = true;
      if (g.share == ShareKind::kMps) {
        share_fits = g.gpu_memory <= n.pool.gpu_memory &&
                     int64_t{g.percent} * 1000 <= 100 * n.pool.oversubscription_milli;
      }
      any_room |= share_fits && n.cpu >= g.cpu && n.memory >= g.memory;
    }
    std::string what = DescribeShare(fleet, res, g, names);
    if (!any_pool) {
      return "asks " + what + "; no " + std::string(SharingName(pool)) + " pool has " + model +
             (spec.require.empty() ? "" : " on a node that satisfies require " + FormatRequirements(spec.require));
    }
    if (!any_room && g.share == ShareKind::kMps) {
      return "asks " + what + "; no MPS GPU of " + model + " has that much memory or thread percentage (memory is " +
             "never oversubscribed) with " + FormatMilli(g.cpu) + " CPUs and " + FormatMemoryMiB(g.memory) + " per task";
    }
    if (!any_room) {
      return "asks " + what + " with " + FormatMilli(g.cpu) + " CPUs and " + FormatMemoryMiB(g.memory) +
             " per task; no node of that pool is that large";
    }
  }
  return std::nullopt;
}

std::string ExplainShareNoFit(FleetView& v, const JobSpec& spec, const ResourceNames& names) {
  for (const TaskGroup& g : spec.groups) {
    if (!g.shared()) continue;
    size_t mark = v.Mark();
    int placed = 0;
    const Bitset* eligible = v.Eligible(spec.require);
    while (placed < g.count && PlaceShare(v, spec.gpu_resource, g, spec.tenant, eligible)) ++placed;
    v.Rollback(mark);
    if (placed < g.count) {
      std::string what = DescribeShare(v.fleet(), spec.gpu_resource, g, names);
      std::string why = "needs " + std::to_string(g.count) + " × " + what + "; " +
                        (placed == 0 ? std::string("no GPU of its pool has room") : "room for " + std::to_string(placed) + " now");
      // What is short on the first GPU of the pool that has the CPU and memory to go with it.
      std::string detail;
      for (NodeId id : v.fleet().shared_nodes(PoolFor(g.share))) {
        const Node& n = v.fleet().node(id);
        if (!n.schedulable() || n.gpu_resource != spec.gpu_resource) continue;
        if (eligible && !eligible->Test(id.value())) continue;
        if (v.Free(id).cpu < g.cpu || v.Free(id).memory < g.memory) {
          if (detail.empty()) detail = "node " + n.name + " lacks the CPU or memory";
          continue;
        }
        TaskShare want = ShareOf(g, spec.tenant);
        if (g.share == ShareKind::kMig) {
          std::string converging;  // an agent still making the planned instances
          for (int i = 0; i < n.gpu_count && converging.empty(); ++i) {
            const GpuShareState& gs = v.Shares(id)[i];
            if (gs.agent && !MigLayoutHeld(gs)) converging = "on " + n.name + " GPU " + std::to_string(i) + "'s " + kMigLayoutNotHeld;
          }
          if (!converging.empty()) {
            detail = converging;
            break;
          }
          detail = "no free " + DescribeShare(v.fleet(), spec.gpu_resource, g, names).substr(2) +
                   " and no free slices for one; MIG GPUs are re-laid out for waiting demand (after a delay, and " +
                   "not again within the hold time)";
          break;
        }
        std::string w;
        if (!CanHold(n.pool, v.Shares(id)[0], want, v.now_ms(), &w)) {
          detail = "on " + n.name + " GPU 0: " + w;
          break;
        }
      }
      if (!detail.empty()) why += " (" + detail + ")";
      return why;
    }
  }
  return "";
}

}  // namespace allot
