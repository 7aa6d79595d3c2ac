#include "agent/node/health.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

namespace allot {

const char* XidSeverity(uint64_t xid) {
  switch (xid) {
    case 13: case 31: case 43: case 45:  // graphics/MMU faults of the app, its preemptive cleanup
      return "";
    case 48: case 63: case 64: case 74: case 79: case 92: case 94: case 95:  // DBE, retirement, NVLink, off the bus, ECC
      return "hardware";
    default:
      return "software";
  }
}

std::vector<HealthCheck> NvmlChecks(const std::vector<GpuSample>& samples, const HealthOptions& options) {
  HealthCheck lost{"nvml.gpus", true, "", ""}, ecc{"nvml.ecc", true, "", ""}, pages{"nvml.memory-repair", true, "", ""},
      xid{"nvml.xid", true, "", ""}, temp{"nvml.temperature", true, "", ""};
  auto fail = [](HealthCheck& c, const std::string& severity, const std::string& what) {
    // Hardware outranks software in one check's class.
    if (c.ok || severity == "hardware") c.severity = severity;
    c.ok = false;
    c.detail += (c.detail.empty() ? "" : "; ") + what;
  };
  for (const GpuSample& s : samples) {
    std::string gpu = "GPU " + std::to_string(s.index);
    if (!s.status.ok()) {
      fail(lost, "hardware", gpu + ": " + s.status.message());
      continue;
    }
    if (s.ecc_uncorrected && *s.ecc_uncorrected > 0) {
      fail(ecc, "hardware", gpu + ": " + std::to_string(*s.ecc_uncorrected) + " uncorrected ECC error(s)");
    }
    if (s.remapped_rows && s.remapped_rows->failed) fail(pages, "hardware", gpu + ": a row remap failed");
    if (s.remapped_rows && s.remapped_rows->pending) fail(pages, "software", gpu + ": a row remap is pending (needs a GPU reset)");
    std::set<uint64_t> seen;
    for (const XidEvent& x : s.xids) {
      if (!seen.insert(x.xid).second) continue;
      std::string severity = XidSeverity(x.xid);
      if (!severity.empty()) fail(xid, severity, gpu + ": Xid " + std::to_string(x.xid));
    }
    if (s.temperature_c && *s.temperature_c > options.max_temperature_c) {
      fail(temp, "hardware", gpu + ": " + std::to_string(*s.temperature_c) + " °C, above " +
                                 std::to_string(options.max_temperature_c) + " °C");
    }
  }
  return {lost, ecc, pages, xid, temp};
}

namespace {

// Runs `command` through /bin/sh with a timeout; the exit status (or -1 on a timeout) and the
// output's tail.
std::pair<int, std::string> Run(const std::string& command, int64_t timeout_ms) {
  int out[2];
  if (pipe(out) != 0) return {-1, "pipe failed"};
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  bool done = false;
  std::array<char, 4096> buf;
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  while (!done) {
    ssize_t n;
    while ((n = read(out[0], buf.data(), buf.size())) > 0) {
      output.append(buf.data(), static_cast<size_t>(n));
      if (output.size() > 8192) output.erase(0, output.size() - 4096);
    }
    done = waitpid(pid, &status, WNOHANG) == pid;
    if (!done && std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(out[0]);
      return {-1, output};
    }
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ssize_t n;
  while ((n = read(out[0], buf.data(), buf.size())) > 0) output.append(buf.data(), static_cast<size_t>(n));
  close(out[0]);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

}  // namespace

std::vector<HealthCheck> CommandChecks(const HealthOptions& options) {
  std::vector<HealthCheck> out;
  for (const std::string& command : options.commands) {
    auto [code, output] = Run(command, options.command_timeout_ms);
    HealthCheck c{"cmd:" + command, code == 0, code == 0 ? "" : "hardware", ""};
    if (code != 0) {
      while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
      if (output.size() > 300) output = "…" + output.substr(output.size() - 300);
      c.detail = (code < 0 ? "timed out after " + std::to_string(options.command_timeout_ms / 1000) + " s"
                           : "exited with code " + std::to_string(code)) +
                 (output.empty() ? "" : ": " + output);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace allot
