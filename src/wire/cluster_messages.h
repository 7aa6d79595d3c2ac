// The dedicated-cluster part of the agent protocol (issue 16): what allotd asks a booked node's
// agent to run for a reservation's window (the assignments' optional "clusters"; an agent older
// than it ignores the field, as JSON readers here ignore unknown fields) and what the agent
// reports it runs (the heartbeat's optional "clusters").
//
//   assignments.clusters[i]: {"reservation", "reservation_id", "window", "tenant", "orchestrator":
//     "none|slurm|hook", "nodes": [...] (the window's booked nodes; the first one is the
//     controller of a cluster over several), "start", "end" (Unix ms), "ssh_port",
//     "slurmctld_port", "slurmd_port", "keys": ["ssh-ed25519 …"], "grace_ms",
//     and for orchestrator slurm, what every booked node's agent needs to write the same
//     slurm.conf (all three absent from an allotd older than them; the agent then runs a Slurm of
//     its own node only):
//     "members": [{"node", "address", "slurmd_port", "gpus", "cpus", "memory_mib"}] (one per
//       entry of "nodes", in its order: where each node's slurmd listens, and what it has),
//     "controller": {"host", "port"} (slurmctld: the first node's address and its slurmctld port),
//     "munge_key": hex (the window's key, the same for all its nodes: a secret, see
//       docs/security.md),
//     "uid": the tenant's uid for the cluster, the same on every node (kClusterUidBase + the
//       tenant's id; absent: the agent takes the tenant's task uid of its node)}
//   heartbeat.clusters[i]: {"reservation", "reservation_id", "window", "state":
//     "starting|running|failed|stopping|stopped", "ssh_host", "ssh_port", "user",
//     "login_details", "error"}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

using Json = nlohmann::json;

// A multi-node Slurm runs as one uid on all its nodes (SlurmUser, the job steps): a node's own task
// uids are handed out per node (agent/run/tenant_uids.h, 200000 up by default) and differ between
// nodes, so allotd gives each tenant's clusters this base plus the tenant's id, above that range.
inline constexpr uint32_t kClusterUidBase = 300000;

// One booked node of a multi-node Slurm, as every node's slurm.conf names it.
struct ClusterMember {
  std::string node;
  std::string address;   // where the other nodes reach it (the address its agent registered)
  int slurmd_port = 0;
  int gpus = 0;
  int cpus = 0;          // 0: unknown (the agent's own --cpu stands in)
  int64_t memory_mib = 0;
  bool operator==(const ClusterMember&) const = default;
};

struct ClusterAssignment {
  std::string reservation;         // its name (unique within its tenant)
  uint32_t reservation_id = 0;     // unique: with `window`, the cluster's key on the node
  int window = 0;
  std::string tenant;              // path
  std::string orchestrator;        // "none", "slurm" or "hook"
  std::vector<std::string> nodes;  // the window's booked nodes, in the order of its holds
  int64_t start_ms = 0, end_ms = 0;
  int ssh_port = 0, slurmctld_port = 0, slurmd_port = 0;
  std::vector<std::string> keys;   // the tenant's registered public keys (wire/ssh_public_key.h)
  int64_t grace_ms = 10000;        // the private Slurm's jobs get this between SIGTERM and SIGKILL
  // A Slurm over the window's nodes (orchestrator slurm, from an allotd that sends them; empty
  // otherwise): every node, slurmctld's host and port, and the shared munge key (raw bytes).
  std::vector<ClusterMember> members;
  std::string controller_host;
  int controller_port = 0;
  std::string munge_key;
  uint32_t uid = 0;                // with members: the cluster's uid on every node; 0: the node's own
  bool operator==(const ClusterAssignment&) const = default;
  // "r<id>w<window>": its directory and its key in reports.
  std::string key() const { return "r" + std::to_string(reservation_id) + "w" + std::to_string(window); }
};
Json ClusterAssignmentsJson(const std::vector<ClusterAssignment>& clusters);
// The answer's "clusters" (none when absent); errors name the field.
Result<std::vector<ClusterAssignment>> ParseClusterAssignments(const Json& body);

struct ClusterReport {
  std::string reservation;
  uint32_t reservation_id = 0;
  int window = 0;
  std::string state;               // starting, running, failed, stopping, stopped
  std::string ssh_host;            // "" while there is no sshd (no keys, or not started)
  int ssh_port = 0;
  std::string user;                // the login name on the node
  std::string login_details;       // the private Slurm's (LoginDetails) or the hook's stdout
  std::string error;               // why it failed, or what went wrong stopping it
  bool operator==(const ClusterReport&) const = default;
};
Json ClusterReportsJson(const std::vector<ClusterReport>& reports);
Result<std::vector<ClusterReport>> ParseClusterReports(const Json& heartbeat);

}  // namespace allot
