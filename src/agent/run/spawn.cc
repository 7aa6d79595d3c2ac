#include "agent/run/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "agent/run/sys_files.h"
#include "core/strings.h"

namespace allot {
namespace {

// What the child reports when a step before exec fails.
enum Step : int { kSession, kCgroup, kLog, kStdin, kIds, kChdir, kExec, kSandbox, kCapabilities, kParentDeath };
struct Report {
  int step;
  int index;
  int err;
};

// The child runs on a stack AddressSanitizer never saw (mmap'd, below): its instrumentation
// there (redzones, the unpoisoning before a call that does not return) would misread it, so the
// two functions the child runs are not instrumented. What they call is the libc's.
#define ALLOT_CHILD_CODE __attribute__((no_sanitize_address))

[[noreturn]] ALLOT_CHILD_CODE void ChildFail(int fd, Step step, int index) {
  Report r{step, index, errno};
  ssize_t n = ::write(fd, &r, sizeof r);
  (void)n;
  ::_exit(127);
}

std::string StepText(const SpawnPlan& plan, const Report& r) {
  switch (r.step) {
    case kSession: return "starting a new session";
    case kCgroup: return "joining cgroup " + plan.join_cgroups.at(static_cast<size_t>(r.index)) +
                         " (cgroup write refused)";
    case kLog: return "opening log " + plan.log_path;
    case kStdin: return "opening stdin";
    case kIds: return "dropping to uid " + std::to_string(plan.uid) + " gid " + std::to_string(plan.gid);
    case kChdir: return "entering " + plan.cwd;
    case kExec: return "executing " + plan.argv.at(0);
    case kSandbox: return "setting up the sandbox: " + NativeSandboxStepName(*plan.sandbox, r.index);
    case kCapabilities: return "dropping every capability";
    case kParentDeath: return "asking to die with the agent";
  }
  return "?";
}

// What the child needs, prepared before the clone. The child runs in the agent's memory
// (CLONE_VM) while the calling thread is suspended (CLONE_VFORK), so it reads these in place.
struct ChildArgs {
  const SpawnPlan* plan;
  char* const* argv;
  char* const* envp;
  const std::vector<const char*>* cgroups;
  int report_fd;
  int agent_report_fd;  // the agent's end of the pipe (report_fd's reader), closed in the child
  int log_fd;     // stdout as the caller opened it (OpenOutput), or -1 for plan.output_fd
  int log_errno;  // why the caller could not open it (then the child fails that step), or 0
};

// The child, from the clone to execve. It shares the agent's memory and its suspended thread's
// errno, so: async-signal-safe calls only, nothing allocated, no exit handlers (_exit), and ids
// dropped with raw system calls: glibc's setuid, in what it takes for a multi-threaded process,
// takes its every-thread path (a lock and signals meant for the agent's own threads).
ALLOT_CHILD_CODE int ChildMain(void* arg) {
  const ChildArgs& c = *static_cast<const ChildArgs*>(arg);
  const SpawnPlan& plan = *c.plan;
  const int fd = c.report_fd;
  // No handler of the agent's may run here (it would run on the agent's memory): every one back
  // to its default, then the signals blocked around the clone let through.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::setsid() < 0) ChildFail(fd, kSession, 0);
  for (size_t i = 0; i < c.cgroups->size(); ++i) {
    int g = ::open((*c.cgroups)[i], O_WRONLY | O_CLOEXEC);
    if (g < 0 || ::write(g, "0", 1) != 1) ChildFail(fd, kCgroup, static_cast<int>(i));
    ::close(g);
  }
  if (c.log_errno != 0) {
    errno = c.log_errno;
    ChildFail(fd, kLog, 0);
  }
  const int out = c.log_fd >= 0 ? c.log_fd : plan.output_fd;
  int in = plan.stdin_fd >= 0 ? plan.stdin_fd : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) ChildFail(fd, kStdin, 0);
  const int errfd = plan.error_fd >= 0 ? plan.error_fd : out;
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(errfd, 2) < 0) ChildFail(fd, kLog, 0);
  // No descriptor of the agent's (sockets, journals, other tasks' logs) reaches the task.
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    for (int f = 3; f < 4096; ++f)
      if (f != fd) ::fcntl(f, F_SETFD, FD_CLOEXEC);
  if (plan.sandbox) {
    if (int code = EnterNativeSandbox(*plan.sandbox); code != -1) ChildFail(fd, kSandbox, code);
  }
  if (plan.drop_ids) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setgid, plan.gid) != 0 ||
        ::syscall(SYS_setuid, plan.uid) != 0)
      ChildFail(fd, kIds, 0);
  }
  if (plan.sandbox) {
    if (DropAllCapabilities() != 0) ChildFail(fd, kCapabilities, 0);
    // After the ids (a credential change clears it). The thread that cloned this child is
    // suspended until the exec, so only the whole agent's end can have come first: then no one
    // holds the pipe's read end (the child closed its own copy) and the write end reports POLLERR.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(fd, kParentDeath, 0);
    ::close(c.agent_report_fd);
    struct pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) ::_exit(127);
  }
  if (::chdir(plan.cwd.c_str()) != 0) ChildFail(fd, kChdir, 0);
  if (plan.sandbox) ::syscall(SYS_execveat, plan.sandbox->init_fd, "", c.argv, c.envp, AT_EMPTY_PATH);
  else ::execve(c.argv[0], c.argv, c.envp);
  ChildFail(fd, kExec, 0);
}

// The child's stdout when the plan does not give one: the log (the agent's, readable by the
// task's own group — a tenant's uid and gid are one number — and nobody else, made so even when
// an older agent created it looser), else /dev/null. -1 with errno on failure.
int OpenOutput(const SpawnPlan& plan) {
  if (plan.log_path.empty()) return ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const int fd = ::open(plan.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0 && ((plan.drop_ids && ::fchown(fd, static_cast<uid_t>(-1), plan.gid) != 0) ||
                  ::fchmod(fd, plan.drop_ids ? 0640 : 0600) != 0)) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// The child's own stack (it cannot use the suspended thread's, whose frames are live).
constexpr size_t kChildStack = 256 << 10;

bool Executable(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> ResolveCommand(const std::string& name, const std::string& path) {
  if (name.empty()) return Err(InvalidArgument("argv[0]: empty command"));
  if (name.find('/') != std::string::npos) {
    if (Executable(name)) return name;
    return Err(NotFound("command '" + name + "' is not an executable file"));
  }
  for (const std::string& dir : Split(path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (Executable(candidate)) return candidate;
  }
  return Err(NotFound("command '" + name + "' not found in PATH=" + path));
}

Result<std::string> ResolveCommandIn(const std::string& root, const std::string& name, const std::string& path) {
  if (name.empty()) return Err(InvalidArgument("argv[0]: empty command"));
  auto present = [&](const std::string& inside) {
    struct stat st {};
    return ::lstat((root + inside).c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  };
  if (name.find('/') != std::string::npos) {
    if (name[0] == '/' && present(name)) return name;
    return Err(NotFound("command '" + name + "' is not a file in the image"));
  }
  for (const std::string& dir : Split(path, ':')) {
    if (dir.empty() || dir[0] != '/') continue;
    if (present(dir + "/" + name)) return dir + "/" + name;
  }
  return Err(NotFound("command '" + name + "' not found in the image's PATH=" + path));
}

Result<pid_t> Spawn(const SpawnPlan& plan) {
  auto started = SpawnStart(plan);
  if (!started) return Err(started.error());
  return SpawnWait(plan, *started);
}

Result<StartedSpawn> SpawnStart(const SpawnPlan& plan) {
  if (plan.argv.empty() || plan.argv[0].empty() || plan.argv[0][0] != '/')
    return Err(InvalidArgument("spawn: argv[0] must be an absolute path"));
  if (plan.sandbox && plan.sandbox->init_fd < 0) return Err(InvalidArgument("spawn: a sandbox without allot-init"));
  // Everything the child touches is built here, before fork.
  std::vector<char*> argv;
  for (const std::string& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (const auto& [k, v] : plan.env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (const std::string& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<const char*> cgroups;
  for (const std::string& c : plan.join_cgroups) cgroups.push_back(c.c_str());

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Err(Unavailable("pipe: " + ErrnoText(errno)));
  // clone(CLONE_VM | CLONE_VFORK), as posix_spawn does, not fork: a fork copied the agent's
  // page tables, and the child's exec and the agent's next writes then paid for the copy
  // (about a quarter of the agent's own CPU per short task). This thread waits until the child
  // has exec'd or failed; the signals it blocks meanwhile are let through by the child itself.
  void* stack = ::mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Err(Unavailable("mmap (a child's stack): " + ErrnoText(err)));
  }
  // The child's stdout is opened here, on the host (a sandboxed child makes the host's root
  // read-only in its own namespace, which the kernel refuses while a file there is open for
  // writing through it; and the log's path may be hidden inside). A failure is the child's to
  // report, as its own would be: the step named, exit 127 when not waited for.
  const bool given = plan.log_path.empty() && plan.output_fd >= 0;
  const int log_fd = given ? -1 : OpenOutput(plan);
  const int log_errno = !given && log_fd < 0 ? errno : 0;
  ChildArgs args{&plan, argv.data(), envp.data(), &cgroups, report[1], report[0], log_fd, log_errno};
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const int namespaces = plan.sandbox ? plan.sandbox->clone_flags : 0;
  pid_t pid = ::clone(ChildMain, static_cast<char*>(stack) + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD | namespaces, &args);
  const int clone_err = errno;
  if (log_fd >= 0) ::close(log_fd);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kChildStack);  // the child has exec'd (its own memory now) or exited
  if (pid < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return Err(Unavailable("clone: " + ErrnoText(clone_err)));
  }
  ::close(report[1]);
  return StartedSpawn{pid, report[0]};
}

Status SpawnOutcome(const SpawnPlan& plan, int report_fd) {
  Report r{};
  ssize_t n;
  do n = ::read(report_fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
  ::close(report_fd);
  if (n != static_cast<ssize_t>(sizeof r)) return Status::Ok();
  return r.step == kCgroup ? Unavailable(StepText(plan, r) + ": " + ErrnoText(r.err))
                           : FailedPrecondition(StepText(plan, r) + ": " + ErrnoText(r.err));
}

Result<pid_t> SpawnWait(const SpawnPlan& plan, StartedSpawn started) {
  if (Status s = SpawnOutcome(plan, started.report_fd); !s.ok()) {
    int status = 0;
    ::waitpid(started.pid, &status, 0);
    return Err(s);
  }
  return started.pid;
}

}  // namespace allot
