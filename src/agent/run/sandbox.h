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

#include "agent/run/gpu_devices.h"
#include "core/status.h"

namespace allot {

// kNative: allot's own (native_sandbox.h), needing root and allot-init; kAuto: allot's own when
// the agent is root and allot-init is there, else bwrap when found, else none.
enum class SandboxMode { kAuto, kNative, kBwrap, kNone };
enum class SandboxKind { kNone, kBwrap, kNative };

// A top-level entry of the host's root filesystem, as a sandbox on the host's root shows it.
struct RootEntry {
  std::string name;         // "usr"
  std::string link_target;  // non-empty: a symlink ("usr/bin" for bin)
  bool operator==(const RootEntry&) const = default;
};
// The host's "/" entries a sandbox shows: directories and files read-only, symlinks as they are;
// not proc, dev and tmp (the sandbox's own). In name order.
std::vector<RootEntry> HostRootEntries(const std::string& root = "/");

struct SandboxSpec {
  std::string bwrap_path = "/usr/bin/bwrap";
  // The task's root filesystem: "" the host's, read-only; else a directory (an image's root,
  // prepared by the agent with every mount point below already made), bound read-only.
  std::string root;
  // With the host's root: its top-level entries, each bound read-only onto bwrap's own tmpfs
  // root, so a volume can go at a new top-level path (/data) the host lacks. Empty: "/" is
  // bound whole (then every bind target must exist on the host).
  std::vector<RootEntry> host_root;
  std::string work_root;                    // hidden inside; may be "" (nothing to hide)
  std::vector<std::string> hidden_roots;    // hidden too (a shared checkpoint root)
  std::string work_dir;                     // bound writable; the task starts there
  std::string checkpoint_dir;               // bound writable
  std::vector<std::string> read_only_dirs;  // bound read-only (the preempt file's directory)
  // The only device nodes besides the fresh /dev's defaults (gpu_devices.h): bound in.
  std::vector<DeviceNode> devices;
  // /proc/driver is replaced by an empty tmpfs (when the host has it) holding just these.
  std::vector<Bind> proc_driver;
  std::vector<Bind> read_only_binds;        // host path → sandbox path (driver files, volumes)
  std::vector<Bind> writable_binds;         // host path → sandbox path (the tenant's volumes)
  int64_t shm_size_mib = 0;                 // > 0: /dev/shm is a tmpfs of this size
  bool network = false;
};

// bwrap's argv (argv[0] = bwrap_path) running `command` (argv[0] absolute). `host_proc_driver`:
// whether /proc/driver exists on this host (a fresh procfs shows it), so it can be covered.
std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::vector<std::string>& command,
                                   bool host_proc_driver = true);

// Whether tasks are sandboxed: kNone → false; kBwrap → true, or FailedPrecondition when
// `bwrap_path` is not executable; kAuto → whether it is.
Result<bool> ResolveSandbox(SandboxMode mode, const std::string& bwrap_path);
// Which sandbox tasks get: `root` whether the agent runs as root, `init_path` allot-init.
// kNative without root or without an executable allot-init is FailedPrecondition, naming which.
Result<SandboxKind> ResolveSandboxKind(SandboxMode mode, const std::string& bwrap_path, const std::string& init_path,
                                       bool root);

}  // namespace allot
