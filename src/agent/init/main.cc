// allot-init: the first process of a task's pid namespace in allot's own sandbox
// (agent/run/native_sandbox.h). The runner sets the namespace up and execs this, as the tenant's
// uid with no capabilities, from a descriptor (the binary need not be inside the task's root);
// it starts the task's command and stays pid 1 beside it:
//   - it starts the command in a session of its own (no TIOCSTI into a terminal it shares);
//   - it reaps every process of the namespace that ends (orphans are re-parented to it);
//   - a SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2 it receives is passed to the
//     command's process group (a namespace's init gets only the signals it handles; the runner signals the
//     task's processes directly, this is for anyone else who signals the sandbox);
//   - when the command ends it exits with the command's code, or 128+N when a signal N killed
//     it, as bubblewrap does; its exit ends every other process of the namespace.
// Statically linked: an image's root holds no library of ours. Usage: allot-init PROGRAM [ARG…]
// (PROGRAM an absolute path inside the sandbox; the environment is the command's).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kPassed[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void Note(const char* what, const char* detail) {
  // The task's log is this process's stderr: what failed is the task's to read.
  std::fprintf(stderr, "allot-init: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] != '/') {
    Note("usage", "allot-init PROGRAM [ARG…] (PROGRAM an absolute path)");
    return 127;
  }
  sigset_t waited, old;
  ::sigemptyset(&waited);
  ::sigaddset(&waited, SIGCHLD);
  for (int s : kPassed) ::sigaddset(&waited, s);
  ::sigprocmask(SIG_BLOCK, &waited, &old);

  const pid_t child = ::fork();
  if (child < 0) {
    Note("fork", std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::setsid();
    ::execv(argv[1], argv + 1);
    const int err = errno;
    Note(argv[1], std::strerror(err));
    ::_exit(err == ENOENT ? 127 : 126);
  }
  for (;;) {
    siginfo_t info{};
    if (::sigwaitinfo(&waited, &info) < 0) continue;  // EINTR
    if (info.si_signo != SIGCHLD) {
      ::kill(-child, info.si_signo);  // its session's group: a pipeline's every member
      continue;
    }
    // Reap every child that ended; when the command is among them, end with it.
    for (;;) {
      int status = 0;
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p <= 0) break;
      if (p != child) continue;
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return WEXITSTATUS(status);
    }
  }
}
