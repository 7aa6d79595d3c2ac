// The node agent protocol's messages and their JSON, both ways: what an agent sends
// (registration, heartbeat: telemetry, task reports, health, scrubs, the MIG layout it holds)
// and what allotd answers (the tasks a node must run, the MIG layout it must hold). The one
// contract between allot-agent and allotd: both include this and nothing of the other's
// (server/agent_wire.h builds the answers from allotd's state; agent/ reads them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "fleet/fleet.h"
#include "wire/acceptance_messages.h"
#include "wire/cluster_messages.h"

namespace allot {

using Json = nlohmann::json;

// One task as its agent last saw it.
struct TaskReport {
  std::string job;           // name (for people: job_id says which)
  int task = 0;              // index in the job
  int run = 0;               // the allocation epoch the agent was given
  bool exited = false;
  int pid = 0;
  int exit_code = -1;        // -1: killed by a signal (or still running)
  int signal = 0;
  bool oom_killed = false;
  bool time_limit_exceeded = false;
  bool preempted = false;    // it had been told to stop (SIGTERM) before it exited
  std::string reason;        // "exited with code 3", "killed by SIGKILL: memory limit 512 MiB exceeded"
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  // The job's id as its Assignment gave it: names repeat across tenants, ids do not. -1 from an
  // agent older than per-tenant names, which sent the name alone.
  int64_t job_id = -1;
  bool operator==(const TaskReport&) const = default;
  bool succeeded() const { return exited && exit_code == 0 && signal == 0 && !oom_killed && !time_limit_exceeded; }
};

// One task's use of a shared GPU (MPS, time-slice) over the last heartbeat period, and the
// latency it reported (docs/noisy-neighbour.md): what the interference detector reads.
struct TaskGpuActivity {
  int64_t job_id = -1;
  int task = 0;
  int run = 0;
  // From NVML's per-process utilization: the busiest sample of its busiest process, percent.
  // Absent when NVML gave no sample of its processes (idle, or no per-process utilization).
  std::optional<int64_t> sm_percent, memory_percent;
  std::optional<int64_t> p99_us;    // the newest p99 it reported this period, microseconds
  int64_t bad_latency_lines = 0;    // lines of its latency file refused since it started
  bool operator==(const TaskGpuActivity&) const = default;
};

struct GpuTelemetry {
  int index = 0;
  std::string uuid;
  std::optional<int64_t> utilization_percent, memory_used_mib, power_mw, temperature_c, ecc_corrected,
      ecc_uncorrected, retired_pages;
  std::vector<uint64_t> xids;  // seen since the previous heartbeat
  std::vector<TaskGpuActivity> tasks;  // a shared GPU's tasks ("tasks"; absent from older agents)
  bool operator==(const GpuTelemetry&) const = default;
};

struct HealthCheck {
  std::string name;       // "nvml.ecc", "cmd:dcgmi diag -r 1"
  bool ok = true;
  std::string severity;   // of a failure: "software" (reset and recheck) or "hardware" (repair)
  std::string detail;
  bool operator==(const HealthCheck&) const = default;
};

struct HealthReport {
  uint64_t check = 0;     // the check request it answers (0: periodic or at registration)
  bool acceptance = false;
  int64_t at_ms = 0;
  std::vector<HealthCheck> checks;
  bool operator==(const HealthReport&) const = default;
  bool ok() const {
    for (const HealthCheck& c : checks) {
      if (!c.ok) return false;
    }
    return true;
  }
  bool hardware_fault() const {
    for (const HealthCheck& c : checks) {
      if (!c.ok && c.severity == "hardware") return true;
    }
    return false;
  }
  // The failed checks, "name: detail; …".
  std::string Failures() const;
};

// What an agent says of itself when it registers (allotd keeps it in its AgentSession).
struct AgentIdentity {
  std::string address;         // where its tasks reach each other (ALLOT_MASTER_ADDR)
  std::string agent_version;
  std::string driver_version;
  // What of a task's confinement the node lacks ("cpu limit", "device cgroup", …; empty: none);
  // nullopt from an agent that does not say ("isolation" absent).
  std::optional<std::vector<std::string>> isolation_gaps;
};
// POST /v1/agent/register's body (server/agent_wire.h documents and parses it).
Json RegistrationJson(const NodeSpec& spec, const AgentIdentity& agent, const std::vector<Json>& gpus);

// A GPU scrubbed as it passed from one tenant to another (allotd records it in the audit log).
struct ScrubReport {
  int gpu = 0;
  std::string uuid, from, to;
  bool ok = true;
  std::string detail;  // "ok in 3 ms", or why it failed
  bool operator==(const ScrubReport&) const = default;
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
// A service replica's task's load as it last reported it through ALLOT_LOAD_FILE
// (docs/services.md): "loads": [{"job_id", "task", "run", "load_milli"}].
struct TaskLoad {
  int64_t job_id = -1;
  int task = 0;
  int run = 0;
  int64_t load_milli = 0;
  bool operator==(const TaskLoad&) const = default;
};

struct Heartbeat {
  std::string node;
  std::vector<TaskLoad> loads;  // absent from older agents' heartbeats
  std::vector<GpuTelemetry> gpus;
  std::vector<TaskReport> tasks;
  std::optional<HealthReport> health;
  std::vector<ScrubReport> scrubs;
  std::vector<MigGpuLayout> mig;
  std::vector<ClusterReport> clusters;  // dedicated clusters (wire/cluster_messages.h)
  std::vector<AcceptanceReport> acceptance;  // booked nodes' acceptance (wire/acceptance_messages.h)
  bool operator==(const Heartbeat&) const = default;
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
  ShareKind share = ShareKind::kWhole;  // absent from the answer: whole
  std::string mig_profile;        // mig: "3g.40gb"
  int mig_start = 0;              // mig: first memory slice
  int mps_percent = 0;            // mps: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  int64_t mps_memory_mib = 0;     // mps: pinned device memory limit
  // mps: 1..100 while allotd throttles this task as a noisy neighbour (its tenant's MPS server's
  // active thread percentage); 0 none, the share's own percentage applies.
  int mps_throttle_percent = 0;
  int64_t cpu_millis = 0;
  int64_t memory_mib = 0;
  int64_t time_limit_ms = 0;      // 0: none
  // The task's stated GPU memory (`vram:`), MiB; 0: none, left out. On a time-slice share the
  // agent stops the task when its processes use more (agent/node/task_signals.h).
  int64_t vram_mib = 0;
  int64_t started_ms = 0;
  int64_t preempt_deadline_ms = -1;  // ≥ 0: stop now, killed at this time
  std::string master_addr;        // task 0's node address
  // The job's environment (JobEnvironment), each left out of the JSON when empty or zero.
  std::string image;                  // "" none
  struct Mount { std::string tenant, volume, path; bool read_only = false; bool operator==(const Mount&) const = default; };
  std::vector<Mount> mounts;
  std::vector<std::pair<std::string, std::string>> env;  // sorted by name
  int64_t shm_size_mib = 0;           // 0: the sandbox's default
  // An array element's index and frame (ALLOT_ARRAY_INDEX, ALLOT_FRAME); -1: none, left out.
  int32_t array_index = -1;
  int64_t frame = -1;
  bool operator==(const Assignment&) const = default;
  // The task run's one key on the node, "j<job_id>.<task>.r<run>": its cgroup, work and log
  // names. By id, not name: names are unique only within a tenant.
  std::string key() const { return "j" + std::to_string(job_id) + "." + std::to_string(task) + ".r" + std::to_string(run); }
};
// A report on `a`'s task run, naming it (job, job_id, task, run) and nothing else: the agent
// sets how it went by field name.
TaskReport ReportOn(const Assignment& a);
// A digest of an answer's tasks and condition: an agent's long poll waits while it is unchanged.
std::string AssignmentVersion(const Json& desired);
Result<std::vector<Assignment>> ParseAssignments(const Json& body);
// The answer's "mig" (none for a node outside a MIG pool).
Result<std::vector<MigGpuLayout>> ParseDesiredMig(const Json& body);
// An assignment's environment fields ("image", "mounts", "env", "shm_size_mib") into `a`.
Status ReadAssignmentEnvironment(const Json& task, const std::string& path, Assignment& a);

// A name (a job's, a tenant's path) as one safe file name: [A-Za-z0-9._-] kept, the rest as %XX.
std::string SafeFileName(const std::string& name);

}  // namespace allot
