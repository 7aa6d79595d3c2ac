// allot-agent: one per node. It registers the node's GPUs with allotd, heartbeats telemetry,
// task reports and health, takes its assignments by long poll, and reconciles them with what
// runs: starts assigned tasks (Runner: cgroups, sandbox, the tenant's uid), signals the ones
// being preempted, kills the ones no longer assigned, ships their logs, and scrubs a GPU before
// it passes to another tenant.
//
// Fencing: allotd declares a node lost after its timeout and requeues its jobs elsewhere. The
// agent stops every task once its lease (shorter than the timeout) passes without an answered
// heartbeat, so a cut-off node never runs a job at the same time as its replacement; when it
// reaches allotd again it registers afresh (which requeues anything the node still held). An
// agent that cannot act (stopped, hung, killed) is covered by its watchdog process
// (agent/run/watchdog.h), and a restarted agent first clears what its previous run left
// (agent/node/leftovers.h).
//
// Threads: the caller's thread runs Run() — the runner, heartbeats and logs — and owns every
// task process; one more thread holds the long poll for assignments.
#pragma once

#include <atomic>
#include <future>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fleet/labels.h"
#include "agent/gpu_backend.h"
#include "agent/node/acceptance_runs.h"
#include "agent/node/dedicated_clusters.h"
#include "agent/node/health.h"
#include "agent/node/mig_layout_sync.h"
#include "agent/node/task_signals.h"
#include "agent/run/driver_files.h"
#include "agent/run/image_root.h"
#include "agent/run/mps_control.h"
#include "agent/run/runner.h"
#include "agent/run/watchdog.h"
#include "wire/agent_messages.h"

namespace httplib {
class Client;
}

namespace allot {

struct AgentOptions {
  std::string server = "http://127.0.0.1:7070";
  std::string token;
  std::string ca_cert;                 // for an https server with its own CA
  std::string node;                    // default: the host name
  std::string address;                 // where its tasks reach task 0 (default: the node name)
  std::string zone = "default";
  std::string rack = "default";
  NodeLabels labels;                   // --label NAME=VALUE: the operator's, over what NVML reports
  Sharing pool = Sharing::kExclusive;  // how its GPUs are handed out
  std::vector<std::string> mig_layout; // mig: each GPU's initial layout
  // mig: how long a task waits for its planned instance to exist before it fails.
  int64_t mig_wait_ms = 60000;
  std::string cpu;                     // default: the cores online
  std::string memory;                  // default: MemTotal
  std::string work_dir = "./allot-agent";
  // Where tasks' checkpoint directories live (default <work_dir>/checkpoints); shared storage
  // lets a job resume on another node. Hidden from other tenants' tasks either way.
  std::string checkpoint_root;
  RunnerOptions runner;                // work_root is set to <work_dir>/tenants
  DriverRoots driver;                  // the host's NVIDIA device nodes and driver proc tree
  std::string ldconfig = "/sbin/ldconfig";  // lists the driver's libraries (`-p`)
  std::string umoci = "umoci";         // unpacks OCI images
  std::string storage_root;            // tenants' volumes: <root>/<tenant>/<volume>; "" none
  std::string mps_control = "nvidia-cuda-mps-control";
  std::string mps_pipe_dir = MpsOptions{}.pipe_root;  // the GPUs' MPS pipe directories go under it
  std::vector<std::string> scrub_command;  // empty: no scrub step
  int64_t scrub_timeout_ms = 120000;
  HealthOptions health;
  // Operator diagnostics a booked node runs, besides its health checks, when allotd asks for its
  // acceptance before a reservation's window (agent/node/acceptance_runs.h).
  std::vector<std::string> acceptance_commands;
  int64_t check_interval_ms = 300000;  // configured commands, besides registration and on demand
  int64_t pids_max = 4096;             // per task
  // Whether tasks see the network: "gang" (only tasks of multi-task jobs, which must reach each
  // other), "all" or "none".
  std::string network = "gang";
  int64_t poll_wait_s = 20;
  // Dedicated clusters (agent/node/dedicated_clusters.h): the hook orchestrator's executable
  // ("" refuses it), and the address its sshd listens on.
  std::string provision_hook;
  std::string cluster_listen = "0.0.0.0";
  // Where clusters' directories go (default <work_dir>/clusters); short, since munged's and
  // slurmstepd's Unix sockets live under it (107 bytes).
  std::string cluster_dir;
  std::function<void(const std::string&)> log;  // default: stderr
};

class NodeAgent {
 public:
  NodeAgent(AgentOptions options, std::unique_ptr<GpuBackend> gpus);
  ~NodeAgent();

  // Discovers the GPUs, prepares the work directory and the runner. Fails naming what is wrong
  // (no NVML: the agent will not register GPUs; a work directory it cannot write).
  Status Init();
  // Registers, then serves until Stop(). Returns the reason it stopped.
  Status Run();
  void Stop() { stopping_ = true; }

 private:
  struct Local {                 // a task this agent started for the current assignment
    Assignment a;
    std::string key;
    std::string log_path;
    uint64_t shipped = 0;        // log bytes allotd has
    std::optional<TaskReport> exit;
    bool reported = false;       // allotd has had its exit in an answered heartbeat
    bool preempt_sent = false;
    LatencyFile latency;         // its latency reports (agent/node/task_signals.h)
    LoadFile load;               // a service replica's load reports (docs/services.md)
    int throttle_applied = 0;    // the MPS throttle last applied (0: its own percentage)
    int64_t next_throttle_try = 0;
  };

  Status Register();
  void PollLoop();
  void Reconcile(int64_t now);
  // A task ready for the runner: everything StartTask prepared, started with the others of the
  // same Reconcile by LaunchTasks (the runner's StartAll: their set-ups overlap).
  struct Starting {
    Local local;
    TaskLaunch launch;
  };
  Status StartTask(const Assignment& a, int64_t now, std::vector<Starting>& ready);
  void LaunchTasks(std::vector<Starting> ready, int64_t now);
  // Quits each tenant's MPS daemon on a GPU where none of the tenant's tasks runs any more.
  void StopIdleMpsDaemons();
  // The uid a tenant's tasks run as, whose MPS daemon they use: its own as root, else the
  // agent's (every task runs as the agent then, one daemon a GPU serves them all).
  Result<uint32_t> MpsUid(const std::string& tenant);
  // Records a task that could not start as exited (exit code 127, "could not start: why").
  void StartFailed(Local local, const std::string& why, int64_t now);
  void Reap(int64_t now);
  void Heartbeat(int64_t now);
  // Sends each task's new output to allotd, a chunk (256 KiB) a task; with `ended_in_full`, an
  // ended task's up to 8 MiB, so the exit reported next comes after its last words.
  void ShipLogs(int64_t now, bool ended_in_full = false);
  // A shared GPU's tasks, their utilization and reported latency, into its telemetry.
  void AddTaskActivity(const std::vector<GpuSample>& samples, std::vector<GpuTelemetry>& gpus);
  // Stops each time-slice task whose processes use more GPU memory than its stated vram
  // (VramOverrun, agent/node/task_signals.h): reported failed with that reason.
  void EnforceVram(const std::vector<GpuSample>& samples);
  // MPS: the tenant's server to the assignment's throttle percentage, or back to its own.
  void ApplyThrottle(Local& t, const Assignment& a, int64_t now);
  // A client for calls on Run()'s thread that gives up when the lease would run out: a
  // connection allotd never answers (a partition that drops packets) must not hold the loop
  // past the lease, or the node would fence after allotd had already run its jobs elsewhere.
  std::unique_ptr<httplib::Client> LeaseClient(int64_t now) const;
  // The same limits on a client kept between heartbeats (one keep-alive connection instead of a
  // new one per beat: a heartbeat goes out after every exit).
  void LimitToLease(httplib::Client& client, int64_t now) const;
  std::unique_ptr<httplib::Client> heartbeat_client_;  // dropped after a failed call
  void Fence(const std::string& why);
  // Fences when the lease ran out by `now` (unfenced); whether it did.
  bool FenceIfLeaseLapsed(int64_t now);
  // allotd answered at `at` (wall ms): the lease runs from there, and so does the watchdog's deadline.
  void Renewed(int64_t at);
  // Refuses a --work-dir or --checkpoint-root the tenants' uids cannot reach (when root).
  Status CheckTaskDirsReachable(const std::string& work_root) const;
  HealthReport Check(uint64_t check, bool acceptance, bool commands);
  // Runs the configured commands beside the loop; CollectChecks turns their result (with an NVML
  // sample) into the next heartbeat's health report.
  void StartChecks(uint64_t check, bool acceptance);
  void CollectChecks(int64_t now);
  // MIG: brings the node to allotd's planned layout. False while task `a` must wait for its
  // instance (a task past mig_wait_ms goes on, to fail in Devices naming what is missing).
  bool MigReadyFor(const Assignment& a, int64_t now);
  // A task's GPUs: the UUIDs it is told (the GPU's, or the node's MIG instance the plan names) and
  // the device nodes it is given.
  struct TaskDevices {
    std::vector<std::string> uuids;
    std::vector<TaskGpu> gpus;
  };
  Result<TaskDevices> Devices(const Assignment& a);
  void Log(const std::string& line) const;

  AgentOptions options_;
  std::unique_ptr<GpuBackend> gpus_;
  GpuInventory inventory_;
  std::string driver_params_;   // the host's driver params with ModifyDeviceFiles: 0, or ""
  DriverFiles driver_files_;    // bound into image tasks' roots
  std::unique_ptr<ImageCache> images_;
  std::set<std::string> image_waits_;   // tasks told (in the log) that their image is unpacking
  std::unique_ptr<Runner> runner_;
  std::unique_ptr<MpsControl> mps_;
  std::unique_ptr<MigLayoutKeeper> mig_;   // a MIG pool's node: holds the planned layout
  std::map<std::string, int64_t> mig_waits_;  // by task key: since when it waits for its instance
  std::atomic<bool> stopping_{false};

  std::mutex desired_mu_;
  std::optional<std::vector<Assignment>> desired_;  // the newest answer, under desired_mu_
  std::vector<MigGpuLayout> desired_mig_;            // its MIG layouts, under desired_mu_
  std::string desired_condition_;
  std::vector<ClusterAssignment> desired_clusters_;  // under desired_mu_
  std::unique_ptr<DedicatedClusters> clusters_;      // reservations' dedicated clusters on this node
  std::vector<AcceptanceAsk> desired_acceptance_;    // under desired_mu_
  std::unique_ptr<AcceptanceRuns> acceptance_;       // booked nodes' acceptance runs
  std::thread poller_;

  std::map<std::string, Local> tasks_;   // by key: running, or exited and not yet forgotten
  // Whose tasks used a GPU's memory since it was last scrubbed, by (GPU index, memory slice):
  // slice -1 for the whole GPU (a whole, MPS or time-sliced task, or a dedicated cluster), a MIG
  // instance's memory slices for its task (a slice without an entry was last the whole GPU's
  // users'). One tenant after a scrub; several where a shared GPU passed on unscrubbed because
  // another tenant's task still ran on it (each of them must be scrubbed away before it is
  // another tenant's alone).
  std::map<std::pair<int, int>, std::set<std::string>> used_by_;
  // A tenant other than `tenant` whose task used the memory a task on GPU `g` gets (the whole
  // GPU, or MIG instance `mig`'s slices) since it was last scrubbed, or "" when none.
  std::string PreviousTenant(int g, const MigGpuInstanceInfo* mig, const std::string& tenant) const;
  // That memory is `tenant`'s from now on: alone (scrubbed, or no one else's), or beside the
  // others' (`keep_others`: passed on unscrubbed).
  void MarkUsedBy(int g, const MigGpuInstanceInfo* mig, const std::string& tenant, bool keep_others = false);
  // The tenants with a task still running on GPU `g` (started, or starting in this round:
  // `ready`), in name order.
  std::vector<std::string> RunningOn(int g, const std::vector<Starting>& ready) const;
  int64_t lease_ms_ = 10000;
  int64_t heartbeat_ms_ = 1000;
  int64_t last_heartbeat_ok_ = 0;
  int64_t next_heartbeat_ = 0;
  int64_t next_command_check_ = 0;
  bool fenced_ = false;
  bool must_register_ = true;
  uint64_t checks_done_ = 0;
  std::optional<HealthReport> pending_health_;
  std::future<std::vector<HealthCheck>> checks_;  // command checks running
  uint64_t running_check_ = 0, queued_check_ = 0;
  bool running_acceptance_ = false, queued_acceptance_ = false;
  bool acceptance_pending_ = false;  // registered, acceptance report not yet made
  std::vector<ScrubReport> scrubs_;  // done since the last answered heartbeat
  std::unique_ptr<Watchdog> watchdog_;  // kills the tasks if this process stops answering (watchdog.h)

  // Run()'s loop sleeps at most a tick, and wakes at once when the poller has a new answer or a
  // task's process exits, so an assignment starts and an exit is told without waiting a tick.
  void WaitForWork(int64_t max_ms);
  void Wake();
  int wake_fd_ = -1;                     // an eventfd the poller writes
  std::map<std::string, int> exit_fds_;  // by task key: its process's pidfd (readable once it exits)
};

// The host's cores ("16") and memory ("64Gi") as the registration states them.
std::string HostCpus();
std::string HostMemory();

}  // namespace allot
