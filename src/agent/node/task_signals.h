// What the agent learns of each task on a shared GPU, for allotd's interference detector
// (docs/noisy-neighbour.md): the latency the task reports through its latency file, and its
// share of the GPU from NVML's per-process utilization, attributed to it by its processes.
//
// The latency protocol: the agent sets ALLOT_LATENCY_FILE to a file in the task's own writable
// directory; the task appends one line per reporting period, its p99 latency over that period in
// milliseconds ("12" or "12.5", at most three decimals, above 0 and at most 3,600,000), ended by
// "\n". Each heartbeat the agent reads what was appended; the newest valid line is the task's
// p99 for that beat. A bad line is skipped and counted, never fatal.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/gpu_backend.h"
#include "wire/agent_messages.h"

namespace allot {

// The longest line taken (a p99 needs at most 11 characters); longer ones are bad lines.
inline constexpr size_t kMaxLatencyLine = 32;
// Read at most this much per beat: a task writing gigabytes cannot stall the agent's loop.
inline constexpr size_t kMaxLatencyRead = 64 * 1024;

// One line of the protocol, without its "\n": the p99 in microseconds, or nullopt when the line
// is not exactly a decimal number of milliseconds in (0, 3,600,000] with at most three decimals.
std::optional<int64_t> ParseLatencyLine(std::string_view line);

class LatencyFile {
 public:
  LatencyFile() = default;
  explicit LatencyFile(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // Reads the lines appended since the last call. A missing file is no report; a file that is
  // not a regular file (a link, a FIFO: the task owns the directory) is refused without being
  // followed or blocked on, and counted as one bad line. A file that shrank is read from its start.
  void Read();
  // The newest valid p99 of the last Read, if it read one.
  std::optional<int64_t> p99_us() const { return p99_us_; }
  int64_t bad_lines() const { return bad_lines_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  std::optional<int64_t> p99_us_;
  int64_t bad_lines_ = 0;
  bool skipping_ = false;  // inside a line longer than kMaxLatencyLine
};

// The task's use of its GPU: the busiest of its processes' samples (0 when NVML sampled none of
// them while others it sampled: idle), absent when NVML gave no per-process sample at all.
void AttributeUtilization(const std::vector<ProcessUtilization>& samples, const std::vector<pid_t>& task_pids,
                          TaskGpuActivity& out);

// Why a task over its stated GPU memory must stop, or nullopt: the memory NVML reports for the
// task's processes on its GPU summed ("used 14.2 GiB of VRAM over its vram: 12GiB"). Processes
// whose memory NVML cannot tell count nothing; vram_mib 0 (none stated) is never over.
std::optional<std::string> VramOverrun(const std::vector<GpuProcess>& processes, const std::vector<pid_t>& task_pids,
                                       int64_t vram_mib);

}  // namespace allot
