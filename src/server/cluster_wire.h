// allotd's side of dedicated clusters (issue 16): which cluster each booked node's agent must run
// (the assignments' "clusters", wire/cluster_messages.h) and what GET /v1/reservations/NAME shows
// of what the agents report (`access`).
//
// Ports, deterministic and documented (docs/dedicated-clusters.md): node i (in the order of the
// window's holds) of reservation r gets slot s = (r * 16 + i) mod 8192 and the ports base + 3s
// (sshd), base + 3s + 1 (slurmctld), base + 3s + 2 (slurmd). Whole-node bookings never overlap on a
// node, so two clusters share a node only while one is torn down and the next starts, and those
// are of different reservations: apart unless their ids differ by a multiple of 512.
//
// A Slurm over the window's nodes: every booked node's agent is told every node (its registered
// address, slurmd port, GPUs, CPUs, memory), the controller (the first node's address and
// slurmctld port) and the window's munge key. The key is derived, never stored: HMAC-SHA256
// under allotd's cluster-key (DATA/cluster-key) of the reservation, window and its start, so it
// is the same for all the window's nodes and across allotd's restarts, and another window's
// differs. It goes only to the booked nodes' agents, on their node-token calls.
#pragma once

#include <cstdint>
#include <vector>

#include "daemon/agent_registry.h"
#include "state/cluster_state.h"
#include "wire/cluster_messages.h"

namespace allot {

struct ClusterPorts {
  int base = 30000;  // allotd --cluster-port-base; base + 3 * 8192 must stay under 65536
  static constexpr int kSlots = 8192;
  int Ssh(uint32_t reservation, int node_index) const {
    return base + 3 * static_cast<int>((static_cast<uint64_t>(reservation) * 16 + static_cast<uint64_t>(node_index)) % kSlots);
  }
};

// The time a private Slurm's jobs get between SIGTERM and SIGKILL at the window's end.
inline constexpr int64_t kClusterStopGraceMs = 10000;

// What a multi-node Slurm's assignment takes from outside the state.
struct ClusterSources {
  const AgentRegistry* agents = nullptr;  // the nodes' registered addresses (none known: the node's name)
  std::string secret;                     // allotd's cluster-key, 32 bytes; "": no members, controller or key sent
};

// The window's munge key: 1024 bytes (mungekey's default), HMAC-SHA256 under `secret` of
// (reservation, window, the window's start, block index), block after block.
std::string ClusterMungeKey(const std::string& secret, uint32_t reservation_id, int window, int64_t start_ms);

// For each confirmed reservation booked by whole nodes that holds `node` in its first window not
// over at `now` (started or not): the cluster its agent must run then, with the tenant's keys and,
// for orchestrator slurm with a secret, the members, controller and munge key.
std::vector<ClusterAssignment> DesiredClusters(const ClusterState& st, NodeId node, int64_t now, const ClusterPorts& ports,
                                               const ClusterSources& sources = {});

// `access` of a reservation: for each node of its current (or next) window, what its agent
// reports running for it: [{node, state, ssh?: {host, port, user}, login_details?, error?}].
// After the last window: that window's nodes, "over" unless an agent still reports on it.
Json ClusterAccessJson(const ClusterState& st, const CapacityReservation& r, int64_t now, const AgentRegistry& agents);

}  // namespace allot
