#include "agent/run/task_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "agent/run/sys_files.h"
#include "core/strings.h"

namespace allot {
namespace {

Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Unavailable("creating cgroup " + dir + ": " + ErrnoText(errno));
}

// An optional interface file: written if the kernel has it, skipped if not (one open, no stat).
Status WriteIfPresent(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::Ok() : Unavailable("writing '" + value + "' to " + path + ": " + ErrnoText(errno));
  ssize_t n;
  do n = ::write(fd, value.data(), value.size());
  while (n < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return Unavailable("writing '" + value + "' to " + path + ": " + (n < 0 ? ErrnoText(err) : "short write"));
  return Status::Ok();
}

int64_t CounterIn(const std::string& path, const std::string& name) {
  auto text = ReadText(path);
  if (!text) return 0;
  std::istringstream in(*text);
  std::string key;
  int64_t value = 0;
  while (in >> key >> value)
    if (key == name) return value;
  return 0;
}

bool IsZombieOrGone(pid_t pid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  size_t paren = stat->rfind(')');
  return paren == std::string::npos || paren + 2 >= stat->size() || (*stat)[paren + 2] == 'Z' ||
         (*stat)[paren + 2] == 'X';
}

// Enables cpu, memory and pids (those `dir` is given) for `dir`'s children, in one write; which.
Result<CgroupControllers> EnableControllers(const std::string& dir) {
  auto offered = ReadText(dir + "/cgroup.controllers");
  if (!offered) return Err(offered.error());
  std::istringstream in(*offered);
  std::set<std::string> have;
  for (std::string c; in >> c;) have.insert(c);
  CgroupControllers on{.cpu = have.count("cpu") > 0, .memory = have.count("memory") > 0, .pids = have.count("pids") > 0};
  std::string enable;
  for (const char* c : {"cpu", "memory", "pids"})
    if (have.count(c)) enable += std::string(enable.empty() ? "+" : " +") + c;
  if (enable.empty()) return on;
  if (Status s = WriteText(dir + "/cgroup.subtree_control", enable, IfMissing::kCreate); !s.ok()) return Err(s);
  return on;
}

// After the agent moved itself out of `own`, what still keeps `own` from enabling controllers:
// "; <own> still holds other processes (pid 12 bash, …): …", or "" when it holds none.
std::string OthersIn(const std::string& own) {
  std::vector<pid_t> pids = ReadPids(own + "/cgroup.procs");
  if (pids.empty()) return "";
  std::string list;
  for (size_t i = 0; i < pids.size() && i < 5; ++i) {
    auto comm = ReadText("/proc/" + std::to_string(pids[i]) + "/comm");
    std::string name = comm ? comm->substr(0, comm->find('\n')) : "?";
    list += (i ? ", pid " : "pid ") + std::to_string(pids[i]) + " " + name;
  }
  if (pids.size() > 5) list += ", and " + std::to_string(pids.size() - 5) + " more";
  return "; " + own + " still holds other processes (" + list +
         "): on cgroup v2 the agent needs a cgroup of its own, such as its systemd unit's with "
         "Delegate=yes (deploy/systemd/allot-agent.service)";
}

}  // namespace

std::string CgroupControllers::Missing() const {
  std::string out;
  for (auto [on, name] : {std::pair{cpu, "cpu"}, {memory, "memory"}, {pids, "pids"}})
    if (!on) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

CgroupLimits CgroupControllers::Carried(CgroupLimits limits) const {
  if (!cpu) limits.cpu_millis = 0;
  if (!memory) limits.memory_mib = 0;
  if (!pids) limits.pids_max = 0;
  return limits;
}

Result<CgroupControllers> PrepareCgroupGroup(const CgroupLayout& layout, const std::string& group) {
  if (layout.mode == CgroupMode::kNone) return Err(FailedPrecondition("no cgroup hierarchy is mounted"));
  if (layout.v2_limits()) {
    if (!EnableControllers(layout.v2)) {
      // "No internal processes": move the agent into a leaf of its own and try again.
      std::string leaf = layout.v2 + "/" + group + "-agent";
      if (Status s = MakeDir(leaf); !s.ok()) return Err(s);
      if (Status s = WriteText(leaf + "/cgroup.procs", "0", IfMissing::kFail); !s.ok()) return Err(s);
      if (auto on = EnableControllers(layout.v2); !on) return Err(Unavailable(on.error().message() + OthersIn(layout.v2)));
    }
    if (Status s = MakeDir(layout.v2 + "/" + group); !s.ok()) return Err(s);
    return EnableControllers(layout.v2 + "/" + group);
  }
  for (const std::string* own : {&layout.v2, &layout.cpu, &layout.memory, &layout.pids, &layout.freezer, &layout.devices}) {
    if (own->empty()) continue;
    if (own == &layout.freezer && !layout.v2.empty()) continue;  // cgroup.kill replaces freezing
    if (Status s = MakeDir(*own + "/" + group); !s.ok()) return Err(s);
  }
  return CgroupControllers{.cpu = !layout.cpu.empty(), .memory = !layout.memory.empty(), .pids = !layout.pids.empty()};
}

void RemoveCgroupGroup(const CgroupLayout& layout, const std::string& group) {
  for (const std::string* own : {&layout.v2, &layout.cpu, &layout.memory, &layout.pids, &layout.freezer, &layout.devices})
    if (!own->empty()) ::rmdir((*own + "/" + group).c_str());
}

TaskCgroup TaskCgroup::Adopt(const CgroupLayout& layout, const std::string& group, const std::string& key) {
  TaskCgroup cg;
  cg.v2_limits_ = layout.v2_limits();
  auto place = [&](const std::string& own, std::string& out) {
    if (own.empty()) return;
    cg.group_dirs_.push_back(own + "/" + group);
    out = own + "/" + group + "/" + key;
    cg.procs_.push_back(out + "/cgroup.procs");
  };
  place(layout.v2, cg.v2_);
  if (!cg.v2_limits_) {
    place(layout.cpu, cg.cpu_);
    place(layout.memory, cg.memory_);
    place(layout.pids, cg.pids_);
    if (layout.v2.empty()) place(layout.freezer, cg.freezer_);  // v1 alone: kill by freezing
    place(layout.devices, cg.devices_);  // v1 device rules (v2 has a BPF program instead)
  }
  return cg;
}

Result<TaskCgroup> TaskCgroup::Create(const CgroupLayout& layout, const std::string& group,
                                      const std::string& key, const CgroupLimits& limits,
                                      DeviceProgramCache* programs) {
  TaskCgroup cg = Adopt(layout, group, key);
  auto fail = [&](Status s) -> Result<TaskCgroup> {
    cg.Remove();
    return Err(std::move(s));
  };
  for (const std::string& dir : cg.dirs())
    if (Status s = MakeDir(dir); !s.ok()) return fail(s);

  const std::string cpu_dir = cg.v2_limits_ ? cg.v2_ : cg.cpu_;
  const std::string mem_dir = cg.v2_limits_ ? cg.v2_ : cg.memory_;
  const std::string pids_dir = cg.v2_limits_ ? cg.v2_ : cg.pids_;
  auto need = [&](const std::string& dir, const char* what) -> Status {
    if (!dir.empty()) return Status::Ok();
    return FailedPrecondition(std::string("a ") + what + " limit was asked for but no " + what +
                              " controller is mounted (" + layout.Describe() + ")");
  };
  Status s;
  if (limits.cpu_millis > 0) {
    const std::string quota = std::to_string(limits.cpu_millis * kCpuPeriodUs / 1000);
    if (!(s = need(cpu_dir, "cpu")).ok()) return fail(s);
    if (cg.v2_limits_) s = WriteText(cpu_dir + "/cpu.max", quota + " " + std::to_string(kCpuPeriodUs));
    else if ((s = WriteText(cpu_dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs))).ok())
      s = WriteText(cpu_dir + "/cpu.cfs_quota_us", quota);
    if (!s.ok()) return fail(s);
  }
  if (limits.memory_mib > 0) {
    const std::string bytes = std::to_string(limits.memory_mib * 1024 * 1024);
    if (!(s = need(mem_dir, "memory")).ok()) return fail(s);
    if (cg.v2_limits_) {
      if ((s = WriteText(mem_dir + "/memory.max", bytes)).ok() &&
          (s = WriteIfPresent(mem_dir + "/memory.swap.max", "0")).ok())
        s = WriteIfPresent(mem_dir + "/memory.oom.group", "1");  // kill the task as one, not a piece
    } else if ((s = WriteText(mem_dir + "/memory.limit_in_bytes", bytes)).ok()) {
      // memsw (memory + swap) must stay ≥ limit_in_bytes; equal means no swap.
      s = WriteIfPresent(mem_dir + "/memory.memsw.limit_in_bytes", bytes);
    }
    if (!s.ok()) return fail(s);
  }
  if (limits.pids_max > 0) {
    if (!(s = need(pids_dir, "pids")).ok()) return fail(s);
    if (!(s = WriteText(pids_dir + "/pids.max", std::to_string(limits.pids_max))).ok()) return fail(s);
  }
  if (limits.devices) {
    if (cg.devices_.empty() && cg.v2_.empty())
      return fail(FailedPrecondition("device rules were asked for but neither a v1 devices controller nor a v2 tree is mounted (" +
                                     layout.Describe() + ")"));
    if (!cg.devices_.empty() && !(s = ApplyV1DeviceRules(cg.devices_, *limits.devices)).ok()) return fail(s);
    if (!cg.v2_.empty() && !(s = AttachV2DeviceProgram(cg.v2_, *limits.devices, programs)).ok()) return fail(s);
  }
  return cg;
}

std::vector<std::string> TaskCgroup::dirs() const {
  std::vector<std::string> out;
  for (const std::string* d : {&v2_, &cpu_, &memory_, &pids_, &freezer_, &devices_})
    if (!d->empty()) out.push_back(*d);
  return out;
}

int64_t TaskCgroup::OomKills() const {
  if (v2_limits_) return CounterIn(v2_ + "/memory.events", "oom_kill");
  if (!memory_.empty()) return CounterIn(memory_ + "/memory.oom_control", "oom_kill");
  return 0;
}

bool TaskCgroup::OomKilled() const { return OomKills() > oom_kills_forgotten_; }

std::vector<pid_t> TaskCgroup::LivePids() const {
  std::vector<pid_t> live;
  for (const std::string* d : {&v2_, &pids_, &memory_, &freezer_, &cpu_}) {
    if (d->empty()) continue;
    for (pid_t p : ReadPids(*d + "/cgroup.procs"))
      if (!IsZombieOrGone(p)) live.push_back(p);
    return live;
  }
  return live;
}

Status TaskCgroup::KillAll(int64_t timeout_ms) const {
  if (LivePids().empty()) return Status::Ok();
  const bool has_kill = !v2_.empty() && Exists(v2_ + "/cgroup.kill");
  // The processes die a moment after the signal (a pid namespace's init tears its namespaces
  // down first): look again soon, then less often, up to every 5 ms.
  int64_t pause_us = 100;
  for (int64_t waited_us = 0;; waited_us += pause_us, pause_us = std::min<int64_t>(pause_us * 2, 5000)) {
    if (has_kill) {
      WriteText(v2_ + "/cgroup.kill", "1", IfMissing::kFail);
    } else {
      // Frozen, no process can fork a child we have not listed yet.
      if (!freezer_.empty()) WriteText(freezer_ + "/freezer.state", "FROZEN", IfMissing::kFail);
      for (pid_t p : LivePids()) ::kill(p, SIGKILL);
      if (!freezer_.empty()) WriteText(freezer_ + "/freezer.state", "THAWED", IfMissing::kFail);
    }
    std::vector<pid_t> left = LivePids();
    if (left.empty()) return Status::Ok();
    if (waited_us >= timeout_ms * 1000)
      return Unavailable(std::to_string(left.size()) + " process(es) of cgroup " + dirs().front() +
                         " survived SIGKILL for " + std::to_string(timeout_ms) + " ms");
    std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
  }
}

Status TaskCgroup::Remove() {
  Status first;
  for (std::string* d : {&v2_, &cpu_, &memory_, &pids_, &freezer_, &devices_}) {
    if (d->empty()) continue;
    if (::rmdir(d->c_str()) != 0 && errno != ENOENT) {
      if (first.ok()) first = Unavailable("removing cgroup " + *d + ": " + ErrnoText(errno));
      continue;
    }
    d->clear();
  }
  // The group directory goes when its last task has; another task's presence keeps it (EBUSY).
  if (first.ok())
    for (const std::string& g : group_dirs_) ::rmdir(g.c_str());
  return first;
}

}  // namespace allot
