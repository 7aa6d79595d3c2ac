#include "fleet/fleet.h"

#include <algorithm>

#include "core/quantity.h"
#include "fleet/gpu_catalog.h"

namespace allot {

const char* NodeConditionName(NodeCondition c) {
  switch (c) {
    case NodeCondition::kReady: return "ready";
    case NodeCondition::kCordoned: return "cordoned";
    case NodeCondition::kDraining: return "draining";
    case NodeCondition::kDown: return "down";
    case NodeCondition::kAccepting: return "accepting";
    case NodeCondition::kRepair: return "repair";
  }
  return "down";
}


namespace {

// The most CPU (millicores) and memory (MiB) one node may declare.
constexpr int64_t kMaxNodeCpu = int64_t{1'000'000} * 1000;
constexpr int64_t kMaxNodeMemoryMiB = int64_t{1} << 30;

// The GPU groups of `spec` as bit masks: disjoint indices within the node's GPUs.
Result<std::vector<uint64_t>> GroupMasks(const NodeSpec& spec) {
  std::vector<uint64_t> groups;
  uint64_t grouped = 0;
  for (size_t i = 0; i < spec.gpu_groups.size(); ++i) {
    uint64_t m = 0;
    for (int g : spec.gpu_groups[i]) {
      uint64_t bit = g >= 0 && g < spec.gpu_count ? uint64_t{1} << g : 0;
      if (bit == 0 || (grouped & bit)) {
        return Err(InvalidArgument("node '" + spec.name + "' gpus.groups[" + std::to_string(i) + "]: GPU " +
                                   std::to_string(g) + " is out of range or in two groups; expected disjoint indices "
                                   "from 0 to " + std::to_string(spec.gpu_count - 1)));
      }
      grouped |= bit;
      m |= bit;
    }
    groups.push_back(m);
  }
  return groups;
}

// The node's share pool (MIG, MPS, time-slice or none) and its GPUs' initial share state.
Status ReadPool(const NodeSpec& spec, SharePool& pool, std::vector<GpuShareState>& shares) {
  pool.sharing = spec.sharing;
  if (spec.sharing == Sharing::kExclusive) return Status::Ok();
  std::string where = "node '" + spec.name + "' gpus.sharing: " + SharingName(spec.sharing);
  if (spec.gpu_count == 0) return InvalidArgument(where + " needs GPUs; expected gpus.count of at least 1");
  pool.gpu_memory = FindGpuModel(spec.gpu_model)->memory_mib;
  shares.resize(spec.gpu_count);
  if (spec.sharing == Sharing::kMig) {
    pool.mig = FindMigGeometry(spec.gpu_model);
    if (!pool.mig) {
      return InvalidArgument(where + ": " + spec.gpu_model + " has no MIG; expected a MIG-capable model "
                             "(A100, H100, H200, B200, A30)");
    }
    if (!spec.mig_layout.empty()) {
      auto layout = LayoutFromNames(*pool.mig, spec.mig_layout);
      if (!layout) return InvalidArgument("node '" + spec.name + "' gpus.mig_layout: " + layout.error().message());
      for (GpuShareState& g : shares) {
        for (const MigInstance& i : *layout) g.mig.push_back({i, false});
      }
    }
  }
  if (spec.sharing == Sharing::kTimeslice) {
    if (spec.replicas < 1 || spec.replicas > 48 || kGpuUnit % spec.replicas != 0) {
      return InvalidArgument("node '" + spec.name + "' gpus.replicas: " + std::to_string(spec.replicas) +
                             " is not valid; expected 1 to 48 dividing a GPU exactly (1-8, 10, 12, 14, 15, 20, "
                             "21, 24, 25, 28, 30, 35, 40, 42)");
    }
    pool.replicas = spec.replicas;
  }
  if (spec.sharing == Sharing::kMps) {
    if (spec.oversubscription_milli < 1000 || spec.oversubscription_milli > 48000) {
      return InvalidArgument("node '" + spec.name + "' gpus.oversubscription: " +
                             FormatMilli(spec.oversubscription_milli) + " is not valid; expected 1 to 48");
    }
    pool.oversubscription_milli = spec.oversubscription_milli;
  }
  return Status::Ok();
}

}  // namespace

Result<Fleet::CheckedNode> Fleet::CheckNode(const NodeSpec& spec, ResourceNames& names) const {
  if (spec.name.empty()) return Err(InvalidArgument("node name: must not be empty"));
  if (by_name_.count(spec.name)) return Err(Conflict("node '" + spec.name + "' already exists"));
  if (spec.gpu_count < 0 || spec.gpu_count > kMaxGpusPerNode) {
    return Err(InvalidArgument("node '" + spec.name + "' gpus.count: " + std::to_string(spec.gpu_count) +
                               " is out of range; expected 0 to " + std::to_string(kMaxGpusPerNode)));
  }
  if (spec.cpu < 0 || spec.memory < 0) {
    return Err(InvalidArgument("node '" + spec.name + "': cpu and memory must not be negative"));
  }
  // So the fleet's capacity sums stay far from overflow (found by fuzz_snapshot: a node of
  // INT64_MAX millicores wrapped the CPU capacity).
  if (spec.cpu > kMaxNodeCpu || spec.memory > kMaxNodeMemoryMiB) {
    return Err(InvalidArgument("node '" + spec.name + "': cpu " + FormatMilli(spec.cpu) + " or memory " +
                               FormatMemoryMiB(spec.memory) + " is out of range; expected at most 1000000 CPUs and 1Pi"));
  }
  if (Status s = CheckLabels("node '" + spec.name + "' labels", spec.labels); !s.ok()) return Err(s);
  CheckedNode c;
  if (spec.gpu_count > 0) {
    if (!FindGpuModel(spec.gpu_model)) {
      return Err(InvalidArgument("node '" + spec.name + "' gpus.model: unknown GPU model '" + spec.gpu_model + "'"));
    }
    c.gpu_resource = names.Intern("gpu/" + spec.gpu_model);
    if (c.gpu_resource == ResourceNames::kInvalid) {
      return Err(InvalidArgument("node '" + spec.name + "': too many distinct resources"));
    }
  }
  auto groups = GroupMasks(spec);
  if (!groups) return Err(groups.error());
  c.groups = std::move(*groups);
  if (Status s = ReadPool(spec, c.pool, c.shares); !s.ok()) return Err(s);
  // What must agree with the nodes already there.
  if (c.pool.sharing == Sharing::kTimeslice) {
    int r = timeslice_replicas_[c.gpu_resource];
    if (r != 0 && r != c.pool.replicas) {
      return Err(InvalidArgument("node '" + spec.name + "' gpus.replicas: " + std::to_string(c.pool.replicas) +
                                 " differs from " + std::to_string(r) + " on the other time-sliced " + spec.gpu_model +
                                 " nodes; expected one replica count per GPU model (a replica's quota charge is 1/N)"));
    }
  }
  if (!spec.nvlink_domain.empty()) {
    auto it = domain_by_name_[0].find(spec.nvlink_domain);
    if (it != domain_by_name_[0].end()) {
      const Node& first = nodes_[domains_[0][it->second].nodes.front().value()];
      if (first.gpu_resource != c.gpu_resource) {
        return Err(InvalidArgument("node '" + spec.name + "' nvlink_domain: '" + spec.nvlink_domain +
                                   "' already holds a different GPU model"));
      }
    }
  }
  return c;
}

Result<NodeId> Fleet::AddNode(const NodeSpec& spec, ResourceNames& names) {
  // Validated before anything changes: a refused node leaves no trace.
  auto checked = CheckNode(spec, names);
  if (!checked) return Err(checked.error());
  return Insert(spec, std::move(*checked));
}

NodeId Fleet::Insert(const NodeSpec& spec, CheckedNode c) {
  const ResourceId gpu_resource = c.gpu_resource;
  const SharePool& pool = c.pool;
  NodeId id(static_cast<uint32_t>(nodes_.size()));
  Node n;
  n.id = id;
  n.name = spec.name;
  n.gpu_resource = gpu_resource;
  n.gpu_count = spec.gpu_count;
  n.cpu = spec.cpu;
  n.memory = spec.memory;
  n.free = {spec.cpu, spec.memory, n.all_gpus_mask()};
  n.zone = InternDomain(DomainKind::kZone, spec.zone, id);
  size_t racks_before = domains_[static_cast<int>(DomainKind::kRack)].size();
  n.rack = InternDomain(DomainKind::kRack, spec.zone + "/" + spec.rack, id);
  if (racks_of_zone_.size() <= n.zone) racks_of_zone_.resize(n.zone + 1);
  if (domains_[static_cast<int>(DomainKind::kRack)].size() > racks_before) racks_of_zone_[n.zone].push_back(n.rack);
  n.nvlink_domain = InternDomain(DomainKind::kNvlink,
                                 spec.nvlink_domain.empty() ? "node/" + spec.name : spec.nvlink_domain, id);
  n.pool = pool;
  if (pool.sharing == Sharing::kTimeslice) timeslice_replicas_[gpu_resource] = pool.replicas;
  n.gpu_groups = std::move(c.groups);
  if (n.gpu_count > 0) pool_kinds_[gpu_resource] |= 1u << static_cast<int>(pool.sharing);
  if (n.shared()) shared_nodes_[static_cast<int>(pool.sharing)].push_back(id);
  shares_.push_back(std::move(c.shares));
  labels_.push_back(spec.labels);
  SortLabels(labels_.back());
  SetPartialIsolation(id, labels_.back());
  by_name_.emplace(n.name, id);
  capacity_[kCpu] += n.cpu;
  capacity_[kMemory] += n.memory;
  if (n.gpu_count > 0) capacity_[gpu_resource] += n.gpu_count * kGpuUnit;
  NodeShape shape{gpu_resource, n.gpu_count, n.cpu, n.memory, pool.sharing};
  if (pool.sharing == Sharing::kExclusive) exclusive_gpus_[gpu_resource] += n.gpu_count;
  if (std::find(shapes_.begin(), shapes_.end(), shape) == shapes_.end()) shapes_.push_back(shape);
  if (n.gpu_count > 0 && !n.shared()) {
    for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
      uint64_t dom = DomainOf(n, kind);
      int64_t& sum = domain_gpus_[(static_cast<uint64_t>(kind) << 40) | (dom << 8) | gpu_resource];
      sum += n.gpu_count;
      int64_t& best = largest_domain_gpus_[(static_cast<uint64_t>(kind) << 8) | gpu_resource];
      best = std::max(best, sum);
    }
  }
  if (domains_[0][n.nvlink_domain].nodes.size() > 1) multi_node_nvlink_ = true;
  nodes_.push_back(std::move(n));
  index_.Grow(gpu_resource, std::max(spec.gpu_count, index_.MaxGpus(gpu_resource)), nodes_.size());
  IndexInsert(nodes_.back());
  return id;
}

NodeSpec Fleet::SpecOf(NodeId id, const ResourceNames& names) const {
  const Node& n = nodes_[id.value()];
  NodeSpec spec;
  spec.name = n.name;
  spec.zone = domains(DomainKind::kZone)[n.zone].name;
  // AddNode names racks "<zone>/<rack>" and a lone node's NVLink domain "node/<name>".
  spec.rack = domains(DomainKind::kRack)[n.rack].name.substr(spec.zone.size() + 1);
  const std::string& nvlink = domains(DomainKind::kNvlink)[n.nvlink_domain].name;
  spec.nvlink_domain = nvlink == "node/" + n.name ? "" : nvlink;
  spec.cpu = n.cpu;
  spec.memory = n.memory;
  spec.gpu_model = n.gpu_count > 0 ? names.Name(n.gpu_resource).substr(4) : "";  // "gpu/<model>"
  spec.gpu_count = n.gpu_count;
  spec.sharing = n.pool.sharing;
  if (n.pool.sharing == Sharing::kTimeslice) spec.replicas = n.pool.replicas;
  spec.oversubscription_milli = n.pool.oversubscription_milli;
  for (uint64_t mask : n.gpu_groups) {
    std::vector<int>& group = spec.gpu_groups.emplace_back();
    for (int g = 0; g < n.gpu_count; ++g) {
      if ((mask >> g) & 1) group.push_back(g);
    }
  }
  spec.labels = labels_[id.value()];
  return spec;
}

void Fleet::SetLabels(NodeId id, NodeLabels labels) {
  SortLabels(labels);
  SetPartialIsolation(id, labels);
  labels_[id.value()] = std::move(labels);
}

void Fleet::SetPartialIsolation(NodeId id, const NodeLabels& labels) {
  const std::string* v = FindLabel(labels, "isolation");
  const bool partial = v != nullptr && *v == "partial";
  if (partial == partial_isolation_.Test(id.value())) return;
  if (id.value() >= partial_isolation_.words() * 64) partial_isolation_.Resize(id.value() + 1);  // grows only
  if (partial) {
    partial_isolation_.Set(id.value());
    ++partial_isolation_nodes_;
  } else {
    partial_isolation_.Clear(id.value());
    --partial_isolation_nodes_;
  }
}

uint32_t Fleet::InternDomain(DomainKind kind, const std::string& name, NodeId node) {
  int k = static_cast<int>(kind);
  auto [it, inserted] = domain_by_name_[k].emplace(name, static_cast<uint32_t>(domains_[k].size()));
  if (inserted) domains_[k].push_back({name, {}});
  domains_[k][it->second].nodes.push_back(node);
  if (inserted) domain_free_[k].resize(domains_[k].size() * kMaxResources, 0);
  if (inserted && kind != DomainKind::kNvlink) domain_hist_[k].resize(domains_[k].size() * kMaxResources * kFreeSlots, 0);
  return it->second;
}

// Shared nodes stay out of the capacity index and the domain counts: those serve whole-GPU
// placement, which shared pools do not offer.
void Fleet::IndexInsert(const Node& n) {
  if (!n.schedulable() || n.shared()) return;
  int free = n.free.gpus();
  index_.Insert(n.gpu_resource, free, n.id);
  if (n.gpu_count == 0) return;
  for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
    size_t i = size_t{DomainOf(n, kind)} * kMaxResources + n.gpu_resource;
    domain_free_[static_cast<int>(kind)][i] += free;
    if (kind != DomainKind::kNvlink) domain_hist_[static_cast<int>(kind)][i * kFreeSlots + free] += 1;
  }
}
void Fleet::IndexErase(const Node& n) {
  if (!n.schedulable() || n.shared()) return;
  int free = n.free.gpus();
  index_.Erase(n.gpu_resource, free, n.id);
  if (n.gpu_count == 0) return;
  for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
    size_t i = size_t{DomainOf(n, kind)} * kMaxResources + n.gpu_resource;
    domain_free_[static_cast<int>(kind)][i] -= free;
    if (kind != DomainKind::kNvlink) domain_hist_[static_cast<int>(kind)][i * kFreeSlots + free] -= 1;
  }
}

void Fleet::Allocate(NodeId id, uint64_t gpu_mask, int64_t cpu, int64_t memory) {
  Node& n = nodes_[id.value()];
  ALLOT_CHECK((n.free.gpu_mask & gpu_mask) == gpu_mask);
  IndexErase(n);
  n.free.gpu_mask &= ~gpu_mask;
  n.free.cpu -= cpu;
  n.free.memory -= memory;
  IndexInsert(n);
}

void Fleet::Release(NodeId id, uint64_t gpu_mask, int64_t cpu, int64_t memory) {
  Node& n = nodes_[id.value()];
  ALLOT_CHECK((n.free.gpu_mask & gpu_mask) == 0);
  IndexErase(n);
  n.free.gpu_mask |= gpu_mask;
  n.free.cpu += cpu;
  n.free.memory += memory;
  IndexInsert(n);
}

void Fleet::Allocate(const TaskPlacement& p) {
  if (p.share.kind == ShareKind::kWhole) return Allocate(p.node, p.gpu_mask, p.cpu, p.memory);
  Node& n = nodes_[p.node.value()];
  GpuShareState& g = shares_[p.node.value()][p.gpu_index()];
  Hold(g, p.share);
  n.free.gpu_mask &= ~p.gpu_mask;
  n.free.cpu -= p.cpu;
  n.free.memory -= p.memory;
}

void Fleet::Release(const TaskPlacement& p) {
  if (p.share.kind == ShareKind::kWhole) return Release(p.node, p.gpu_mask, p.cpu, p.memory);
  Node& n = nodes_[p.node.value()];
  GpuShareState& g = shares_[p.node.value()][p.gpu_index()];
  Drop(g, p.share);
  if (g.idle()) n.free.gpu_mask |= p.gpu_mask;
  n.free.cpu += p.cpu;
  n.free.memory += p.memory;
}

Status Fleet::Relayout(NodeId id, int gpu, const MigLayout& layout, int64_t now_ms, int64_t ready_ms) {
  if (!id.valid() || id.value() >= nodes_.size()) return NotFound("node does not exist");
  const Node& n = nodes_[id.value()];
  if (gpu < 0 || gpu >= n.gpu_count) return InvalidArgument("node '" + n.name + "': no GPU " + std::to_string(gpu));
  if (n.pool.sharing != Sharing::kMig) return FailedPrecondition("node '" + n.name + "' is not in a MIG pool");
  GpuShareState& g = shares_[id.value()][gpu];
  if (Status s = CheckRelayout(n.pool, g, layout); !s.ok()) {
    return FailedPrecondition("node '" + n.name + "' GPU " + std::to_string(gpu) + ": " + s.message());
  }
  std::vector<MigSlot> next;
  for (const MigInstance& i : layout) {
    bool held = false;
    for (const MigSlot& s : g.mig) held |= s.held && s.instance == i;
    next.push_back({i, held});
  }
  g.mig = std::move(next);
  g.layout_ms = now_ms;
  g.ready_ms = ready_ms;
  return Status::Ok();
}

void Fleet::SetAgentManaged(NodeId id) {
  if (nodes_[id.value()].pool.sharing != Sharing::kMig) return;
  for (GpuShareState& g : shares_[id.value()]) {
    g.agent = true;
    g.node_layout.clear();
  }
}

Status Fleet::SetNodeMigLayout(NodeId id, int gpu, MigLayout layout) {
  if (!id.valid() || id.value() >= nodes_.size()) return NotFound("node does not exist");
  const Node& n = nodes_[id.value()];
  if (gpu < 0 || gpu >= n.gpu_count) return InvalidArgument("node '" + n.name + "': no GPU " + std::to_string(gpu));
  if (n.pool.sharing != Sharing::kMig || !n.pool.mig) return FailedPrecondition("node '" + n.name + "' is not in a MIG pool");
  GpuShareState& g = shares_[id.value()][gpu];
  if (!g.agent) return FailedPrecondition("node '" + n.name + "' is not managed by an agent");
  for (const MigInstance& i : layout) {
    if (i.profile >= n.pool.mig->profiles.size()) {
      return InvalidArgument("node '" + n.name + "' GPU " + std::to_string(gpu) + ": MIG profile " +
                             std::to_string(i.profile) + " is unknown");
    }
  }
  std::sort(layout.begin(), layout.end());
  g.node_layout = std::move(layout);
  return Status::Ok();
}

void Fleet::SetCondition(NodeId id, NodeCondition condition) {
  Node& n = nodes_[id.value()];
  IndexErase(n);
  n.condition = condition;
  IndexInsert(n);
}

std::string Fleet::CheckDomainCounts() const {
  for (int k = 0; k < 3; ++k) {
    std::vector<int32_t> expect(domain_free_[k].size(), 0);
    std::vector<int32_t> hist(domain_hist_[k].size(), 0);
    for (const Node& n : nodes_) {
      if (!n.schedulable() || n.gpu_count == 0 || n.shared()) continue;
      size_t i = size_t{DomainOf(n, static_cast<DomainKind>(k))} * kMaxResources + n.gpu_resource;
      expect[i] += n.free.gpus();
      if (!hist.empty()) hist[i * kFreeSlots + n.free.gpus()] += 1;
    }
    if (hist != domain_hist_[k]) return "a domain's count of nodes by free GPUs does not match its nodes";
    for (size_t i = 0; i < expect.size(); ++i) {
      if (expect[i] != domain_free_[k][i]) {
        return "domain '" + domains_[k][i / kMaxResources].name + "' counts " + std::to_string(domain_free_[k][i]) +
               " free GPUs; its nodes have " + std::to_string(expect[i]);
      }
    }
  }
  return "";
}

NodeId Fleet::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? NodeId() : it->second;
}

int64_t Fleet::LargestDomainGpus(DomainKind kind, ResourceId gpu_resource) const {
  auto it = largest_domain_gpus_.find((static_cast<uint64_t>(kind) << 8) | gpu_resource);
  return it == largest_domain_gpus_.end() ? 0 : it->second;
}

}  // namespace allot
