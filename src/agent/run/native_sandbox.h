// allot's own sandbox: the same confinement as the bubblewrap one (sandbox.h) built by the
// runner itself, without running bwrap. It needs root (the agent's), which makes the namespaces
// directly instead of through a user namespace:
//   - the spawned child (spawn.h) starts in new mount, pid, IPC and UTS namespaces, and a new
//     network namespace unless the task's policy allows the network (its loopback brought up);
//     once in its cgroups, a cgroup namespace rooted at them;
//   - the host's paths it binds are taken first (open_tree), then the host's root is made
//     read-only, nosuid and nodev in its mount namespace (every mount of it, in one recursive
//     mount_setattr: bwrap re-read /proc/self/mountinfo after each of its mounts); an image's
//     root is bound read-only and becomes the root (pivot_root), or, with a volume at a path the
//     host lacks, a tmpfs root holding the host's top-level entries bound read-only one by one,
//     as bwrap's does; every later step then resolves inside that root;
//   - /dev is a fresh tmpfs with null, zero, full, random, urandom and tty, a devpts of its own,
//     /dev/shm, and the task's own device nodes; /proc a fresh procfs of the pid namespace (its
//     sys, sysrq-trigger, irq and bus read-only), with /proc/driver covered and the task's own
//     entries shown; /tmp a tmpfs; the work root and hidden roots empty tmpfs into which only
//     this task's directories are bound back; volumes as asked;
//   - then no new privileges, no capability in any set (the bounding set dropped before the uid
//     drop), the tenant's uid, and allot-init (src/agent/init) exec'd from a descriptor as the
//     namespace's pid 1: it starts the command in a session of its own, reaps, and exits with
//     the command's code or 128+N (a signal N), as bwrap does. The child dies with the thread
//     that cloned it (PR_SET_PDEATHSIG), and the namespace with its init.
// Set-up happens in the spawned child between the clone and its exec (async-signal-safe system
// calls only, on paths prepared here); a step that fails is reported by Spawn naming it.
#pragma once

#include <string>
#include <vector>

#include "agent/run/sandbox.h"

namespace allot {

// One step of the set-up; its paths as the child sees them when it runs (NativeSandbox::root_steps).
struct MountStep {
  enum class Kind {
    kBind,     // source onto target, recursively (flags: read_only, devices, in_place)
    kTmpfs,    // a tmpfs at target; source: its mount options ("mode=0755")
    kProc,     // a procfs of the new pid namespace at target
    kDevpts,   // a devpts instance of its own at target
    kMkdir,    // target made (with its parents; an existing one is fine); mode 0755
    kFile,     // an empty file at target (with its parents), a bind's mount point
    kSymlink,  // target → source
  };
  Kind kind = Kind::kBind;
  std::string source;
  std::string target;
  bool read_only = false;  // kBind: read-only (always nosuid)
  bool devices = false;    // kBind: device nodes usable (otherwise nodev)
  bool optional = false;   // kBind in place: a source that does not exist is skipped
  // kBind: the source is read where it is when the step runs (a path the set-up made: /proc/sys).
  // Otherwise it is the host's, taken before any step ran: a tmpfs of an earlier step may
  // cover its path by then (the work root, over the task's own work directory).
  bool in_place = false;
  int mode = 0755;         // kMkdir
};

// Binds taken from the host before the steps run, at most (a task has a few dozen).
inline constexpr size_t kMaxNativeSandboxBinds = 1024;

struct NativeSandbox {
  int clone_flags = 0;          // CLONE_NEW* for the child's clone
  bool read_only_root = false;  // the host's root made read-only in the child's namespace
  std::string pivot_to;         // "": the task's root is the host's; else the root to pivot into
  // With pivot_to: the steps that make the root (their paths the host's), before the pivot; the
  // steps after it name paths inside the new root.
  size_t root_steps = 0;
  bool loopback = false;        // a new network namespace: bring its loopback up
  std::vector<MountStep> steps;
  int init_fd = -1;             // allot-init, open (O_PATH); the runner owns it
  int cap_last = 63;            // the kernel's highest capability number (/proc/sys/kernel/cap_last_cap)
};

// The set-up for `spec` (its paths absolute on the host). `stage` is an empty directory on the
// host used as the tmpfs root when spec.host_root is given; `host_proc_driver` as for BwrapArgv.
// Sources are stat'ed here to tell a directory's mount point from a file's.
NativeSandbox NativeSandboxPlan(const SandboxSpec& spec, const std::string& stage, bool host_proc_driver);

// In the spawned child, between clone and exec: enters the sandbox (everything but the uid drop
// and the exec). Returns -1, or the code of the step that failed with errno set (StepName).
// Async-signal-safe; allocates nothing.
int EnterNativeSandbox(const NativeSandbox& sandbox);
// After the uid drop: clears every capability set (permitted, effective, inheritable, ambient).
int DropAllCapabilities();

// What a failure code of EnterNativeSandbox was doing ("binding /usr onto /x/usr").
std::string NativeSandboxStepName(const NativeSandbox& sandbox, int code);

// The kernel's highest capability number, read once.
int LastCapability();

// "" when this host lets the agent set the sandbox up: the kernel has what it calls (open_tree
// and move_mount, Linux 5.2; mount_setattr, 5.12) and a child of this process may make namespaces,
// private and read-only mounts, and take a mount tree (tried once, in a namespace of its own);
// else what it lacks. Asked once.
const std::string& NativeSandboxHostLacks();

}  // namespace allot
