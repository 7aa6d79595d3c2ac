// A process tree read from /proc: what the runner signals when a task has no cgroup to list its
// processes (cgroups not writable here).
#pragma once

#include <sys/types.h>

#include <vector>

namespace allot {

// The parent of `pid`, or -1 when it is gone.
pid_t ParentOf(pid_t pid);

// Every live descendant of `root` (not `root` itself), parents before children. A snapshot: a
// process forked after the scan is not in it, so callers that kill repeat until it is empty.
std::vector<pid_t> Descendants(pid_t root);

}  // namespace allot
