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

// The load protocol (docs/services.md), for a service's replicas: the agent sets ALLOT_LOAD_FILE
// to a file in the task's own writable directory; the task appends one line whenever its load
// changes (or once a second): the requests it has in flight or queued, a decimal number from 0 to
// 1,000,000,000 with at most three decimals, ended by "\n". Read like the latency file; the newest
// valid line is the replica's load until a newer one comes. One line without its "\n": the load in
// thousandths, or nullopt when it is not such a number.
std::optional<int64_t> ParseLoadLine(std::string_view line);

class LatencyFile {
 public:
  using Parser = std::optional<int64_t> (*)(std::string_view);
  LatencyFile() = default;
  // `parse`: the protocol's line (the latency file's by default; ParseLoadLine for a load file).
  explicit LatencyFile(std::string path, Parser parse = ParseLatencyLine) : path_(std::move(path)), parse_(parse) {}
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
  Parser parse_ = ParseLatencyLine;
  uint64_t offset_ = 0;
  std::optional<int64_t> p99_us_;
  int64_t bad_lines_ = 0;
  bool skipping_ = false;  // inside a line longer than kMaxLatencyLine
};

// A replica's load file: what it reported last, kept across beats in which it wrote nothing.
class LoadFile {
 public:
  LoadFile() = default;
  explicit LoadFile(std::string path) : file_(std::move(path), ParseLoadLine) {}
  const std::string& path() const { return file_.path(); }
  void Read() {
    file_.Read();
    if (file_.p99_us()) last_ = file_.p99_us();
  }
  std::optional<int64_t> load_milli() const { return last_; }
  int64_t bad_lines() const { return file_.bad_lines(); }

 private:
  LatencyFile file_;
  std::optional<int64_t> last_;
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
