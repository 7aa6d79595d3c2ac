#include "agent/run/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"

namespace allot {
namespace {

bool Has(const EnvList& env, const char* name) {
  for (const auto& [k, v] : env)
    if (k == name) return true;
  return false;
}

std::string Lookup(const EnvList& env, const char* name, const char* fallback) {
  for (const auto& [k, v] : env)
    if (k == name) return v;
  return fallback;
}

void Keep(std::string& tail, const char* data, size_t n, size_t keep) {
  tail.append(data, n);
  if (tail.size() > keep) tail.erase(0, tail.size() - keep);
}

}  // namespace

std::string DescribeEnd(const CommandResult& r, int64_t timeout_ms) {
  if (r.timed_out) return "timed out after " + std::to_string(timeout_ms) + " ms";
  if (r.signal != 0) return std::string("killed by SIG") + (sigabbrev_np(r.signal) ? sigabbrev_np(r.signal) : "?");
  return "exited with code " + std::to_string(r.exit_code);
}

Result<CommandResult> RunCommand(const CommandSpec& spec) {
  if (spec.argv.empty()) return Err(InvalidArgument("command: empty argv"));
  SpawnPlan plan;
  plan.env = spec.env;
  if (!Has(plan.env, "PATH")) plan.env.emplace_back("PATH", kTaskPath);
  if (!Has(plan.env, "LANG")) plan.env.emplace_back("LANG", "C.UTF-8");
  auto exe = ResolveCommand(spec.argv[0], Lookup(plan.env, "PATH", kTaskPath));
  if (!exe) return Err(exe.error());
  plan.argv = spec.argv;
  plan.argv[0] = *exe;

  // stdin from a memory file, not a pipe: a command that exits without reading cannot SIGPIPE us.
  int in = ::memfd_create("allot-stdin", MFD_CLOEXEC);
  if (in < 0) return Err(Unavailable("memfd_create: " + ErrnoText(errno)));
  if (!spec.stdin_text.empty() &&
      ::write(in, spec.stdin_text.data(), spec.stdin_text.size()) != static_cast<ssize_t>(spec.stdin_text.size())) {
    ::close(in);
    return Err(Unavailable("writing a command's stdin: " + ErrnoText(errno)));
  }
  ::lseek(in, 0, SEEK_SET);
  // [0]: stdout (and stderr unless split), [1]: stderr when split.
  int out[2][2] = {{-1, -1}, {-1, -1}};
  for (int i = 0; i < (spec.split_stderr ? 2 : 1); ++i) {
    if (::pipe2(out[i], O_CLOEXEC) != 0) {
      int err = errno;
      ::close(in);
      if (i == 1) {
        ::close(out[0][0]);
        ::close(out[0][1]);
      }
      return Err(Unavailable("pipe: " + ErrnoText(err)));
    }
  }
  plan.stdin_fd = in;
  plan.output_fd = out[0][1];
  plan.error_fd = out[1][1];

  const int64_t start = WallMillis();
  auto pid = Spawn(plan);
  ::close(in);
  for (auto& pipe : out)
    if (pipe[1] >= 0) ::close(pipe[1]);
  if (!pid) {
    for (auto& pipe : out)
      if (pipe[0] >= 0) ::close(pipe[0]);
    return Err(pid.error());
  }
  CommandResult result;
  std::string* tails[2] = {&result.output_tail, &result.error_tail};
  bool exited = false;
  int status = 0;
  char buf[4096];
  while (!exited) {
    pollfd p[2];
    nfds_t open = 0;
    for (auto& pipe : out)
      if (pipe[0] >= 0) p[open++] = pollfd{pipe[0], POLLIN, 0};
    if (open > 0 && ::poll(p, open, 10) > 0) {
      for (nfds_t k = 0; k < open; ++k) {
        if (p[k].revents == 0) continue;
        const int i = p[k].fd == out[0][0] ? 0 : 1;
        ssize_t n = ::read(out[i][0], buf, sizeof buf);
        if (n > 0) {
          Keep(*tails[i], buf, static_cast<size_t>(n), spec.keep_output);
        } else if (n == 0) {  // end of file
          ::close(out[i][0]);
          out[i][0] = -1;
        }
      }
    } else if (open == 0) {
      SleepMillis(2);
    }
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(*pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == *pid) {
      // Still a zombie, so the group id cannot have been reused.
      if (spec.kill_leftovers) ::kill(-*pid, SIGKILL);
      ::waitpid(*pid, &status, 0);
      exited = true;
    }
    else if (WallMillis() - start >= spec.timeout_ms) {
      result.timed_out = true;
      ::kill(-*pid, SIGKILL);  // its process group: Spawn made it a session leader
      ::waitpid(*pid, &status, 0);
      exited = true;
    }
  }
  // What is already in the pipes; a leftover daemon holding one open cannot stall us.
  for (int i = 0; i < 2; ++i) {
    if (out[i][0] < 0) continue;
    ::fcntl(out[i][0], F_SETFL, O_NONBLOCK);
    for (ssize_t n; (n = ::read(out[i][0], buf, sizeof buf)) > 0;)
      Keep(*tails[i], buf, static_cast<size_t>(n), spec.keep_output);
    ::close(out[i][0]);
  }
  result.duration_ms = WallMillis() - start;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace allot
