// The node agent's task runner: starts each assigned task as an isolated process (its own cgroups
// with the task's cpu, memory and pids limits; allot's own sandbox or bubblewrap's; the tenant's
// own uid), and
// reports how each one ended — exit code or signal, OOM kill, time limit, preemption.
//
// Single-threaded by contract: one thread owns a Runner and calls Poll often (every ~100 ms).
// Poll reaps ended tasks and is also where time limits and preemption deadlines are enforced, so
// a deadline is late by at most the polling interval. The thread that calls Start must live as
// long as the tasks: a sandbox's death with its parent (bwrap's --die-with-parent, allot's own
// PR_SET_PDEATHSIG) fires when the *thread* that cloned it exits.
//
// Preemption: Preempt(key, deadline) writes the task's preempt file — one line, the deadline in
// unix milliseconds ("1732265123456\n") — then sends SIGTERM to every process of the task (not
// to bwrap or allot-init, whose death kills the task at once). A task that
// checkpoints and exits is reported preempted with its own exit code; one still running at the
// deadline is SIGKILLed with everything it started.
//
// A task's lifetime is its first process's: when it exits, whatever it left running in its
// cgroup is killed. The emptied cgroup is kept for a later task asking for the same limits (the
// same cpu, memory, pids and devices), which runs in it as it is: making and removing a task's
// cgroups (five directories on a hybrid host, each made, written and removed by the kernel) was
// the largest part of the agent's own work per short task. A kept cgroup keeps the name of the
// task that made it; at most kMaxSpareCgroups are kept, and the rest removed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/run/cgroup_layout.h"
#include "agent/run/sandbox.h"
#include "agent/run/task_cgroup.h"
#include "agent/run/spawn.h"
#include "agent/run/spawn_threads.h"
#include "agent/run/task_launch.h"
#include "agent/run/tenant_uids.h"
#include "core/status.h"

namespace allot {

struct RunnerOptions {
  std::string work_root;                    // tenants' directories live below; hidden in sandboxes
  std::vector<std::string> hidden_roots;    // also hidden (e.g. a checkpoint root on shared storage)
  // Where image tasks' overlay roots are mounted, one directory per task (image_root.h); must
  // be outside work_root. Default: <work_root>/../roots.
  std::string roots_dir;
  SandboxMode sandbox = SandboxMode::kAuto;
  std::string bwrap_path = "/usr/bin/bwrap";
  // allot's own sandbox's pid 1 (src/agent/init); "": allot-init beside the running executable.
  std::string init_path;
  std::string cgroup_group = "allot";       // tasks' cgroups: <own>/<group>/<key>
  std::optional<CgroupLayout> cgroups;      // default: DetectCgroups(); tests inject a fake root
  UidRange uids;                            // tenants' uids, when the agent runs as root
  // Confine each task's devices with a device cgroup (when root and the kernel offers one).
  bool confine_devices = true;
  std::function<int64_t()> clock;           // wall ms; default: the system clock
};

class Runner {
 public:
  // Emptied task cgroups kept for reuse at most (one per GPU slot and limit shape is what pays).
  static constexpr size_t kMaxSpareCgroups = 64;
  // Threads that clone a batch's children beside the caller's (StartAll): a node's GPUs' worth.
  static constexpr size_t kSpawnThreads = 7;

  // Detects what this machine offers and says so once (description()). Refuses only what cannot
  // work at all: no work root, sandbox mode bwrap without bwrap or native without root, allot-init
  // or a recent enough kernel, an unreadable uid file. Cgroups that cannot be written mean tasks
  // run without limits (limits_enforced() is false).
  static Result<std::unique_ptr<Runner>> Create(RunnerOptions options);
  ~Runner();  // kills and reaps every task still running
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Starts the task; its pid (bwrap's or allot-init's when sandboxed). Fails naming the field or the step: an
  // invalid or duplicate key, a missing command, a refused cgroup write, a failed uid drop.
  Result<pid_t> Start(const TaskLaunch& launch);
  // Starts several tasks at once, each as Start would. Each one's pid or error, in order. The
  // children are cloned together, by the calling thread and the runner's own threads (which live
  // as long as the runner), each thread waiting for its child's exec (spawn.h): a cgroup join
  // waits for an RCU grace period (5-15 ms on the 2-core build machine), and joins made together
  // share one. Without wait_for_exec a child that failed before its exec (a refused
  // cgroup join, a uid drop) ends as a task that exited with code 127, "could not start: <the
  // step>", reported by Poll; with it, the failure is this call's error.
  std::vector<Result<pid_t>> StartAll(const std::vector<TaskLaunch>& launches, bool wait_for_exec = true);
  // Tasks that ended since the last call (never blocks); enforces limits and deadlines.
  std::vector<TaskExit> Poll();
  // See the file comment. NotFound for a key not running.
  Status Preempt(const std::string& key, int64_t deadline_ms);
  // Kills the task's whole tree now; Poll reports it with "killed: <reason>".
  Status Kill(const std::string& key, const std::string& reason);
  std::vector<std::string> Running() const;

  bool limits_enforced() const { return limits_enforced_; }
  // Whether each task's device cgroup allows only its own devices (device_cgroup.h).
  bool devices_confined() const { return confine_devices_; }
  bool sandboxed() const { return sandbox_ != SandboxKind::kNone; }
  SandboxKind sandbox() const { return sandbox_; }
  // True when tasks run as their tenant's uid (the agent is root); else as the agent's user.
  bool per_tenant_users() const { return uids_.has_value(); }
  // The uid (and gid) the tenant's tasks run as, assigned on first use; FailedPrecondition when
  // tasks run as the agent's user (not root). A dedicated cluster's daemons run as it too.
  Result<uint32_t> TenantUid(const std::string& tenant);
  const std::string& description() const { return description_; }
  // What of a task's confinement this node lacks, in words allotd shows ("cpu limit", "device
  // cgroup", "sandbox", "tenant uids", …); empty when tasks are confined in every way.
  std::vector<std::string> IsolationGaps() const;
  // The task's cgroup directories (v2 first); empty without cgroups. NotFound if not running.
  Result<std::vector<std::string>> CgroupDirs(const std::string& key) const;
  // The task's processes (host pids, the sandbox's own left out). NotFound if not running.
  Result<std::vector<pid_t>> Pids(const std::string& key) const;

 private:
  enum class Cause { kNone, kOom, kTimeLimit, kPreemptDeadline, kKilled };
  struct Task {
    TaskLaunch launch;
    pid_t pid = -1;
    std::optional<TaskCgroup> cgroup;
    std::string cgroup_name;        // its directories' name: this task's key, or a kept one's
    CgroupLimits limits;            // what its cgroup was written with
    std::string root_scratch;       // an image task's overlay root and its layers; removed after
    int64_t started_ms = 0;
    int64_t oom_checked_ms = 0;     // when Poll last read its OOM counter (the runner's clock)
    bool preempted = false;
    bool term_sent = false;         // false while Preempt found no process of the task to signal
    int64_t deadline_ms = -1;
    Cause cause = Cause::kNone;
    std::string kill_reason;
    // Started without waiting for its exec (StartAll): the spawn's report pipe until Poll or
    // Finish reads it, its plan (for the failed step's text), and why it could not start.
    int exec_report_fd = -1;
    std::shared_ptr<const SpawnPlan> plan;
    std::string start_error;
  };
  // Reads a started task's exec report once it is there (or, with block, waits for it).
  void CheckExec(Task& task, bool block);

  explicit Runner(RunnerOptions options) : options_(std::move(options)) {}
  Status CheckLaunch(const TaskLaunch& launch) const;
  // Everything Start does before the fork: the task (its cgroup made, its image root mounted)
  // and how to spawn it. Undone by Abandon when the spawn fails.
  struct Prepared {
    Task task;
    SpawnPlan plan;
  };
  Result<Prepared> Prepare(const TaskLaunch& launch);
  void Abandon(Task& task);
  // Mounts an image task's root with every mount point `spec` binds onto; its path.
  Result<std::string> MountRoot(const TaskLaunch& launch, const SandboxSpec& spec, Task& task) const;
  // The task's processes, the sandbox's own (bwrap's two, allot-init) left out.
  std::vector<pid_t> TaskPids(const Task& task) const;
  // True when the task's cgroup is known empty afterwards (false without one).
  bool KillTree(Task& task);
  // A kept cgroup written with `limits`, if there is one, taken out of the spares. A spare
  // named `key` is never left among them: the new task's own would be the same directories.
  std::optional<std::pair<std::string, TaskCgroup>> TakeSpareCgroup(const CgroupLimits& limits, const std::string& key);
  // Removes `cg`, or keeps it for a retry when the kernel refuses.
  void RemoveCgroup(TaskCgroup cg);
  // SIGTERM to the task's processes; false when there were none yet (still inside the sandbox's set-up).
  bool SendTerm(const Task& task) const;
  // Kills what the task left, reaps it, removes its cgroup. REQUIRES: HasExited(task).
  TaskExit Finish(Task& task);
  // Whether the task's first process has exited (not yet reaped), waiting up to grace_ms.
  bool HasExited(const Task& task, int64_t grace_ms) const;

  RunnerOptions options_;
  CgroupLayout layout_;
  bool limits_enforced_ = false;
  CgroupControllers controllers_;  // the limits the cgroups carry (PrepareCgroupGroup)
  bool confine_devices_ = false;
  SandboxKind sandbox_ = SandboxKind::kNone;
  int init_fd_ = -1;               // allot-init (O_PATH), with the native sandbox
  std::string stage_dir_;          // the native sandbox's tmpfs root, when it needs one
  bool host_proc_driver_ = false;  // /proc/driver exists here, so a sandbox can cover it
  std::vector<RootEntry> host_root_;  // "/" as sandboxes on the host's root show it
  std::optional<TenantUids> uids_;
  std::string description_;
  std::map<std::string, Task> tasks_;
  std::vector<TaskCgroup> leftover_cgroups_;  // removal failed; retried every Poll
  // Empty task cgroups kept for the next task with the same limits (the file comment), oldest
  // first.
  struct SpareCgroup {
    std::string name;
    CgroupLimits limits;
    TaskCgroup cgroup;
  };
  std::vector<SpareCgroup> spare_cgroups_;
  // The names of the cgroups tasks hold (started or starting). A new task's own cgroup takes its
  // key as its name unless a task holds that name (a kept one it was given): then "<key>~<n>".
  std::set<std::string> cgroup_names_held_;
  uint64_t cgroup_serial_ = 0;
  // Each distinct GPU set's device program, verified once and attached to each of its tasks.
  DeviceProgramCache device_programs_;
  // Clone a batch's children together (StartAll); the tasks' parents, so they outlive them.
  SpawnThreads spawn_threads_{kSpawnThreads};
};

}  // namespace allot
