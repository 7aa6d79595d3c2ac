// A node: capacity, what is free, and where it sits (zone → rack → NVLink domain).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "fleet/sharing.h"

namespace allot {

inline constexpr int kMaxGpusPerNode = 64;

// What is free on a node. Also the unit the placement overlay tracks per node.
struct NodeFree {
  int64_t cpu = 0;              // millicores
  int64_t memory = 0;           // MiB
  uint64_t gpu_mask = 0;        // bit i set = GPU i free
  int gpus() const { return std::popcount(gpu_mask); }
  bool Fits(int gpus_needed, int64_t cpu_needed, int64_t memory_needed) const {
    return gpus() >= gpus_needed && cpu >= cpu_needed && memory >= memory_needed;
  }
};

// How a node may be scheduled. Drivers set it (cordon, drain, health); the scheduler only reads.
// An agent-managed node is accepting from registration until its acceptance checks pass,
// down when its agent stops heartbeating, and in repair after a hardware fault.
enum class NodeCondition : uint8_t { kReady, kCordoned, kDraining, kDown, kAccepting, kRepair };
const char* NodeConditionName(NodeCondition c);

struct Node {
  NodeId id;
  std::string name;
  uint32_t zone = 0;
  uint32_t rack = 0;
  uint32_t nvlink_domain = 0;
  ResourceId gpu_resource = kCpu;  // kCpu when the node has no GPUs
  int gpu_count = 0;
  int64_t cpu = 0;     // capacity, millicores
  int64_t memory = 0;  // capacity, MiB
  NodeFree free;  // shared pools: gpu_mask marks the idle GPUs (nothing held)
  NodeCondition condition = NodeCondition::kReady;
  SharePool pool;  // how the GPUs are handed out
  // GPUs that share an NVLink bridge or PCIe switch, as masks (empty: all alike). A task's
  // GPUs come from one group when one can hold them.
  std::vector<uint64_t> gpu_groups;

  bool shared() const { return pool.sharing != Sharing::kExclusive; }

  bool schedulable() const { return condition == NodeCondition::kReady; }
  uint64_t all_gpus_mask() const {
    return gpu_count == 64 ? ~0ULL : ((1ULL << gpu_count) - 1);
  }
};

// Where one task runs: a node, its GPUs (whole GPUs; or the one GPU a share is on), CPU and
// memory, and the share it holds in a shared pool.
struct TaskPlacement {
  NodeId node;
  uint64_t gpu_mask = 0;
  int64_t cpu = 0;
  int64_t memory = 0;
  TaskShare share;
  bool operator==(const TaskPlacement&) const = default;
  int gpu_index() const { return std::countr_zero(gpu_mask); }
};

// A topology domain: a zone, a rack, or an NVLink domain (one node unless declared wider).
struct Domain {
  std::string name;
  std::vector<NodeId> nodes;  // in id order
};

enum class DomainKind : uint8_t { kNvlink, kRack, kZone };

}  // namespace allot
