// The fleet: nodes and their topology, what is free, and the indexes placement reads.
// Mutated only through ClusterState::apply (Allocate/Release/SetCondition).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "core/status.h"
#include "fleet/capacity_index.h"
#include "fleet/labels.h"
#include "fleet/node.h"

namespace allot {

struct NodeSpec {
  std::string name;
  std::string zone = "default";
  std::string rack = "default";
  std::string nvlink_domain;   // empty: the node is its own NVLink domain
  int64_t cpu = 0;             // millicores
  int64_t memory = 0;          // MiB
  std::string gpu_model;       // empty when gpu_count == 0
  int gpu_count = 0;
  Sharing sharing = Sharing::kExclusive;
  std::vector<std::string> mig_layout;  // kMig: each GPU's initial layout (profile names)
  int replicas = 4;                     // kTimeslice: replicas per GPU
  int64_t oversubscription_milli = 1000;  // kMps: factor on active-thread percentages
  std::vector<std::vector<int>> gpu_groups;  // GPU indices sharing a switch/bridge; disjoint
  // What the node offers beyond capacity (driver, cuda, interconnect, operators' own): what a
  // job's or reservation's `require` reads. Stored sorted by name (fleet/labels.h).
  NodeLabels labels;
  bool operator==(const NodeSpec&) const = default;
};

class Fleet {
 public:
  // Adds a node; `names` interns "gpu/<model>". Fails on a duplicate name, an unknown model,
  // too many GPUs, or a multi-node NVLink domain that mixes GPU models.
  Result<NodeId> AddNode(const NodeSpec& spec, ResourceNames& names);

  // The spec AddNode would rebuild node `id` from, given the same `names`: adding the specs of
  // nodes 0..n in order to an empty fleet gives the same nodes, domains and indexes. The MIG
  // layout is left empty (each GPU's current layout is share state; see Relayout).
  NodeSpec SpecOf(NodeId id, const ResourceNames& names) const;

  // REQUIRES: the GPUs in `gpu_mask` are free and cpu/memory fit.
  void Allocate(NodeId node, uint64_t gpu_mask, int64_t cpu, int64_t memory);
  // REQUIRES: the GPUs in `gpu_mask` are held.
  void Release(NodeId node, uint64_t gpu_mask, int64_t cpu, int64_t memory);
  // A task's placement, whole GPUs or a share. REQUIRES: it fits (Allocate) / is held (Release).
  void Allocate(const TaskPlacement& p);
  void Release(const TaskPlacement& p);
  // Replaces the free instances of MIG GPU `gpu` by `layout`, usable from `ready_ms`.
  // Fails, changing nothing, when the node is not a MIG node or CheckRelayout refuses.
  Status Relayout(NodeId node, int gpu, const MigLayout& layout, int64_t now_ms, int64_t ready_ms);

  // A node agent manages node `id`: its MIG GPUs' instances are usable once it reports holding
  // them (GpuShareState::agent). Forgets what it reported before (a restarted agent clears them).
  void SetAgentManaged(NodeId id);
  // What the agent of MIG node `node` holds on GPU `gpu` now. Fails, changing nothing, when the
  // node is not an agent-managed MIG node, the GPU is not its, or a profile is unknown.
  Status SetNodeMigLayout(NodeId node, int gpu, MigLayout layout);

  // The share state of each GPU of a shared node (empty for an exclusive node).
  const std::vector<GpuShareState>& shares(NodeId id) const { return shares_[id.value()]; }
  // Nodes of each shared pool kind, in id order.
  const std::vector<NodeId>& shared_nodes(Sharing s) const { return shared_nodes_[static_cast<int>(s)]; }
  // Bit (1 << Sharing) set when some node of GPU resource `res` is in a pool of that kind.
  uint32_t pool_kinds(ResourceId res) const { return pool_kinds_[res]; }
  // Time-slice replicas per GPU of `res` (one value per model, checked when nodes are added).
  int timeslice_replicas(ResourceId res) const { return timeslice_replicas_[res]; }
  void SetCondition(NodeId node, NodeCondition condition);
  // The node's labels, sorted by name. SetLabels replaces them (a re-registered agent reports
  // its own); REQUIRES: CheckLabels passes.
  const NodeLabels& labels(NodeId id) const { return labels_[id.value()]; }
  void SetLabels(NodeId id, NodeLabels labels);
  // The nodes labelled isolation=partial, and how many: their agent cannot confine tasks in
  // every way (agent/run/runner.h, IsolationGaps), so untrusted tenants' jobs are kept off them.
  // Kept as labels are set (derived: AddNode rebuilds them on a snapshot's restore).
  const Bitset& partial_isolation() const { return partial_isolation_; }
  int32_t partial_isolation_nodes() const { return partial_isolation_nodes_; }

  size_t size() const { return nodes_.size(); }
  const Node& node(NodeId id) const { return nodes_[id.value()]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  NodeId Find(std::string_view name) const;  // invalid id when unknown

  const std::vector<Domain>& domains(DomainKind kind) const { return domains_[static_cast<int>(kind)]; }
  uint32_t DomainOf(const Node& n, DomainKind kind) const {
    return kind == DomainKind::kNvlink ? n.nvlink_domain : kind == DomainKind::kRack ? n.rack : n.zone;
  }

  // The racks (domain indexes of kRack) inside zone `z`, in rack order.
  const std::vector<uint32_t>& racks_of_zone(uint32_t z) const { return racks_of_zone_[z]; }

  // Free GPUs of `gpu_resource` on the schedulable nodes of domain `d` of `kind`, kept current
  // by Allocate/Release/SetCondition so domain placement reads it in O(1).
  int64_t DomainFreeGpus(DomainKind kind, uint32_t d, ResourceId gpu_resource) const {
    return domain_free_[static_cast<int>(kind)][static_cast<size_t>(d) * kMaxResources + gpu_resource];
  }

  // Of the schedulable nodes of rack or zone `d` with GPUs of `gpu_resource`: how many have k
  // free GPUs, for k = 0 … kMaxGpusPerNode (kFreeSlots counts), kept current with the free
  // counts. Domain placement reads a domain's room for tasks of s GPUs, Σ count[k]·⌊k/s⌋, here
  // instead of walking its nodes. nullptr for NVLink domains (not counted).
  static constexpr int kFreeSlots = kMaxGpusPerNode + 1;
  const int32_t* DomainFreeHistogram(DomainKind kind, uint32_t d, ResourceId gpu_resource) const {
    if (kind == DomainKind::kNvlink) return nullptr;
    return &domain_hist_[static_cast<int>(kind)][(static_cast<size_t>(d) * kMaxResources + gpu_resource) * kFreeSlots];
  }

  // Total capacity of every node (schedulable or not), per resource: the DRF denominator.
  const Resources& capacity() const { return capacity_; }
  // Total GPUs of `gpu_resource` in the largest domain of `kind` (for "can never fit").
  int64_t LargestDomainGpus(DomainKind kind, ResourceId gpu_resource) const;
  // The distinct node shapes (capacity, not free), in order of first appearance.
  struct NodeShape {
    ResourceId gpu_resource = kCpu;
    int gpus = 0;
    int64_t cpu = 0;
    int64_t memory = 0;
    Sharing sharing = Sharing::kExclusive;
    bool operator==(const NodeShape&) const = default;
  };
  const std::vector<NodeShape>& shapes() const { return shapes_; }
  bool has_multi_node_nvlink() const { return multi_node_nvlink_; }
  // GPUs of `res` on exclusive nodes (schedulable or not): what whole-GPU gangs can reach.
  int64_t exclusive_gpus(ResourceId res) const { return exclusive_gpus_[res]; }

  const CapacityIndex& index() const { return index_; }

  // Recomputes the per-domain free counts from the nodes and compares; a message naming the
  // first domain that disagrees, or empty. For invariant checks.
  std::string CheckDomainCounts() const;

 private:
  // AddNode in two steps: everything about a spec that can be refused (alone and against the
  // nodes already there), then the node and its indexes.
  struct CheckedNode {
    ResourceId gpu_resource = kCpu;
    std::vector<uint64_t> groups;
    SharePool pool;
    std::vector<GpuShareState> shares;
  };
  Result<CheckedNode> CheckNode(const NodeSpec& spec, ResourceNames& names) const;
  NodeId Insert(const NodeSpec& spec, CheckedNode checked);

  uint32_t InternDomain(DomainKind kind, const std::string& name, NodeId node);
  void IndexInsert(const Node& n);
  void IndexErase(const Node& n);

  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> by_name_;
  std::vector<Domain> domains_[3];
  std::unordered_map<std::string, uint32_t> domain_by_name_[3];
  Resources capacity_;
  CapacityIndex index_;
  std::vector<NodeShape> shapes_;
  std::vector<std::vector<uint32_t>> racks_of_zone_;
  std::vector<int32_t> domain_free_[3];  // [kind][domain * kMaxResources + resource]
  std::vector<int32_t> domain_hist_[3];  // [kind][(domain * kMaxResources + resource) * kFreeSlots + free]; rack, zone
  std::unordered_map<uint64_t, int64_t> domain_gpus_;  // (kind, domain, resource) → GPUs
  std::unordered_map<uint64_t, int64_t> largest_domain_gpus_;  // (kind, resource) → GPUs
  bool multi_node_nvlink_ = false;
  std::vector<std::vector<GpuShareState>> shares_;  // by node id
  std::vector<NodeLabels> labels_;                  // by node id; apart from Node, which placement scans
  Bitset partial_isolation_;                         // of labels_, by node id
  int32_t partial_isolation_nodes_ = 0;
  void SetPartialIsolation(NodeId id, const NodeLabels& labels);
  std::vector<NodeId> shared_nodes_[4];
  uint32_t pool_kinds_[kMaxResources] = {};
  int timeslice_replicas_[kMaxResources] = {};
  int64_t exclusive_gpus_[kMaxResources] = {};
};

}  // namespace allot
