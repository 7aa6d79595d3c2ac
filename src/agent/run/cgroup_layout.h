// Which cgroup hierarchies this machine has and where this process sits in each, read from
// /proc/self/mounts and /proc/self/cgroup. The runner puts every task under its own cgroup
// (<own>/<group>/<task key>), never at a hierarchy's root: the agent may itself be confined (a
// container, a systemd slice) and its tasks must stay inside that confinement.
#pragma once

#include <string>
#include <string_view>

namespace allot {

enum class CgroupMode {
  kNone,    // no cgroup filesystem: tasks run without limits
  kV1,      // only v1 controllers
  kV2,      // unified (pure v2): limits, membership and cgroup.kill in one tree
  kHybrid,  // v1 controllers carry the limits; a controller-less v2 tree gives cgroup.kill
};

const char* CgroupModeName(CgroupMode mode);

// Directories of this process's own cgroups; "" where a hierarchy is not mounted. Tests build one
// over a scratch directory (a fake cgroup root) to check the files the runner writes.
struct CgroupLayout {
  CgroupMode mode = CgroupMode::kNone;
  std::string v2;       // own cgroup in the v2 tree (the "unified" mount when hybrid)
  std::string cpu;      // v1: own cgroups per controller
  std::string memory;
  std::string pids;
  std::string freezer;
  std::string devices;  // v1 devices controller (device access rules; v2 uses a BPF program)

  bool v2_limits() const { return mode == CgroupMode::kV2; }
  // One line for the agent's log: the mode and where limits, membership and kills go.
  std::string Describe() const;
};

// Pure: the layout that `mounts` (/proc/self/mounts) and `self_cgroup` (/proc/self/cgroup) give.
CgroupLayout ParseCgroupLayout(std::string_view mounts, std::string_view self_cgroup);

// This process's layout. When its own path is missing under a mount (a cgroup namespace whose
// root the mount does not show), the mount point itself is taken.
CgroupLayout DetectCgroups();

}  // namespace allot
