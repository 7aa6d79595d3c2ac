#include "agent/run/group_cgroups.h"

#include <dirent.h>

#include <set>

#include "agent/run/task_cgroup.h"

namespace allot {

std::vector<std::string> GroupTaskKeys(const CgroupLayout& layout, const std::string& group) {
  std::set<std::string> keys;
  for (const std::string* own : {&layout.v2, &layout.cpu, &layout.memory, &layout.pids, &layout.freezer, &layout.devices}) {
    if (own->empty()) continue;
    DIR* dir = ::opendir((*own + "/" + group).c_str());
    if (!dir) continue;
    while (const dirent* e = ::readdir(dir))
      if (e->d_type == DT_DIR && e->d_name[0] != '.') keys.insert(e->d_name);
    ::closedir(dir);
  }
  return {keys.begin(), keys.end()};
}

GroupSweep SweepGroup(const CgroupLayout& layout, const std::string& group, const SweepOptions& options) {
  GroupSweep sweep;
  for (const std::string& key : GroupTaskKeys(layout, group)) {
    TaskCgroup cg = TaskCgroup::Adopt(layout, group, key);
    ++sweep.cgroups;
    sweep.processes += static_cast<int>(cg.LivePids().size());
    if (Status s = cg.KillAll(options.kill_timeout_ms); !s.ok()) {
      sweep.problems.push_back(s.message());
      continue;
    }
    if (options.remove)
      if (Status s = cg.Remove(); !s.ok()) sweep.problems.push_back(s.message());
  }
  return sweep;
}

}  // namespace allot
