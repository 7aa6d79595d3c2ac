#include "fleet/fleet.h"

#include <algorithm>

#include "fleet/gpu_catalog.h"

namespace allot {

Result<NodeId> Fleet::AddNode(const NodeSpec& spec, ResourceNames& names) {
  if (spec.name.empty()) return Err(InvalidArgument("node name: must not be empty"));
  if (by_name_.count(spec.name)) return Err(Conflict("node '" + spec.name + "' already exists"));
  if (spec.gpu_count < 0 || spec.gpu_count > kMaxGpusPerNode) {
    return Err(InvalidArgument("node '" + spec.name + "' gpus.count: " + std::to_string(spec.gpu_count) +
                               " is out of range; expected 0 to " + std::to_string(kMaxGpusPerNode)));
  }
  if (spec.cpu < 0 || spec.memory < 0) {
    return Err(InvalidArgument("node '" + spec.name + "': cpu and memory must not be negative"));
  }
  ResourceId gpu_resource = kCpu;
  if (spec.gpu_count > 0) {
    if (!FindGpuModel(spec.gpu_model)) {
      return Err(InvalidArgument("node '" + spec.name + "' gpus.model: unknown GPU model '" + spec.gpu_model + "'"));
    }
    gpu_resource = names.Intern("gpu/" + spec.gpu_model);
    if (gpu_resource == ResourceNames::kInvalid) {
      return Err(InvalidArgument("node '" + spec.name + "': too many distinct resources"));
    }
  }
  if (!spec.nvlink_domain.empty()) {
    auto it = domain_by_name_[0].find(spec.nvlink_domain);
    if (it != domain_by_name_[0].end()) {
      const Node& first = nodes_[domains_[0][it->second].nodes.front().value()];
      if (first.gpu_resource != gpu_resource) {
        return Err(InvalidArgument("node '" + spec.name + "' nvlink_domain: '" + spec.nvlink_domain +
                                   "' already holds a different GPU model"));
      }
    }
  }

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
  by_name_.emplace(n.name, id);
  capacity_[kCpu] += n.cpu;
  capacity_[kMemory] += n.memory;
  if (n.gpu_count > 0) capacity_[gpu_resource] += n.gpu_count * kMilli;
  NodeShape shape{gpu_resource, n.gpu_count, n.cpu, n.memory};
  if (std::find(shapes_.begin(), shapes_.end(), shape) == shapes_.end()) shapes_.push_back(shape);
  if (n.gpu_count > 0) {
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

uint32_t Fleet::InternDomain(DomainKind kind, const std::string& name, NodeId node) {
  int k = static_cast<int>(kind);
  auto [it, inserted] = domain_by_name_[k].emplace(name, static_cast<uint32_t>(domains_[k].size()));
  if (inserted) domains_[k].push_back({name, {}});
  domains_[k][it->second].nodes.push_back(node);
  if (inserted) domain_free_[k].resize(domains_[k].size() * kMaxResources, 0);
  return it->second;
}

void Fleet::IndexInsert(const Node& n) {
  if (!n.schedulable()) return;
  int free = n.free.gpus();
  index_.Insert(n.gpu_resource, free, n.id);
  if (n.gpu_count == 0) return;
  for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
    domain_free_[static_cast<int>(kind)][size_t{DomainOf(n, kind)} * kMaxResources + n.gpu_resource] += free;
  }
}
void Fleet::IndexErase(const Node& n) {
  if (!n.schedulable()) return;
  int free = n.free.gpus();
  index_.Erase(n.gpu_resource, free, n.id);
  if (n.gpu_count == 0) return;
  for (DomainKind kind : {DomainKind::kNvlink, DomainKind::kRack, DomainKind::kZone}) {
    domain_free_[static_cast<int>(kind)][size_t{DomainOf(n, kind)} * kMaxResources + n.gpu_resource] -= free;
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

void Fleet::SetCondition(NodeId id, NodeCondition condition) {
  Node& n = nodes_[id.value()];
  IndexErase(n);
  n.condition = condition;
  IndexInsert(n);
}

std::string Fleet::CheckDomainCounts() const {
  for (int k = 0; k < 3; ++k) {
    std::vector<int32_t> expect(domain_free_[k].size(), 0);
    for (const Node& n : nodes_) {
      if (!n.schedulable() || n.gpu_count == 0) continue;
      expect[size_t{DomainOf(n, static_cast<DomainKind>(k))} * kMaxResources + n.gpu_resource] += n.free.gpus();
    }
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
