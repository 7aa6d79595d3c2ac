// A real allotd for tests that drive it as an operator would: started with its arguments, its
// stderr appended to a log, ready once /readyz answers; stopped with a signal.
//
//   pid_ = testing::LaunchAllotd({"--listen", "127.0.0.1:" + port, "--data", dir}, dir / "allotd.log", port_);
//   ASSERT_GT(pid_, 0);
//   testing::StopProcess(pid_, SIGTERM);
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace allot::testing {

// Returns allotd's pid once it answers /readyz on `port` (a test failure, and the pid for the
// caller to stop, when it does not within 30 s; -1 when it cannot fork). It is ready in well under a second, but an ASan build under a parallel
// ctest on two cores has taken over 5 s. ALLOTD_BINARY is set by the test build.
inline pid_t LaunchAllotd(std::vector<std::string> args, const std::filesystem::path& log, int port) {
  args.insert(args.begin(), "allotd");
  pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return -1;
  }
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "a", stderr);
    (void)f;
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(ALLOTD_BINARY, argv.data());
    _exit(127);
  }
  httplib::Client c("127.0.0.1", port);
  for (int i = 0; i < 3000; ++i) {
    if (auto r = c.Get("/readyz"); r && r->status == 200) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "allotd did not become ready; see " << log;
  return pid;  // still running, maybe: the caller stops it
}

// Runs `command` in a shell: its exit code and its stdout (append 2>&1 for stderr too).
inline std::pair<int, std::string> RunShell(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = ::pclose(p);
  return {WEXITSTATUS(status), out};
}

// Sends `sig` and reaps the process; pid becomes -1. Nothing when it is not running.
inline void StopProcess(pid_t& pid, int sig) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  pid = -1;
}

}  // namespace allot::testing
