// Starting a process the runner's way: everything the child needs is prepared before the clone,
// and between the clone and exec the child makes only async-signal-safe calls (the agent is
// multi-threaded; another thread may hold malloc's lock). The child shares the agent's memory
// until its exec, as posix_spawn's does (clone with CLONE_VM | CLONE_VFORK: no copy of the
// agent's page tables), while the calling thread waits. The child joins its cgroups before it
// execs, so no instruction of the task runs outside its limits, and a failure of any step before
// exec comes back to Spawn as an error naming the step (through a close-on-exec pipe).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "agent/run/native_sandbox.h"
#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

// PATH for tasks, scrubs and MPS commands: the system's directories, nothing of the agent's.
inline constexpr const char* kTaskPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

struct SpawnPlan {
  // argv[0]: an absolute path (ResolveCommand); with `sandbox`, argv is allot-init's, executed
  // from sandbox->init_fd.
  std::vector<std::string> argv;
  EnvList env;                              // the whole environment; nothing is inherited
  std::vector<std::string> join_cgroups;    // cgroup.procs files the child writes "0" into
  std::string log_path;                     // stdout+stderr appended (O_NOFOLLOW); "" → output_fd
  int output_fd = -1;                       // used when log_path is empty; -1 → /dev/null
  int error_fd = -1;                        // stderr apart from stdout; -1 → stdout's
  int stdin_fd = -1;                        // -1 → /dev/null
  std::string cwd = "/";
  bool drop_ids = false;                    // setgroups({}), setgid(gid), setuid(uid) before exec
  uid_t uid = 0;
  gid_t gid = 0;
  // allot's own sandbox (native_sandbox.h): the child starts in its namespaces, enters it after
  // joining its cgroups (its stdout opened by the caller, on the host), drops every capability
  // after the ids, dies with the cloning thread, and execs allot-init.
  std::optional<NativeSandbox> sandbox;
};

// Forks and execs `plan`; the child leads a new session (its pid is its process group). Returns
// the child's pid once exec succeeded.
Result<pid_t> Spawn(const SpawnPlan& plan);

// Spawn in two steps: SpawnStart returns once the child has exec'd or failed (the calling
// thread waits for it, see above), SpawnWait reads which (the child reaped on a failed step, the
// error as Spawn's). Each started spawn must be waited for once, with its own plan.
struct StartedSpawn {
  pid_t pid = -1;
  int report_fd = -1;  // the close-on-exec pipe's read end
};
Result<StartedSpawn> SpawnStart(const SpawnPlan& plan);
Result<pid_t> SpawnWait(const SpawnPlan& plan, StartedSpawn started);
// Whether the child of a started spawn reached exec, or the step that failed; waits until it
// knows (exec, or the child's end) and closes report_fd; reaps nothing.
Status SpawnOutcome(const SpawnPlan& plan, int report_fd);

// `name` as execve needs it: unchanged when it has a '/' (and is executable), else the first
// executable match in `path` (colon-separated). NotFound names the command and the PATH searched.
Result<std::string> ResolveCommand(const std::string& name, const std::string& path);
// The same inside a root filesystem at `root` (an image): the path as the task will see it.
// Symlinks inside the image are not followed (they may be absolute, meaning the image's root).
Result<std::string> ResolveCommandIn(const std::string& root, const std::string& name, const std::string& path);

}  // namespace allot
