// What allotd knows about its node agents beyond the journal: when each last heartbeated, its
// latest telemetry and health report, and what its tasks did. Kept in memory only — it is
// rebuilt within one heartbeat after a restart — so none of it is replayed. What it implies
// for the state (a node lost, a job finished or failed) goes through the Controller as events.
//
// Task reports carry the job's run (the allocation epoch: how many runs the job had before this
// one). A report of an older run is stale — the job was requeued since, perhaps while the
// agent was cut off — and changes nothing.
//
// Thread-safe: API threads and the supervisor share one registry.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "state/cluster_state.h"
#include "wire/agent_messages.h"

namespace allot {

struct AgentSession {
  std::string node;
  std::string address;        // where its tasks reach each other (ALLOT_MASTER_ADDR)
  std::string agent_version;
  std::string driver_version;
  std::optional<std::vector<std::string>> isolation_gaps;  // AgentIdentity's
  std::vector<std::string> gpu_uuids;  // by index
  int64_t registered_ms = 0;
  int64_t last_heartbeat_ms = 0;
  std::vector<GpuTelemetry> gpus;
  std::vector<TaskReport> tasks;       // as of the last heartbeat
  uint64_t check_requested = 0;        // the newest on-demand check asked for
  std::optional<HealthReport> health;  // the newest report
  std::vector<ClusterReport> clusters;  // dedicated clusters, as of the last heartbeat
  std::vector<AcceptanceReport> acceptance;  // booked nodes' acceptance runs, as of the last heartbeat
  // Xid errors reported per GPU index since the session began (heartbeats carry those seen since
  // the one before): the allot_gpu_xid_errors_total counter.
  std::map<int, uint64_t> xid_total;
};

class AgentRegistry {
 public:
  // A (re-)registration: a fresh session, heard from now.
  void Registered(AgentSession session, int64_t now_ms);
  // A heartbeat: telemetry and the tasks as the agent sees them, each naming its job by id
  // (a report without one is not kept as an exit). False when the node has no session (it must
  // register first). After a restart the session Expect made is renewed by it: an agent that
  // kept its lease goes on without registering again (which would requeue its node's jobs); its
  // identity (address, versions, GPU UUIDs) is unknown until it next registers.
  bool Heartbeat(const std::string& node, int64_t now_ms, std::vector<GpuTelemetry> gpus, std::vector<TaskReport> tasks);
  // The dedicated clusters the node says it runs (or ran), as of this heartbeat.
  void Clusters(const std::string& node, std::vector<ClusterReport> clusters);
  // The acceptance runs the node reports for reservations' windows (daemon/acceptance_supervisor.h).
  void Acceptance(const std::string& node, std::vector<AcceptanceReport> reports);
  // Records a health report; returns the session's health before it (for transitions).
  std::optional<HealthReport> Health(const std::string& node, HealthReport report);
  // Asks the node's agent for a health check; returns its number (0 when there is no session).
  uint64_t RequestCheck(const std::string& node);
  std::optional<AgentSession> Get(const std::string& node) const;
  // Parts of a session without copying it (Get copies its telemetry and tasks; these are asked
  // per heartbeat and per assignment answer, at thousands a second): the address its tasks reach
  // each other at ("" when unknown) and the newest on-demand check asked for (0: none).
  std::string Address(const std::string& node) const;
  uint64_t CheckRequested(const std::string& node) const;
  // Calls fn(session) for every session, under the registry's lock: fn must be quick and must not
  // call the registry.
  template <class F>
  void Visit(F&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [name, s] : sessions_) fn(s);
  }
  // Every session, by node name (metrics).
  std::vector<AgentSession> All() const;
  // Nodes with a session whose last heartbeat is older than now - timeout.
  std::vector<std::string> Overdue(int64_t now_ms, int64_t timeout_ms) const;
  // After a restart: every agent-managed node is given until now + timeout to heartbeat.
  void Expect(const std::string& node, int64_t now_ms);
  struct TaskExit {
    TaskReport report;
    std::string node;
  };
  // The exited tasks of a job's run so far, by task index, from whichever agents ran them.
  std::map<int, TaskExit> ExitsOf(JobId job, int run) const;
  // Drops what is kept of the job's runs up to `run` (its outcome is decided, or it is stale).
  void Forget(JobId job, int run);

 private:
  mutable std::mutex mu_;
  std::map<std::string, AgentSession> sessions_;
  // Exits by (job, run, task): kept until the job's outcome is decided (a gang's tasks end on
  // several nodes, in several heartbeats).
  std::map<std::tuple<uint32_t, int, int>, TaskExit> exits_;  // by (job id, run, task)
};

// What the exited tasks of one job's current run mean for the state, if anything yet:
//   a task failed (not while being preempted)       → JobFailed naming the task, node and why
//   every task exited after a preemption signal     → JobStopped (work saved by its checkpoints)
//   every task exited successfully                  → JobFinished
// Exits of another run, or of a job no longer holding resources, yield nothing.
std::optional<EventBody> JobOutcome(const ClusterState& st, JobId job, int run,
                                    const std::map<int, AgentRegistry::TaskExit>& exits, int64_t now_ms);

// The run index (allocation epoch) of a job holding resources: how many runs it had before.
inline int CurrentRun(const Job& j) { return static_cast<int>(j.ended_runs.size()); }

}  // namespace allot
