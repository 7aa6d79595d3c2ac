// The node agent protocol's JSON, both ways: what an agent sends (registration, heartbeat) and
// what allotd answers (the tasks a node must run). allotd parses with errors that name the
// field; the agent (agent/) builds and reads the same forms through these functions, so the
// two cannot drift apart.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/agent_registry.h"
#include "server/api_json.h"
#include "state/cluster_state.h"
#include "wire/agent_messages.h"

namespace allot {

// POST /v1/agent/register:
//   {"node", "address", "zone", "rack", "nvlink_domain", "cpu": "64", "memory": "512Gi",
//    "pool": "exclusive|mig|mps|timeslice", "mig_layout": ["3g.40gb", …], "replicas": 4,
//    "oversubscription": "1.5", "agent_version", "driver_version",
//    "labels": {"driver": "550.54.15", "cuda": "9.0", "interconnect": "nvlink", "isolation": "full", …},
//    "isolation": {"gaps": ["cpu limit", "device cgroup", …]}   (what of a task's confinement
//                 the node lacks; absent from older agents),
//    "gpus": [{"index", "uuid", "model": "H100-80GB", "memory_mib", "pci_bus_id", "numa_node",
//              "nvlink_peers": [1, 2, …]}]}
// The node's GPU groups are the connected parts of the NVLink graph (none when one part holds
// every GPU). All GPUs must be of one model.
struct Registration {
  NodeSpec spec;
  AgentSession session;
};
Result<Registration> ParseRegistration(const Json& body);

// POST /v1/agent/heartbeat's body: read straight into a Heartbeat (wire/heartbeat_reader.h)
// when it is a plain heartbeat, else the strict way (ParseStrictJson, then ParseHeartbeat),
// which words every refusal as it always has.
Result<Heartbeat> ReadHeartbeatBody(const std::string& body);
inline Json RegistrationJson(const NodeSpec& spec, const AgentSession& session, const std::vector<Json>& gpus) {
  return RegistrationJson(spec, AgentIdentity{session.address, session.agent_version, session.driver_version, session.isolation_gaps}, gpus);
}

// The topic of `node`'s parked assignment poll (LongPoll::topic): re-run when a batch touched
// the node (Controller::NodesTouchedSince).
inline std::string AssignmentPollTopic(std::string_view node) { return "node:" + std::string(node); }

// The tasks of command jobs placed on `node`, in job id then task order.
Json DesiredTasks(const ClusterState& st, NodeId node, const AgentRegistry& agents);
// The layout of MIG GPU `gpu` in `node`'s pool as the wire names it, and back (a profile the
// geometry lacks is named in the error).
MigGpuLayout MigLayoutWire(const MigGeometry& geo, int gpu, const MigLayout& layout);
Result<MigLayout> MigLayoutFromWire(const MigGeometry& geo, const MigGpuLayout& wire);

// The job an agent's report names, as task `task` on node `here`: the one with `job_id` when
// the agent sent it (and the name agrees); from an agent older than per-tenant names (job_id
// -1), the one job of that name with that task on `here`. An invalid id when there is none (or,
// by name, more than one): a node speaks only for its own tasks.
JobId ReportedJob(const ClusterState& st, NodeId here, const std::string& name, int64_t job_id, int task);

// Where a task's log is kept: DATA/logs/job=<id>/run-<run>/task-<task>.log (by id: two
// tenants' jobs may share a name; no safe name has a '=', so it meets no old directory). A job from before then keeps its logs where they were,
// DATA/logs/<name made safe>/…: only the first job of a name can have written there, since
// names were unique across tenants until per-tenant names came.
std::filesystem::path LogPath(const std::string& log_dir, const ClusterState& st, JobId job, int run, int task);

}  // namespace allot
