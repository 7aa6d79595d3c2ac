// One task's cgroups: created with its limits before the task starts, joined by the task's first
// process before it execs (so nothing of the task ever runs unlimited), watched for OOM kills,
// killed as a whole tree, removed after. Paths come from a CgroupLayout, so tests point it at a
// scratch directory and read back what was written.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/cgroup_layout.h"
#include "agent/run/device_cgroup.h"
#include "core/status.h"

namespace allot {

struct CgroupLimits {
  int64_t cpu_millis = 0;   // 0: none. 1000 = one core: quota = millis × period / 1000
  int64_t memory_mib = 0;   // 0: none. Swap is capped to nothing where the kernel accounts it.
  int64_t pids_max = 0;     // 0: none
  // The only devices the task may open (device_cgroup.h); nullopt: devices are not confined.
  std::optional<std::vector<DeviceRule>> devices;
  // Equal limits: a kept task cgroup written with one may run a task asking for the other.
  bool operator==(const CgroupLimits&) const = default;
};

// The CFS period the runner uses in both versions (the kernel's default).
inline constexpr int64_t kCpuPeriodUs = 100000;

// Which of the limits a task may ask for this host's cgroups carry: a controller that is not
// mounted (v1), or not delegated to the agent's own cgroup (v2: absent from its cgroup.controllers,
// as when a container or a parent slice enables only memory below itself), limits nothing.
struct CgroupControllers {
  bool cpu = false;
  bool memory = false;
  bool pids = false;

  // "cpu, pids": those missing; "" when all three are there.
  std::string Missing() const;
  // `limits` without the ones no controller here carries (a task still runs, unlimited in those).
  CgroupLimits Carried(CgroupLimits limits) const;
};

// Creates <own>/<group> in every hierarchy of `layout` and, in pure v2, enables the cpu, memory
// and pids controllers its own cgroup is given for the group's children. When the agent's own v2
// cgroup holds processes (v2 lets only leaves hold them once controllers are enabled below), the
// agent moves itself into the leaf <own>/<group>-agent first; when others stay there, the error
// names them. Idempotent; the runner calls it once to learn whether cgroups are writable here at
// all, and which limits they carry.
Result<CgroupControllers> PrepareCgroupGroup(const CgroupLayout& layout, const std::string& group);
// Removes <own>/<group> wherever it is empty; best effort (a group with tasks stays).
void RemoveCgroupGroup(const CgroupLayout& layout, const std::string& group);

class TaskCgroup {
 public:
  TaskCgroup() = default;

  // REQUIRES: PrepareCgroupGroup(layout, group) succeeded.
  // Makes <own>/<group>/<key> in each hierarchy and writes `limits`. Files the kernel may lack
  // (memory.swap.max, memory.memsw.limit_in_bytes, memory.oom.group) are written only where they
  // exist. Device rules go to the v1 devices controller and, where there is a v2 tree, into a
  // BPF program attached to the task's v2 cgroup (both on a hybrid host). Fails naming the file
  // and the kernel's refusal; what was made is removed again. With `programs`, the v2 device
  // program comes from that cache (loaded once per distinct rule set; device_cgroup.h).
  static Result<TaskCgroup> Create(const CgroupLayout& layout, const std::string& group,
                                   const std::string& key, const CgroupLimits& limits,
                                   DeviceProgramCache* programs = nullptr);
  // The cgroups Create makes for `key` (made by this agent or by a previous run of it), taken as
  // they are: nothing is created or written. To kill and remove what a task left behind.
  static TaskCgroup Adopt(const CgroupLayout& layout, const std::string& group, const std::string& key);

  // The cgroup.procs files the task's first process writes "0" into (itself) before exec.
  const std::vector<std::string>& procs_files() const { return procs_; }
  // The task's directories, v2 first; for logs and tests.
  std::vector<std::string> dirs() const;
  // The cpu controller's directory (v2 or v1), to read cpu.stat.
  std::string cpu_dir() const { return v2_limits_ ? v2_ : cpu_; }

  // True once the kernel OOM-killed a process in this cgroup (memory.events or memory.oom_control)
  // since it was made, or since the last ForgetOomKills.
  bool OomKilled() const;
  // Kept for another task (Runner): the kills so far were the last task's. The counter is the
  // kernel's own, cumulative; this remembers where it stands (one read).
  void ForgetOomKills() { oom_kills_forgotten_ = OomKills(); }
  // Live processes of the task (zombies left out: they hold no resources and cannot be killed).
  std::vector<pid_t> LivePids() const;
  // Kills every process of the task and waits (up to timeout_ms) until none is left: cgroup.kill
  // where the kernel has it; else freeze, SIGKILL each listed pid, thaw, until the list is empty.
  // Ok at once when none is alive (then none can fork): a short task's sandbox is gone by then.
  Status KillAll(int64_t timeout_ms) const;
  // Removes the task's directories (they must be empty of processes) and, if now empty, the
  // group's. Idempotent.
  Status Remove();

 private:
  int64_t OomKills() const;

  std::string v2_, cpu_, memory_, pids_, freezer_, devices_;
  bool v2_limits_ = false;
  int64_t oom_kills_forgotten_ = 0;
  std::vector<std::string> procs_;
  std::vector<std::string> group_dirs_;
};

}  // namespace allot
