#include "agent/run/watchdog.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "agent/run/group_cgroups.h"
#include "agent/run/sys_files.h"

namespace allot {
namespace {

volatile sig_atomic_t g_agent_died = 0;
void OnAgentDeath(int) { g_agent_died = 1; }

// One write, so its line does not interleave with the agent's own on the shared stderr.
void Say(const std::string& text) {
  std::string line = "allot-agent: watchdog: " + text + "\n";
  ssize_t n = ::write(2, line.data(), line.size());
  (void)n;
}

std::string Describe(const GroupSweep& s) {
  std::string out = "killed " + std::to_string(s.processes) + " process(es) in " + std::to_string(s.cgroups) +
                    " task cgroup(s)";
  for (const std::string& p : s.problems) out += "; " + p;
  return out;
}

}  // namespace

Result<std::unique_ptr<Watchdog>> Watchdog::Start(const WatchdogOptions& options) {
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Err(Unavailable("watchdog: mmap: " + ErrnoText(errno)));
  auto* shared = new (page) Shared{};
  const pid_t agent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::munmap(page, sizeof(Shared));
    return Err(Unavailable("watchdog: fork: " + ErrnoText(err)));
  }
  if (pid == 0) Watch(options, shared, agent);
  return std::unique_ptr<Watchdog>(new Watchdog(shared, pid));
}

Watchdog::~Watchdog() {
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  ::munmap(shared_, sizeof(Shared));
}

void Watchdog::Watch(const WatchdogOptions& options, Shared* shared, pid_t agent) {
  ::setpgid(0, 0);  // out of the agent's group: a SIGSTOP to the group must not stop the watchdog
  ::prctl(PR_SET_NAME, "allot-watchdog");
  struct sigaction sa {};
  sa.sa_handler = OnAgentDeath;  // no SA_RESTART: it cuts the sleep short
  ::sigaction(SIGUSR1, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGUSR1);
  int64_t fired_for = 0;
  while (true) {
    if (g_agent_died || ::getppid() != agent) {  // getppid: the agent may have died before prctl
      GroupSweep s = SweepGroup(options.cgroups, options.group, SweepOptions{.remove = true});
      if (s.cgroups > 0) Say("the agent (pid " + std::to_string(agent) + ") died: " + Describe(s));
      ::_exit(0);
    }
    const int64_t deadline = shared->deadline_ms.load();
    const int64_t now = WallMillis();
    if (deadline > 0 && deadline != fired_for && now > deadline) {
      fired_for = deadline;
      GroupSweep s = SweepGroup(options.cgroups, options.group, SweepOptions{});
      if (s.processes > 0 || !s.problems.empty())
        Say("the agent's lease ran out " + std::to_string(now - deadline) +
            " ms ago and it has not renewed it (stopped or hung?): " + Describe(s));
    }
    struct timespec pause {
      options.interval_ms / 1000, (options.interval_ms % 1000) * 1000000
    };
    ::nanosleep(&pause, nullptr);
  }
}

}  // namespace allot
