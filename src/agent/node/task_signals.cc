#include "agent/node/task_signals.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace allot {

std::optional<int64_t> ParseLatencyLine(std::string_view line) {
  constexpr int64_t kMaxUs = int64_t{3600} * 1000 * 1000;
  size_t dot = line.find('.');
  std::string_view whole = line.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : line.substr(dot + 1);
  auto digits = [](std::string_view s) { return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  if (whole.empty() || whole.size() > 7 || !digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && (frac.empty() || frac.size() > 3 || !digits(frac))) return std::nullopt;
  int64_t us = 0;
  for (char c : whole) us = us * 10 + (c - '0');
  us *= 1000;
  int64_t scale = 100;
  for (char c : frac) {
    us += (c - '0') * scale;
    scale /= 10;
  }
  if (us <= 0 || us > kMaxUs) return std::nullopt;
  return us;
}

std::optional<int64_t> ParseLoadLine(std::string_view line) {
  size_t dot = line.find('.');
  std::string_view whole = line.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : line.substr(dot + 1);
  auto digits = [](std::string_view s) { return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  if (whole.empty() || whole.size() > 10 || !digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && (frac.empty() || frac.size() > 3 || !digits(frac))) return std::nullopt;
  int64_t milli = 0;
  for (char c : whole) milli = milli * 10 + (c - '0');
  milli *= 1000;
  int64_t scale = 100;
  for (char c : frac) {
    milli += (c - '0') * scale;
    scale /= 10;
  }
  if (milli > int64_t{1'000'000'000} * 1000) return std::nullopt;
  return milli;
}

void LatencyFile::Read() {
  p99_us_.reset();
  if (path_.empty()) return;
  // O_NOFOLLOW and O_NONBLOCK: the directory is the task's, so the name may be a link to a file
  // the agent (root) must not read, or a FIFO that would hold the loop.
  int fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) ++bad_lines_;
    return;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    ++bad_lines_;
    return;
  }
  if (static_cast<uint64_t>(st.st_size) < offset_) {  // truncated or replaced: start again
    offset_ = 0;
    skipping_ = false;
  }
  std::string chunk(std::min<uint64_t>(kMaxLatencyRead, static_cast<uint64_t>(st.st_size) - offset_), '\0');
  ssize_t n = chunk.empty() ? 0 : ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(offset_));
  ::close(fd);
  if (n <= 0) return;
  chunk.resize(static_cast<size_t>(n));
  // Only whole lines are taken; a partial last line waits for its "\n" (unless already too long).
  size_t taken = 0;
  for (size_t end; (end = chunk.find('\n', taken)) != std::string::npos; taken = end + 1) {
    std::string_view line(chunk.data() + taken, end - taken);
    if (skipping_) {
      skipping_ = false;
      continue;  // the rest of a line already counted as bad
    }
    if (auto us = line.size() <= kMaxLatencyLine ? parse_(line) : std::nullopt) {
      p99_us_ = *us;
    } else {
      ++bad_lines_;
    }
  }
  if (chunk.size() - taken > kMaxLatencyLine) {
    if (!skipping_) ++bad_lines_;
    skipping_ = true;
    taken = chunk.size();
  }
  offset_ += taken;
}

void AttributeUtilization(const std::vector<ProcessUtilization>& samples, const std::vector<pid_t>& task_pids,
                          TaskGpuActivity& out) {
  if (samples.empty()) return;
  int64_t sm = 0, memory = 0;
  for (const ProcessUtilization& p : samples) {
    if (std::find(task_pids.begin(), task_pids.end(), static_cast<pid_t>(p.pid)) == task_pids.end()) continue;
    sm = std::max<int64_t>(sm, p.sm_percent);
    memory = std::max<int64_t>(memory, p.memory_percent);
  }
  out.sm_percent = sm;
  out.memory_percent = memory;
}

std::optional<std::string> VramOverrun(const std::vector<GpuProcess>& processes, const std::vector<pid_t>& task_pids,
                                       int64_t vram_mib) {
  if (vram_mib <= 0) return std::nullopt;
  uint64_t used = 0;
  for (const GpuProcess& p : processes) {
    if (!p.used_bytes || std::find(task_pids.begin(), task_pids.end(), static_cast<pid_t>(p.pid)) == task_pids.end()) continue;
    used += *p.used_bytes;
  }
  if (used <= static_cast<uint64_t>(vram_mib) << 20) return std::nullopt;
  // Tenths of a GiB, rounded: 14.2 GiB.
  const uint64_t tenths = (used * 10 + (uint64_t{1} << 29)) >> 30;
  const std::string limit = vram_mib % 1024 == 0 ? std::to_string(vram_mib / 1024) + "GiB" : std::to_string(vram_mib) + "MiB";
  return "used " + std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB of VRAM over its vram: " + limit;
}

}  // namespace allot
