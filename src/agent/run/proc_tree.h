// A process tree read from /proc: what the runner signals when a task has no cgroup to list its
// processes (cgroups not writable here), and daemons found by their environment (MPS control
// daemons, which detach from whoever started them).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace allot {

// The parent of `pid`, or -1 when it is gone.
pid_t ParentOf(pid_t pid);

// Every live descendant of `root` (not `root` itself), parents before children. A snapshot: a
// process forked after the scan is not in it, so callers that kill repeat until it is empty.
std::vector<pid_t> Descendants(pid_t root);

// Live processes whose initial environment holds `entry` ("NAME=value") exactly; reading another
// user's environment needs root (or the same uid).
std::vector<pid_t> ProcessesWithEnv(const std::string& entry);
bool HasEnv(pid_t pid, const std::string& entry);

}  // namespace allot
