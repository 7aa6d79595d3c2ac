// The node's watchdog: a small child process the agent forks at start-up that kills the agent's
// tasks once the agent can no longer answer for them, so that no task runs past its agent's lease.
//
// Why a process: the agent fences its own tasks when its lease runs out (NodeAgent), but a stopped
// (SIGSTOP) or hung agent runs no code at all, and bubblewrap's --die-with-parent covers only an
// agent that dies, and only sandboxed tasks. The agent and the watchdog share one anonymous
// MAP_SHARED page; the agent stores its lease deadline there (the last answered heartbeat + the
// lease, wall ms) each time allotd answers. Every ~100 ms the watchdog reads it:
//   - past the deadline, once per deadline: it kills every task cgroup of the agent's group
//     (SweepGroup: cgroup.kill, or freeze + SIGKILL + thaw in pure v1) and says so on the agent's
//     stderr. The agent, when it resumes, finds its lease gone, fences (its tasks are already
//     dead; the runner reaps them) and registers again;
//   - the agent dead (PR_SET_PDEATHSIG wakes it, getppid confirms): it kills the tasks, removes
//     their cgroups, and exits. This is what stops unsandboxed tasks (--sandbox none) with their
//     agent.
// It leads its own process group, so a SIGSTOP sent to the agent (or to the agent's group) does
// not stop it. allotd declares a node lost only after its node timeout, 1.5 leases, so the
// watchdog has half a lease to act before the job may start elsewhere.
//
// Limits: tasks are found through their cgroups, so where cgroups are not writable there is no
// watchdog (the agent says so); a watchdog that is itself killed is not restarted.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "agent/run/cgroup_layout.h"
#include "core/status.h"

namespace allot {

struct WatchdogOptions {
  CgroupLayout cgroups;    // the runner's layout
  std::string group;       // the runner's cgroup group: tasks are <own>/<group>/<key>
  int64_t interval_ms = 100;
};

class Watchdog {
 public:
  // Forks the watchdog. REQUIRES: called on the thread that lives as long as the agent (the
  // parent-death signal follows the thread that forked), after the runner prepared its cgroups.
  static Result<std::unique_ptr<Watchdog>> Start(const WatchdogOptions& options);
  // Ends the watchdog (and reaps it): an agent that stops cleanly stops its tasks itself.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The agent's tasks must be dead once the wall clock passes `deadline_ms` (0: never), unless
  // Arm is called again before.
  void Arm(int64_t deadline_ms) { shared_->deadline_ms.store(deadline_ms); }
  pid_t pid() const { return pid_; }

 private:
  struct Shared {
    std::atomic<int64_t> deadline_ms;
  };
  static_assert(std::atomic<int64_t>::is_always_lock_free, "shared between processes");

  Watchdog(Shared* shared, pid_t pid) : shared_(shared), pid_(pid) {}
  [[noreturn]] static void Watch(const WatchdogOptions& options, Shared* shared, pid_t agent);

  Shared* shared_;
  pid_t pid_;
};

}  // namespace allot
