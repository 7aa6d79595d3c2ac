// The task's sandbox: bubblewrap around the command. The system is read-only, /tmp, /dev and
// /proc are the task's own, the agent's work root is replaced by an empty tmpfs into which only
// this task's directories are bound back (other tenants' directories do not exist inside), the
// task has its own pid namespace (and network namespace unless its policy allows the network),
// no capabilities, a new session (no TIOCSTI into the agent's terminal), and dies with the runner.
//
// Who runs bwrap: the runner drops to the tenant's uid first and execs bwrap unprivileged, which
// then builds its namespaces through a user namespace. Checked on Debian 12 (bwrap 0.8, not
// setuid): that works, the task's files on the work dir belong to the tenant's real uid, and a
// task that escaped bwrap would still be an unprivileged user. Running bwrap as root with
// --uid/--gid instead would map the tenant's id inside onto root outside, so its files would be
// root's and an escape would be root.
//
// Signals: bwrap does not forward them. A SIGTERM to the outer bwrap kills it, and
// --die-with-parent then SIGKILLs the task, so the runner signals the task's processes directly
// (see Runner::Preempt). Exit status: bwrap exits with the task's code, or 128+N when the task
// died of signal N; the runner reads the latter as the signal (a task that itself exits 128+N is
// indistinguishable and is reported as killed by signal N).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

enum class SandboxMode { kAuto, kBwrap, kNone };

struct SandboxSpec {
  std::string bwrap_path = "/usr/bin/bwrap";
  std::string work_root;                    // hidden inside; may be "" (nothing to hide)
  std::vector<std::string> hidden_roots;    // hidden too (a shared checkpoint root)
  std::string work_dir;                     // bound writable; the task starts there
  std::string checkpoint_dir;               // bound writable
  std::vector<std::string> read_only_dirs;  // bound read-only (the preempt file's directory)
  bool network = false;
};

// bwrap's argv (argv[0] = bwrap_path) running `command` (argv[0] absolute).
std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::vector<std::string>& command);

// Whether tasks are sandboxed: kNone → false; kBwrap → true, or FailedPrecondition when
// `bwrap_path` is not executable; kAuto → whether it is.
Result<bool> ResolveSandbox(SandboxMode mode, const std::string& bwrap_path);

}  // namespace allot
