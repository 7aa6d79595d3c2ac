// allotd's side of dedicated clusters (issue 16): which cluster each booked node's agent must run
// (the assignments' "clusters", wire/cluster_messages.h) and what GET /v1/reservations/NAME shows
// of what the agents report (`access`).
//
// Ports, deterministic and documented (docs/dedicated-clusters.md): node i (in the order of the
// window's holds) of reservation r gets slot s = (r * 16 + i) mod 8192 and the ports base + 3s
// (sshd), base + 3s + 1 (slurmctld), base + 3s + 2 (slurmd). Whole-node bookings never overlap on a
// node, so two clusters share a node only while one is torn down and the next starts, and those
// are of different reservations: apart unless their ids differ by a multiple of 512.
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

// For each confirmed reservation booked by whole nodes that holds `node` in its first window not
// over at `now` (started or not): the cluster its agent must run then, with the tenant's keys.
std::vector<ClusterAssignment> DesiredClusters(const ClusterState& st, NodeId node, int64_t now, const ClusterPorts& ports);

// `access` of a reservation: for each node of its current (or next) window, what its agent
// reports running for it: [{node, state, ssh?: {host, port, user}, login_details?, error?}].
// After the last window: that window's nodes, "over" unless an agent still reports on it.
Json ClusterAccessJson(const ClusterState& st, const CapacityReservation& r, int64_t now, const AgentRegistry& agents);

}  // namespace allot
