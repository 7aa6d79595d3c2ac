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

namespace allot {

// POST /v1/agent/register:
//   {"node", "address", "zone", "rack", "nvlink_domain", "cpu": "64", "memory": "512Gi",
//    "pool": "exclusive|mig|mps|timeslice", "mig_layout": ["3g.40gb", …], "replicas": 4,
//    "oversubscription": "1.5", "agent_version", "driver_version",
//    "gpus": [{"index", "uuid", "model": "H100-80GB", "memory_mib", "pci_bus_id", "numa_node",
//              "nvlink_peers": [1, 2, …]}]}
// The node's GPU groups are the connected parts of the NVLink graph (none when one part holds
// every GPU). All GPUs must be of one model.
struct Registration {
  NodeSpec spec;
  AgentSession session;
};
Result<Registration> ParseRegistration(const Json& body);
Json RegistrationJson(const NodeSpec& spec, const AgentSession& session, const std::vector<Json>& gpus);

// A GPU scrubbed as it passed from one tenant to another (allotd records it in the audit log).
struct ScrubReport {
  int gpu = 0;
  std::string uuid, from, to;
  bool ok = true;
  std::string detail;  // "ok in 3 ms", or why it failed
};

// One MIG GPU's layout, as allotd plans it (assignments) and as the node holds it (heartbeat):
// {"gpu": 0, "instances": [{"profile": "3g.40gb", "start": 0}, …]}. GPU: the node's GPU index
// as assignments use it; profiles as fleet/mig.h names them; instances by start.
struct MigGpuLayout {
  struct Instance {
    std::string profile;
    int start = 0;
    auto operator<=>(const Instance&) const = default;
  };
  int gpu = 0;
  std::vector<Instance> instances;
  bool operator==(const MigGpuLayout&) const = default;
};
Json MigLayoutsJson(const std::vector<MigGpuLayout>& layouts);

// POST /v1/agent/heartbeat: {"node", "gpus": [GpuTelemetry], "tasks": [TaskReport],
// "health": HealthReport (optional), "scrubs": [ScrubReport] (since the last answered one),
// "mig": [MigGpuLayout] (a MIG node: what it holds)}.
struct Heartbeat {
  std::string node;
  std::vector<GpuTelemetry> gpus;
  std::vector<TaskReport> tasks;
  std::optional<HealthReport> health;
  std::vector<ScrubReport> scrubs;
  std::vector<MigGpuLayout> mig;
};
Result<Heartbeat> ParseHeartbeat(const Json& body);
// One GPU's reading as a heartbeat carries it (and GET /v1/nodes/{name} shows it): absent
// readings are left out, not zero.
Json GpuTelemetryJson(const GpuTelemetry& g);
Json HeartbeatJson(const Heartbeat& hb);

// GET /v1/agent/assignments: {"node", "condition", "tasks": [Assignment], "version"}, and for a
// MIG node "mig": [MigGpuLayout], each GPU's planned layout, which the agent holds. A task of
// a job with an environment also has "image", "mounts": [{"tenant", "volume", "path",
// "read_only"}], "env": {"NAME": "value"} and "shm_size_mib" (server/job_environment_json.h).
struct Assignment {
  std::string job;
  uint32_t job_id = 0;
  int run = 0;                    // the allocation epoch
  int task = 0;
  int world_size = 1;
  std::string tenant;
  std::vector<std::string> command;
  std::vector<int> gpus;          // GPU indices on the node (whole GPUs, or the one a share is on)
  std::string share;              // "whole", "mig", "mps", "timeslice"
  std::string mig_profile;        // mig: "3g.40gb"
  int mig_start = 0;              // mig: first memory slice
  int mps_percent = 0;            // mps: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  int64_t mps_memory_mib = 0;     // mps: pinned device memory limit
  int64_t cpu_millis = 0;
  int64_t memory_mib = 0;
  int64_t time_limit_ms = 0;      // 0: none
  int64_t started_ms = 0;
  int64_t preempt_deadline_ms = -1;  // ≥ 0: stop now, killed at this time
  std::string master_addr;        // task 0's node address
  // The job's environment (JobEnvironment), each left out of the JSON when empty or zero.
  std::string image;                  // "" none
  struct Mount { std::string tenant, volume, path; bool read_only = false; bool operator==(const Mount&) const = default; };
  std::vector<Mount> mounts;
  std::vector<std::pair<std::string, std::string>> env;  // sorted by name
  int64_t shm_size_mib = 0;           // 0: the sandbox's default
  bool operator==(const Assignment&) const = default;
  std::string key() const { return job + "." + std::to_string(task) + ".r" + std::to_string(run); }
};
// The tasks of command jobs placed on `node`, in job id then task order.
Json DesiredTasks(const ClusterState& st, NodeId node, const AgentRegistry& agents);
// A digest of an answer's tasks and condition: an agent's long poll waits while it is unchanged.
std::string AssignmentVersion(const Json& desired);
Result<std::vector<Assignment>> ParseAssignments(const Json& body);
// The answer's "mig" (none for a node outside a MIG pool).
Result<std::vector<MigGpuLayout>> ParseDesiredMig(const Json& body);
// The layout of MIG GPU `gpu` in `node`'s pool as the wire names it, and back (a profile the
// geometry lacks is named in the error).
MigGpuLayout MigLayoutWire(const MigGeometry& geo, int gpu, const MigLayout& layout);
Result<MigLayout> MigLayoutFromWire(const MigGeometry& geo, const MigGpuLayout& wire);

// A name (a job's, a tenant's path) as one safe file name: [A-Za-z0-9._-] kept, the rest as %XX.
std::string SafeFileName(const std::string& name);
// DATA/logs/<job>/run-<run>/task-<task>.log, the job's name made safe for a path.
std::filesystem::path LogPath(const std::string& log_dir, const std::string& job, int run, int task);

}  // namespace allot
