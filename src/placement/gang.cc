#include "placement/gang.h"

#include <algorithm>
#include <bit>

#include "core/quantity.h"
#include "placement/requirements.h"
#include "placement/share_place.h"

namespace allot {
namespace {

struct Task {
  int index;  // position in task order
  int gpus;
  int64_t cpu;
  int64_t memory;
};

// Largest first (first-fit decreasing); ties keep task order. A group's tasks are alike, so a
// stable sort of the groups orders the tasks.
std::vector<Task> ExpandTasks(const JobSpec& spec) {
  struct Group {
    int first;  // index of its first task in task order
    const TaskGroup* g;
  };
  std::vector<Group> groups;
  groups.reserve(spec.groups.size());
  int index = 0;
  for (const TaskGroup& g : spec.groups) {
    if (!g.shared()) groups.push_back({index, &g});  // shares are placed by PlaceShare
    index += g.count;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    if (a.g->gpus() != b.g->gpus()) return a.g->gpus() > b.g->gpus();
    if (a.g->cpu != b.g->cpu) return a.g->cpu > b.g->cpu;
    return a.g->memory > b.g->memory;
  });
  std::vector<Task> tasks;
  tasks.reserve(index);
  for (const Group& gr : groups) {
    for (int i = 0; i < gr.g->count; ++i) tasks.push_back({gr.first + i, gr.g->gpus(), gr.g->cpu, gr.g->memory});
  }
  return tasks;
}

// The `n` lowest-numbered GPUs of `mask`.
uint64_t LowestGpus(uint64_t mask, int n) {
  uint64_t out = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t bit = mask & (~mask + 1);
    out |= bit;
    mask &= ~bit;
  }
  return out;
}

// The GPUs a task takes on a node: with declared GPU groups, the group with the fewest free
// GPUs that holds them all (best fit), else the groups with the most free first (fewest
// groups); without, the lowest-numbered free GPUs.
uint64_t ChooseGpus(const Node& node, uint64_t free, int n) {
  if (node.gpu_groups.empty() || n == 0) return LowestGpus(free, n);
  int best = -1, best_free = INT32_MAX;
  for (size_t i = 0; i < node.gpu_groups.size(); ++i) {
    int f = std::popcount(free & node.gpu_groups[i]);
    if (f >= n && f < best_free) {
      best = static_cast<int>(i);
      best_free = f;
    }
  }
  if (best >= 0) return LowestGpus(free & node.gpu_groups[best], n);
  std::vector<uint64_t> order = node.gpu_groups;
  uint64_t grouped = 0;
  for (uint64_t m : order) grouped |= m;
  order.push_back(node.all_gpus_mask() & ~grouped);  // ungrouped GPUs last
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return std::popcount(free & a) > std::popcount(free & b); });
  uint64_t out = 0;
  for (uint64_t m : order) {
    int take = std::min(n - std::popcount(out), std::popcount(free & m));
    out |= LowestGpus(free & m, take);
  }
  return out;
}

void TakeTask(FleetView& view, NodeId node, const Task& t, std::vector<TaskPlacement>& out) {
  uint64_t gpus = ChooseGpus(view.fleet().node(node), view.Free(node).gpu_mask, t.gpus);
  view.Take(node, gpus, t.cpu, t.memory);
  out[t.index] = {node, gpus, t.cpu, t.memory};
}

// Whole-GPU and CPU-only tasks go to exclusive nodes only; shared pools hand out shares. With
// `eligible` (the job's `require`), only nodes in it.
bool NodeAccepts(const Node& n, ResourceId res, bool wants_gpu, const Bitset* eligible) {
  return n.schedulable() && !n.shared() && (!wants_gpu || n.gpu_resource == res) &&
         (!eligible || eligible->Test(n.id.value()));
}

// Best fit within an explicit list of nodes: the first node in list order with the fewest free
// GPUs that still holds the task. A node with exactly the task's GPUs free cannot be beaten,
// so the first such is the answer. `from`: no node before it is an exact fit for this task
// (the caller's knowledge, from an alike task before); set to where an exact fit was found,
// else 0.
NodeId BestFitIn(const FleetView& view, const std::vector<NodeId>& nodes, ResourceId res, const Task& t,
                 const Bitset* eligible, size_t& from) {
  auto fits = [&](NodeId id) {
    return NodeAccepts(view.fleet().node(id), res, t.gpus > 0, eligible) && view.Free(id).Fits(t.gpus, t.cpu, t.memory);
  };
  for (size_t i = from; i < nodes.size(); ++i) {
    if (view.Free(nodes[i]).gpus() == t.gpus && fits(nodes[i])) {
      from = i;
      return nodes[i];
    }
  }
  from = 0;
  NodeId best;
  int best_free = INT32_MAX;
  for (NodeId id : nodes) {
    if (!fits(id)) continue;
    if (view.Free(id).gpus() < best_free) {
      best = id;
      best_free = view.Free(id).gpus();
    }
  }
  return best;
}

// Places each task on its best-fit node, anywhere in the fleet (nodes == nullptr) or within
// `nodes`. Rolls back and returns false on the first task that does not fit.
bool Greedy(FleetView& view, const std::vector<NodeId>* nodes, ResourceId res, const std::vector<Task>& tasks,
            std::vector<TaskPlacement>& out, const Bitset* eligible) {
  size_t mark = view.Mark();
  // A task alike the one before finds no exact fit before the node that one's was found on
  // (nothing before it changed), so its search starts there: a gang of alike tasks walks its
  // nodes about once, not once per task.
  size_t from = 0;
  const Task* before = nullptr;
  for (const Task& t : tasks) {
    if (!before || before->gpus != t.gpus || before->cpu != t.cpu || before->memory != t.memory) from = 0;
    before = &t;
    NodeId n = nodes ? BestFitIn(view, *nodes, res, t, eligible, from) : view.BestFit(res, t.gpus, t.cpu, t.memory, eligible);
    if (!n.valid()) {
      view.Rollback(mark);
      return false;
    }
    TakeTask(view, n, t, out);
  }
  return true;
}

bool OneNode(FleetView& view, ResourceId res, const std::vector<Task>& tasks, std::vector<TaskPlacement>& out,
             const Bitset* eligible) {
  int gpus = 0;
  int64_t cpu = 0, memory = 0;
  for (const Task& t : tasks) {
    gpus += t.gpus;
    cpu += t.cpu;
    memory += t.memory;
  }
  NodeId n = view.BestFit(res, gpus, cpu, memory, eligible);
  if (!n.valid()) return false;
  for (const Task& t : tasks) TakeTask(view, n, t, out);
  return true;
}

// For each task size s (largest first): how many tasks need at least s GPUs on one node.
std::vector<std::pair<int, int>> NeedBySize(const std::vector<Task>& tasks) {
  std::vector<std::pair<int, int>> need;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].gpus == 0) break;
    if (need.empty() || need.back().first != tasks[i].gpus) need.push_back({tasks[i].gpus, 0});
    need.back().second = static_cast<int>(i + 1);
  }
  return need;
}

// Adds to `room` the room of domain `d` for each task size of `need` (Σ ⌊free / s⌋ over its
// nodes that take the model): read from the domain's count of nodes by free GPUs, or walked
// under a node filter and for NVLink domains (not counted).
void AddDomainRoom(const FleetView& view, DomainKind kind, uint32_t d, ResourceId res, const Bitset* eligible,
                   const std::vector<std::pair<int, int>>& need, std::vector<int>& room) {
  if (!eligible && kind != DomainKind::kNvlink) {
    for (size_t j = 0; j < need.size(); ++j) room[j] += static_cast<int>(view.DomainRoom(kind, d, res, need[j].first));
    return;
  }
  const Fleet& fleet = view.fleet();
  for (NodeId id : fleet.domains(kind)[d].nodes) {
    if (!NodeAccepts(fleet.node(id), res, true, eligible)) continue;
    int f = view.Free(id).gpus();
    for (size_t j = 0; j < need.size(); ++j) room[j] += f / need[j].first;
  }
}

// Whether `room` holds, for each task size, as many tasks as need it.
bool RoomFor(const std::vector<int>& room, const std::vector<std::pair<int, int>>& need) {
  for (size_t j = 0; j < need.size(); ++j) {
    if (room[j] < need[j].second) return false;
  }
  return true;
}

// The domains' free counts cover every node; with `eligible` they are an upper bound, and the
// room check and the greedy walk read only eligible nodes.
bool InDomains(FleetView& view, DomainKind kind, ResourceId res, const std::vector<Task>& tasks,
               std::vector<TaskPlacement>& out, const Bitset* eligible) {
  const Fleet& fleet = view.fleet();
  const auto& domains = fleet.domains(kind);
  int64_t gpus = 0;
  for (const Task& t : tasks) gpus += t.gpus;
  // Domains whose schedulable nodes have enough free GPUs of the model, fullest first.
  std::vector<uint32_t> order;
  std::vector<int64_t> free(domains.size(), 0);
  for (uint32_t d = 0; d < domains.size(); ++d) {
    free[d] = gpus > 0 ? view.DomainFreeGpus(kind, d, res) : 0;
    if (free[d] >= gpus) order.push_back(d);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return free[a] != free[b] ? free[a] < free[b] : a < b;
  });
  // Necessary before the greedy walk: for each task size s, the domain's nodes have room for
  // as many s-GPU tasks (Σ floor(free / s)) as there are tasks of size ≥ s. One scan of the
  // domain instead of one per task, and most fragmented domains stop here.
  std::vector<std::pair<int, int>> need = NeedBySize(tasks);
  std::vector<int> room(need.size());
  auto has_room = [&](uint32_t d) {
    std::fill(room.begin(), room.end(), 0);
    AddDomainRoom(view, kind, d, res, eligible, need, room);
    return RoomFor(room, need);
  };
  for (uint32_t d : order) {
    if (!has_room(d)) continue;
    if (Greedy(view, &domains[d].nodes, res, tasks, out, eligible)) return true;
  }
  return false;
}

// A zone gang that fits no single rack: the fewest racks of one zone. Zones in best-fit order;
// within a zone, racks by most free GPUs (then id), adding racks until the tasks fit.
bool InZoneFewestRacks(FleetView& view, ResourceId res, const std::vector<Task>& tasks,
                       std::vector<TaskPlacement>& out, const Bitset* eligible) {
  const Fleet& fleet = view.fleet();
  int64_t gpus = 0;
  for (const Task& t : tasks) gpus += t.gpus;
  const auto& zones = fleet.domains(DomainKind::kZone);
  const auto& racks = fleet.domains(DomainKind::kRack);
  std::vector<uint32_t> order;
  for (uint32_t z = 0; z < zones.size(); ++z) {
    if (view.DomainFreeGpus(DomainKind::kZone, z, res) >= gpus) order.push_back(z);
  }
  auto zone_free = [&](uint32_t z) { return view.DomainFreeGpus(DomainKind::kZone, z, res); };
  std::vector<std::pair<int, int>> need = NeedBySize(tasks);
  std::vector<int> room(need.size());
  auto add_room = [&](uint32_t r) { AddDomainRoom(view, DomainKind::kRack, r, res, eligible, need, room); };
  auto enough_room = [&] { return RoomFor(room, need); };
  // A zone whose whole room falls short: adding its racks one by one would never try it.
  auto zone_short = [&](uint32_t z) {
    if (eligible) return false;  // its room would be walked: the racks' walk does as well
    std::vector<int> zone_room(need.size(), 0);
    AddDomainRoom(view, DomainKind::kZone, z, res, nullptr, need, zone_room);
    return !RoomFor(zone_room, need);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return zone_free(a) != zone_free(b) ? zone_free(a) < zone_free(b) : a < b;
  });
  for (uint32_t z : order) {
    if (zone_short(z)) continue;
    std::vector<uint32_t> rs = fleet.racks_of_zone(z);
    auto rack_free = [&](uint32_t r) { return view.DomainFreeGpus(DomainKind::kRack, r, res); };
    std::sort(rs.begin(), rs.end(), [&](uint32_t a, uint32_t b) {
      return rack_free(a) != rack_free(b) ? rack_free(a) > rack_free(b) : a < b;
    });
    // Add racks until the chosen ones have room for every task size (as in InDomains), try the
    // greedy walk there, and once more on the whole zone if that fails and the zone is larger.
    std::vector<NodeId> nodes;
    std::fill(room.begin(), room.end(), 0);
    size_t tried_with = 0;  // nodes in the first walk; 0 = none yet
    for (uint32_t r : rs) {
      if (rack_free(r) == 0) break;
      nodes.insert(nodes.end(), racks[r].nodes.begin(), racks[r].nodes.end());
      add_room(r);
      if (tried_with > 0 || !enough_room()) continue;
      tried_with = nodes.size();
      if (Greedy(view, &nodes, res, tasks, out, eligible)) return true;
    }
    if (tried_with > 0 && nodes.size() > tried_with && Greedy(view, &nodes, res, tasks, out, eligible)) return true;
  }
  return false;
}

const char* DomainWord(Topology t) {
  switch (t) {
    case Topology::kNvlink: return "one NVLink domain";
    case Topology::kRack: return "one rack";
    case Topology::kZone: return "one zone";
    case Topology::kNone: break;
  }
  return "the fleet";
}

}  // namespace

std::optional<std::vector<TaskPlacement>> PlaceGang(FleetView& view, const JobSpec& spec) {
  std::vector<Task> tasks = ExpandTasks(spec);
  std::vector<TaskPlacement> out(spec.TaskCount());
  ResourceId res = spec.gpu_resource;
  const Bitset* el = view.Eligible(spec.require);  // nullptr without `require`: no filter
  bool ok = false;
  size_t mark = view.Mark();
  if (tasks.size() <= 1) {
    ok = Greedy(view, nullptr, res, tasks, out, el);
  } else if (spec.topology == Topology::kNone) {
    // No constraint, but locality is still worth having: one node, one NVLink domain, one
    // rack, the fewest racks of a zone — then anywhere.
    ok = OneNode(view, res, tasks, out, el) ||
         (view.fleet().has_multi_node_nvlink() && InDomains(view, DomainKind::kNvlink, res, tasks, out, el)) ||
         InDomains(view, DomainKind::kRack, res, tasks, out, el) || InZoneFewestRacks(view, res, tasks, out, el) ||
         Greedy(view, nullptr, res, tasks, out, el);
  } else {
    // The tightest locality the constraint allows: one node; then one domain of its kind — for
    // a zone gang one rack, then the fewest racks of one zone.
    ok = OneNode(view, res, tasks, out, el);
    DomainKind kind = DomainKindOf(spec.topology);
    if (!ok && kind == DomainKind::kZone) {
      ok = InDomains(view, DomainKind::kRack, res, tasks, out, el) || InZoneFewestRacks(view, res, tasks, out, el);
    } else if (!ok && (kind != DomainKind::kNvlink || view.fleet().has_multi_node_nvlink())) {
      ok = InDomains(view, kind, res, tasks, out, el);
    }
  }
  if (ok && spec.HasShares()) {
    // Shares after the whole GPUs; a gang still lands all or nothing.
    int index = 0;
    for (const TaskGroup& g : spec.groups) {
      for (int i = 0; ok && g.shared() && i < g.count; ++i) {
        auto p = PlaceShare(view, res, g, spec.tenant, el);
        if (p) out[index + i] = *p;
        ok = p.has_value();
      }
      index += g.count;
    }
    if (!ok) view.Rollback(mark);
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<TaskPlacement>> PlaceGangOn(FleetView& view, const JobSpec& spec,
                                                      const std::vector<GpuCap>& caps) {
  std::vector<Task> tasks = ExpandTasks(spec);
  if (spec.HasShares() || tasks.size() != static_cast<size_t>(spec.TaskCount())) return std::nullopt;
  std::vector<TaskPlacement> out(spec.TaskCount());
  std::vector<int> left(caps.size());
  for (size_t i = 0; i < caps.size(); ++i) left[i] = caps[i].gpus;
  size_t mark = view.Mark();
  const Fleet& fleet = view.fleet();
  const Bitset* el = view.Eligible(spec.require);
  for (const Task& t : tasks) {
    // Best fit: the node with the least of its cap left that still holds the task.
    int best = -1;
    for (size_t i = 0; i < caps.size(); ++i) {
      const Node& n = fleet.node(caps[i].node);
      if (left[i] < t.gpus || !NodeAccepts(n, spec.gpu_resource, t.gpus > 0, el)) continue;
      if (!view.Free(n.id).Fits(t.gpus, t.cpu, t.memory)) continue;
      if (best < 0 || left[i] < left[best]) best = static_cast<int>(i);
    }
    if (best < 0) {
      view.Rollback(mark);
      return std::nullopt;
    }
    left[best] -= t.gpus;
    TakeTask(view, caps[best].node, t, out);
  }
  if (spec.topology != Topology::kNone) {
    DomainKind kind = DomainKindOf(spec.topology);
    uint32_t d = fleet.DomainOf(fleet.node(out.front().node), kind);
    for (const TaskPlacement& p : out) {
      if (fleet.DomainOf(fleet.node(p.node), kind) != d) {
        view.Rollback(mark);
        return std::nullopt;
      }
    }
  }
  return out;
}

std::string ExplainNoFit(FleetView& view, const JobSpec& spec, const ResourceNames& names) {
  const Fleet& fleet = view.fleet();
  const Bitset* el = view.Eligible(spec.require);
  std::string among;  // the nodes the numbers below count
  if (el) {
    RequireMatch m = MatchRequire(fleet, spec);
    if (m.nodes == 0) return DescribeUnmetRequire(fleet, spec, names);
    among = " among the " + std::to_string(m.nodes) + " node" + (m.nodes == 1 ? "" : "s") + " that satisfy require " +
            FormatRequirements(spec.require);
    if (m.schedulable == 0) return "none of the nodes that satisfy require " + FormatRequirements(spec.require) + " is schedulable now";
  }
  if (spec.HasShares()) {
    std::string why = ExplainShareNoFit(view, spec, names);
    if (!why.empty()) return why;
  }
  std::vector<Task> tasks = ExpandTasks(spec);
  if (tasks.empty()) return "the shared tasks fit one by one but not all together";
  int64_t gpus = 0;
  for (const Task& t : tasks) gpus += t.gpus;
  if (gpus == 0) {
    return "needs " + FormatMilli(spec.TotalDemand().cpu) + " CPUs and " +
           FormatMemoryMiB(spec.TotalDemand().memory) + " across " + std::to_string(tasks.size()) +
           " task(s)" + among + "; no schedulable node has room";
  }
  std::string model = names.Name(spec.gpu_resource);
  // Largest free block in the constraint's domain kind, and on any single node.
  ResourceId res = spec.gpu_resource;
  int64_t node_best = 0, total_free = 0, domain_best = 0;
  if (!el) {
    node_best = view.MaxFreeGpus(res);
    total_free = view.TotalFreeGpus(res);
    domain_best = total_free;
    if (spec.topology != Topology::kNone) {
      DomainKind kind = DomainKindOf(spec.topology);
      domain_best = 0;
      for (uint32_t d = 0; d < fleet.domains(kind).size(); ++d) {
        domain_best = std::max(domain_best, view.DomainFreeGpus(kind, d, res));
      }
    }
  } else {
    // The same figures over the nodes that satisfy the job's `require` only.
    std::vector<int64_t> per_domain;
    for (const Node& n : fleet.nodes()) {
      if (!NodeAccepts(n, res, true, el)) continue;
      int64_t f = view.Free(n.id).gpus();
      node_best = std::max(node_best, f);
      total_free += f;
      if (spec.topology == Topology::kNone) continue;
      uint32_t d = fleet.DomainOf(n, DomainKindOf(spec.topology));
      if (per_domain.size() <= d) per_domain.resize(d + 1, 0);
      domain_best = std::max(domain_best, per_domain[d] += f);
    }
    if (spec.topology == Topology::kNone) domain_best = total_free;
  }
  std::string need = "needs " + std::to_string(gpus) + " " + model + " GPUs" + among;
  if (spec.topology == Topology::kNone) {
    if (total_free < gpus) return need + "; " + std::to_string(total_free) + (el ? " free there" : " free in the fleet");
    if (node_best < tasks.front().gpus) {
      return need + " (" + std::to_string(tasks.front().gpus) + " on one node); largest free block on a node is " +
             std::to_string(node_best);
    }
    return need + "; GPUs are free but no node has the CPU and memory to go with them";
  }
  if (domain_best < gpus) {
    return need + " in " + DomainWord(spec.topology) + "; largest free block is " + std::to_string(domain_best);
  }
  return need + " in " + DomainWord(spec.topology) + "; the free GPUs there are split so the tasks do not fit, "
         "or lack the CPU and memory to go with them";
}

bool MayFitAfterFreeing(const FleetView& view, const JobSpec& spec, const std::vector<TaskPlacement>& freed) {
  // A job with `require` gains only from what was freed on nodes that satisfy it.
  const Bitset* el = view.Eligible(spec.require);
  if (el && std::none_of(freed.begin(), freed.end(), [&](const TaskPlacement& p) { return el->Test(p.node.value()); })) {
    return false;
  }
  if (spec.HasShares()) return true;  // no cheap test for shares: try the placement
  int64_t gpus = 0;
  int ntasks = 0;
  for (const TaskGroup& g : spec.groups) {
    gpus += int64_t{g.count} * g.gpus();
    ntasks += g.count;
  }
  if (gpus == 0) return true;
  const Fleet& fleet = view.fleet();
  ResourceId res = spec.gpu_resource;
  if (ntasks == 1) {
    // One task goes to one node: only a node that got GPUs back can newly hold it.
    const TaskGroup& g = spec.groups.front();
    for (const TaskPlacement& p : freed) {
      if (NodeAccepts(fleet.node(p.node), res, true, el) && view.Free(p.node).Fits(g.gpus(), g.cpu, g.memory)) return true;
    }
    return false;
  }
  if (spec.topology == Topology::kNone) return view.TotalFreeGpus(res) >= gpus;
  // A constrained gang lands in one domain: only a domain that got GPUs back can newly hold it.
  DomainKind kind = DomainKindOf(spec.topology);
  for (const TaskPlacement& p : freed) {
    const Node& n = fleet.node(p.node);
    if (el && !el->Test(p.node.value())) continue;
    if (n.gpu_resource == res && view.DomainFreeGpus(kind, fleet.DomainOf(n, kind), res) >= gpus) return true;
  }
  return false;
}

bool MayFitWithFreedLooks(const JobSpec& spec) {
  return !spec.HasShares() && (spec.topology == Topology::kRack || spec.topology == Topology::kZone);
}

bool MayFitWithFreed(const FleetView& view, const JobSpec& spec,
                     const std::vector<const std::vector<TaskPlacement>*>& freed) {
  if (!MayFitWithFreedLooks(spec)) return true;
  if (view.Eligible(spec.require) != nullptr) return true;
  std::vector<Task> tasks = ExpandTasks(spec);
  std::vector<std::pair<int, int>> need = NeedBySize(tasks);
  if (need.empty()) return true;
  int64_t gpus = 0;
  for (const Task& t : tasks) gpus += t.gpus;
  const ResourceId res = spec.gpu_resource;
  const DomainKind kind = DomainKindOf(spec.topology);
  const Fleet& fleet = view.fleet();
  // What giving the freed tasks back would change in the counts the room is read from: the
  // GPUs freed on each schedulable, unshared node of the model (the nodes the domains count),
  // by domain. Read beside the view rather than given back on it and rolled back.
  struct Freed {
    uint32_t domain;
    NodeId node;
    int gpus;
  };
  std::vector<Freed> freed_tasks;
  const size_t domains = fleet.domains(kind).size();
  std::vector<int64_t> more_in(domains, 0);  // GPUs freed per domain
  std::vector<uint32_t> first(domains + 1, 0);  // counts, then where each domain's tasks start
  for (const std::vector<TaskPlacement>* tasks_of : freed) {
    for (const TaskPlacement& p : *tasks_of) {
      const Node& n = fleet.node(p.node);
      if (p.share.kind != ShareKind::kWhole || !n.schedulable() || n.shared() || n.gpu_count == 0 || n.gpu_resource != res) {
        continue;
      }
      const uint32_t d = fleet.DomainOf(n, kind);
      if (d >= domains) continue;  // not a domain the walk below reads
      freed_tasks.push_back({d, p.node, std::popcount(p.gpu_mask)});
      more_in[d] += freed_tasks.back().gpus;
      first[d + 1] += 1;
    }
  }
  // By domain (a counting sort), and by node within a domain only where the domain is read.
  for (size_t d = 0; d < domains; ++d) first[d + 1] += first[d];
  std::vector<Freed> by_node(freed_tasks.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const Freed& f : freed_tasks) by_node[fill[f.domain]++] = f;
  }
  std::vector<int> room(need.size());
  for (uint32_t d = 0; d < domains; ++d) {
    const size_t at = first[d], end = first[d + 1];  // by_node[at, end): the tasks freed in domain d
    if (view.DomainFreeGpus(kind, d, res) + more_in[d] >= gpus) {
      std::sort(by_node.begin() + static_cast<std::ptrdiff_t>(at), by_node.begin() + static_cast<std::ptrdiff_t>(end),
                [](const Freed& a, const Freed& b) { return a.node < b.node; });
      std::fill(room.begin(), room.end(), 0);
      AddDomainRoom(view, kind, d, res, nullptr, need, room);
      // Each freed node moves from the count of its free GPUs now to that of its free GPUs
      // with its tasks given back (a node's tasks are summed first).
      for (size_t i = at; i < end;) {
        int f = view.Free(by_node[i].node).gpus(), x = 0;
        size_t j = i;
        for (; j < end && by_node[j].node == by_node[i].node; ++j) x += by_node[j].gpus;
        for (size_t k = 0; k < need.size(); ++k) room[k] += (f + x) / need[k].first - f / need[k].first;
        i = j;
      }
      if (RoomFor(room, need)) return true;
    }
  }
  return false;
}

FreedSinceTry::FreedSinceTry(const FleetView& view, const JobSpec& spec)
    : view_(view), spec_(spec), eligible_(view.Eligible(spec.require)) {
  int ntasks = 0;
  for (const TaskGroup& g : spec.groups) {
    gpus_ += int64_t{g.count} * g.gpus();
    ntasks += g.count;
  }
  if (spec.HasShares() || gpus_ == 0) {
    mode_ = Mode::kAlways;
  } else if (ntasks == 1) {
    mode_ = Mode::kNode;
  } else if (spec.topology == Topology::kNone) {
    mode_ = Mode::kTotal;
  } else {
    mode_ = Mode::kDomain;
    kind_ = DomainKindOf(spec.topology);
    size_t n = view.fleet().domains(kind_).size();
    armed_.assign(n, 0);
    dirty_.assign(n, 0);
  }
}

void FreedSinceTry::Add(const TaskPlacement& p) {
  bool eligible = !eligible_ || eligible_->Test(p.node.value());
  any_eligible_ |= eligible;
  if (mode_ == Mode::kNode) {
    nodes_.push_back(p.node);
  } else if (mode_ == Mode::kDomain) {
    const Node& n = view_.fleet().node(p.node);
    uint32_t d = view_.fleet().DomainOf(n, kind_);
    if (eligible && n.gpu_resource == spec_.gpu_resource) armed_[d] = 1;
    if (!dirty_[d]) {
      dirty_[d] = 1;
      check_.push_back(d);
    }
  }
}

bool FreedSinceTry::MayFit() {
  switch (mode_) {
    case Mode::kAlways:
      return !eligible_ || any_eligible_;
    case Mode::kTotal:
      return (!eligible_ || any_eligible_) && view_.TotalFreeGpus(spec_.gpu_resource) >= gpus_;
    case Mode::kNode: {
      const TaskGroup& g = spec_.groups.front();
      const Fleet& fleet = view_.fleet();
      bool fits = false;
      for (NodeId id : nodes_) {
        fits = fits || (NodeAccepts(fleet.node(id), spec_.gpu_resource, true, eligible_) && view_.Free(id).Fits(g.gpus(), g.cpu, g.memory));
      }
      nodes_.clear();
      return fits;
    }
    case Mode::kDomain: {
      bool fits = false;
      for (uint32_t d : check_) {
        fits = fits || (armed_[d] && view_.DomainFreeGpus(kind_, d, spec_.gpu_resource) >= gpus_);
        dirty_[d] = 0;
      }
      check_.clear();
      return fits;
    }
  }
  return true;
}

void FreedSinceTry::Tried() {
  any_eligible_ = false;
  nodes_.clear();
  for (uint32_t d : check_) dirty_[d] = 0;
  check_.clear();
  std::fill(armed_.begin(), armed_.end(), 0);
}

std::optional<std::string> NeverFits(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names) {
  if (spec.HasShares()) {
    if (auto why = ShareNeverFits(fleet, spec, names)) return why;
  }
  std::vector<Task> tasks = ExpandTasks(spec);
  int64_t gpus = 0;
  for (const Task& t : tasks) gpus += t.gpus;
  std::string model = gpus > 0 ? names.Name(spec.gpu_resource) : "";
  // 1. Some node shape must hold the largest task (the tasks are sorted largest first).
  for (const Task& t : tasks) {
    bool any = false;
    for (const Fleet::NodeShape& s : fleet.shapes()) {
      if (s.sharing != Sharing::kExclusive || (t.gpus > 0 && s.gpu_resource != spec.gpu_resource)) continue;
      if (s.gpus >= t.gpus && s.cpu >= t.cpu && s.memory >= t.memory) any = true;
    }
    if (!any) {
      std::string what = (t.gpus > 0 ? std::to_string(t.gpus) + " " + model + " GPUs, " : std::string()) +
                         FormatMilli(t.cpu) + " CPUs and " + FormatMemoryMiB(t.memory);
      bool model_exists = false;
      for (const Fleet::NodeShape& s : fleet.shapes()) {
        model_exists |= s.gpu_resource == spec.gpu_resource && s.sharing == Sharing::kExclusive;
      }
      if (t.gpus > 0 && !model_exists && (fleet.pool_kinds(spec.gpu_resource) & ~1u)) {
        return "asks whole " + model + " GPUs; every " + model + " node is in a shared pool (MIG, MPS or time-slice)";
      }
      if (t.gpus > 0 && !model_exists) return "no node has GPU model " + model;
      return "a task needs " + what + " on one node; no node in the fleet is that large";
    }
  }
  // 2. An NVLink gang without multi-node domains shares one node: the sum must fit a node.
  if (spec.topology == Topology::kNvlink && !fleet.has_multi_node_nvlink() && tasks.size() > 1) {
    Task sum{0, 0, 0, 0};
    for (const Task& t : tasks) {
      sum.gpus += t.gpus;
      sum.cpu += t.cpu;
      sum.memory += t.memory;
    }
    bool any = false;
    for (const Fleet::NodeShape& s : fleet.shapes()) {
      if (s.sharing != Sharing::kExclusive || (sum.gpus > 0 && s.gpu_resource != spec.gpu_resource)) continue;
      any |= s.gpus >= sum.gpus && s.cpu >= sum.cpu && s.memory >= sum.memory;
    }
    if (!any && sum.gpus <= fleet.LargestDomainGpus(DomainKind::kNvlink, spec.gpu_resource)) {
      return "needs " + std::to_string(sum.gpus) + " " + model + " GPUs, " + FormatMilli(sum.cpu) + " CPUs and " +
             FormatMemoryMiB(sum.memory) + " in one NVLink domain (one node); no node is that large";
    }
  }
  // 3. The gang's GPUs must fit the largest domain its topology allows.
  if (gpus > 0) {
    int64_t largest = spec.topology == Topology::kNone
                          ? fleet.exclusive_gpus(spec.gpu_resource)
                          : fleet.LargestDomainGpus(DomainKindOf(spec.topology), spec.gpu_resource);
    if (gpus > largest) {
      return "needs " + std::to_string(gpus) + " " + model + " GPUs in " + DomainWord(spec.topology) +
             "; the largest has " + std::to_string(largest);
    }
  }
  return std::nullopt;
}

}  // namespace allot
