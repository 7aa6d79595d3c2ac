// The task cgroups under one agent's group (<own>/<group>/<key>), taken all at once and without
// the runner: what the agent's watchdog kills when the agent stops answering for its tasks, and
// what a restarted agent clears away before it registers. Each one is handled as a TaskCgroup
// (cgroup.kill where the kernel has it, else freeze, SIGKILL, thaw), so both the sweep and the
// runner kill a task the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/run/cgroup_layout.h"

namespace allot {

// The keys of the task cgroups under <own>/<group> in any hierarchy of `layout`, sorted.
std::vector<std::string> GroupTaskKeys(const CgroupLayout& layout, const std::string& group);

struct GroupSweep {
  int cgroups = 0;                    // task cgroups found
  int processes = 0;                  // live processes they held (all killed unless in problems)
  std::vector<std::string> problems;  // a cgroup whose processes survived or that stayed
};

struct SweepOptions {
  bool remove = false;      // also remove the emptied cgroups, and the group if it is then empty
  int64_t kill_timeout_ms = 2000;
};

// Kills every process of every task cgroup of the group.
GroupSweep SweepGroup(const CgroupLayout& layout, const std::string& group, const SweepOptions& options);

}  // namespace allot
