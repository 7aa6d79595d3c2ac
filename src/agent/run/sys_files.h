// Small file operations for the runner's kernel interfaces (cgroupfs, /proc) and its own records,
// returning Status with the path and errno text so a refusal names what was refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

// How a write meets a missing file: cgroupfs files exist or the kernel lacks them; regular files
// (a fake cgroup root in tests, the runner's records) are created.
enum class IfMissing { kCreate, kFail };

Result<std::string> ReadText(const std::string& path);
// One write(2) of `text`, as cgroupfs wants (a value split across writes is refused there).
Status WriteText(const std::string& path, const std::string& text, IfMissing missing = IfMissing::kCreate);
// Writes a temporary file beside `path` (O_EXCL, O_NOFOLLOW) and renames it over `path`, so a
// reader sees the old or the new content and a symlink planted at `path` is replaced, not followed.
Status ReplaceFile(const std::string& path, const std::string& text, mode_t mode);
bool Exists(const std::string& path);
// Every pid listed in a cgroup.procs file; empty when the file is gone.
std::vector<pid_t> ReadPids(const std::string& procs_path);
// "Permission denied": strerror without the thread-safety trap.
std::string ErrnoText(int err);
// Wall-clock milliseconds since the epoch (the runner's default clock).
int64_t WallMillis();
// Sleeps `ms` milliseconds (restarting on EINTR).
void SleepMillis(int64_t ms);

}  // namespace allot
