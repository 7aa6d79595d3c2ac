#include "agent/run/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include "agent/run/image_root.h"
#include "agent/run/proc_tree.h"
#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"

namespace fs = std::filesystem;

namespace allot {
namespace {

// How often Poll reads a running task's OOM counter (see Poll).
constexpr int64_t kOomCheckMs = 50;

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string Duration(int64_t ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

// Whether `path` is `dir` or below it (both absolute, compared lexically).
bool Within(const std::string& path, const std::string& dir) {
  std::string p = fs::path(path).lexically_normal().string();
  std::string d = fs::path(dir).lexically_normal().string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && (d == "/" || p[d.size()] == '/'));
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("creating " + dir + ": " + ec.message());
  return Status::Ok();
}

EnvList TaskEnv(const TaskLaunch& launch) {
  EnvList env = {{"PATH", kTaskPath}, {"HOME", launch.work_dir}, {"LANG", "C.UTF-8"}};
  for (const auto& [name, value] : launch.env) {
    bool replaced = false;
    for (auto& [k, v] : env)
      if (k == name) v = value, replaced = true;
    if (!replaced) env.emplace_back(name, value);
  }
  return env;
}

std::string EnvValue(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env)
    if (k == name) return v;
  return "";
}

}  // namespace

std::vector<std::string> Runner::IsolationGaps() const {
  std::vector<std::string> gaps;
  if (!limits_enforced_) {
    gaps = {"cpu limit", "memory limit", "pids limit"};
  } else {
    if (!controllers_.cpu) gaps.push_back("cpu limit");
    if (!controllers_.memory) gaps.push_back("memory limit");
    if (!controllers_.pids) gaps.push_back("pids limit");
  }
  if (!confine_devices_) gaps.push_back("device cgroup");
  if (!sandboxed()) gaps.push_back("sandbox");
  if (!per_tenant_users()) gaps.push_back("tenant uids");
  return gaps;
}

Result<std::unique_ptr<Runner>> Runner::Create(RunnerOptions options) {
  if (options.work_root.empty() || options.work_root[0] != '/')
    return Err(InvalidArgument("work_root '" + options.work_root + "': expected an absolute path"));
  if (!options.clock) options.clock = WallMillis;
  if (options.init_path.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) options.init_path = (self.parent_path() / "allot-init").string();
  } else {
    options.init_path = fs::absolute(options.init_path).string();  // the child's argv[0]
  }
  auto sandbox = ResolveSandboxKind(options.sandbox, options.bwrap_path, options.init_path, ::geteuid() == 0);
  if (!sandbox) return Err(sandbox.error());
  if (Status s = MakeDirs(options.work_root); !s.ok()) return Err(s);
  if (options.roots_dir.empty()) options.roots_dir = (fs::path(options.work_root).parent_path() / "roots").string();
  // Hidden in every sandbox, so it is there to mount on (an agent's sweep empties it, keeps it).
  if (Status s = MakeDirs(options.roots_dir); !s.ok()) return Err(s);
  std::unique_ptr<Runner> r(new Runner(std::move(options)));
  RunnerOptions& o = r->options_;
  r->sandbox_ = *sandbox;
  if (r->sandbox_ == SandboxKind::kNative) {
    r->init_fd_ = ::open(o.init_path.c_str(), O_PATH | O_CLOEXEC);
    if (r->init_fd_ < 0) return Err(FailedPrecondition("sandbox: opening allot-init " + o.init_path + ": " + ErrnoText(errno)));
    r->stage_dir_ = o.roots_dir + "/.stage";
  }
  r->layout_ = o.cgroups ? *o.cgroups : DetectCgroups();

  std::string limits;
  if (r->layout_.mode == CgroupMode::kNone) {
    limits = "no cgroups mounted: tasks run WITHOUT cpu, memory and pids limits";
  } else if (auto on = PrepareCgroupGroup(r->layout_, o.cgroup_group); !on) {
    limits = "cgroups not writable (" + on.error().message() + "): tasks run WITHOUT cpu, memory and pids limits";
  } else {
    r->limits_enforced_ = true;
    r->controllers_ = *on;
    limits = r->layout_.Describe();
    if (std::string missing = on->Missing(); !missing.empty())
      limits += "; tasks run WITHOUT " + missing + " limits (no " + missing + " controller " +
                (r->layout_.v2_limits() ? "given to " + r->layout_.v2 + ": see its cgroup.controllers)" : "mounted)");
  }
  std::string devices;
  if (r->limits_enforced_ && o.confine_devices && ::geteuid() == 0 &&
      (!r->layout_.devices.empty() || !r->layout_.v2.empty())) {
    r->confine_devices_ = true;
    devices = std::string("devices: only the task's own (") +
              (r->layout_.devices.empty() ? "" : "v1 devices.allow") +
              (!r->layout_.devices.empty() && !r->layout_.v2.empty() ? " + " : "") +
              (r->layout_.v2.empty() ? "" : "v2 BPF program") + ")";
  } else if (!o.confine_devices) {
    devices = "devices: NOT confined by a cgroup (turned off)";
  } else {
    devices = "devices: NOT confined by a cgroup (needs root, writable cgroups and a v1 devices controller or a v2 tree)";
  }
  r->host_proc_driver_ = Exists("/proc/driver");
  r->host_root_ = HostRootEntries();
  std::string user;
  if (::geteuid() == 0) {
    auto uids = TenantUids::Load(o.work_root + "/.allot-tenant-uids", o.uids);
    if (!uids) return Err(uids.error());
    r->uids_ = std::move(*uids);
    user = "tasks run as their tenant's uid (from " + std::to_string(o.uids.base) + ")";
  } else {
    user = "not root: tasks run as the agent's uid " + std::to_string(::geteuid());
  }
  std::string sandboxing = r->sandbox_ == SandboxKind::kNative ? "sandbox: allot's own namespaces (init " + o.init_path + ")"
                           : r->sandboxed() ? "sandbox: bwrap " + o.bwrap_path
                                           : "sandbox: none";
  r->description_ = "runner: " + limits + "; " + devices + "; " + sandboxing + "; " + user;
  return r;
}

Runner::~Runner() {
  for (auto& [key, task] : tasks_) {
    KillTree(task);
    if (HasExited(task, 1000)) Finish(task);
  }
  for (SpareCgroup& spare : spare_cgroups_) spare.cgroup.Remove();
  for (TaskCgroup& cg : leftover_cgroups_) cg.Remove();
  if (limits_enforced_) RemoveCgroupGroup(layout_, options_.cgroup_group);
  if (init_fd_ >= 0) ::close(init_fd_);
}

Status Runner::CheckLaunch(const TaskLaunch& l) const {
  if (l.key.empty() || l.key.size() > 200 || l.key[0] == '.')
    return InvalidArgument("key '" + l.key + "': expected 1-200 characters, not starting with '.'");
  for (char c : l.key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return InvalidArgument("key '" + l.key + "': expected only [A-Za-z0-9._-] (it names a cgroup)");
  if (tasks_.count(l.key)) return Conflict("key '" + l.key + "': a task with this key is running");
  if (l.argv.empty()) return InvalidArgument("argv: empty (key " + l.key + ")");
  if (l.tenant.empty()) return InvalidArgument("tenant: empty (key " + l.key + ")");
  for (auto [name, value] : {std::pair{"work_dir", &l.work_dir}, {"checkpoint_dir", &l.checkpoint_dir},
                             {"log_path", &l.log_path}, {"preempt_file", &l.preempt_file}})
    if (value->empty() || (*value)[0] != '/')
      return InvalidArgument(std::string(name) + " '" + *value + "': expected an absolute path");
  if (Within(options_.work_root, fs::path(l.preempt_file).parent_path().string()))
    return InvalidArgument("preempt_file '" + l.preempt_file + "': its directory would expose the work root " +
                           options_.work_root + " to the task; put it in the work or checkpoint dir");
  for (auto [name, value] : {std::pair{"cpu_millis", l.cpu_millis}, {"memory_mib", l.memory_mib},
                             {"pids_max", l.pids_max}, {"time_limit_ms", l.time_limit_ms}})
    if (value < 0) return InvalidArgument(std::string(name) + " " + std::to_string(value) + ": expected 0 (none) or more");
  return Status::Ok();
}

Result<pid_t> Runner::Start(const TaskLaunch& l) { return std::move(StartAll({l})[0]); }

std::vector<Result<pid_t>> Runner::StartAll(const std::vector<TaskLaunch>& launches, bool wait_for_exec) {
  std::vector<Result<pid_t>> out(launches.size(), Err(Status()));
  std::vector<std::optional<Prepared>> prepared(launches.size());
  std::vector<std::optional<StartedSpawn>> started(launches.size());
  std::set<std::string> keys;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!keys.insert(launches[i].key).second) {
      out[i] = Err(Conflict("key '" + launches[i].key + "': a task with this key is starting"));
      continue;
    }
    auto p = Prepare(launches[i]);
    if (!p) {
      out[i] = Err(p.error());
      continue;
    }
    prepared[i] = std::move(*p);
  }
  // Each child joins its task's cgroups before it execs, and the kernel has a cgroup migration
  // wait for an RCU grace period (~5 ms), during which the thread that cloned the child is
  // suspended (CLONE_VFORK). Children cloned one after another each wait out their own; cloned
  // together, from a thread each, they share one.
  std::vector<Result<StartedSpawn>> spawns(launches.size(), Err(Status()));
  std::vector<std::function<void()>> clones;
  for (size_t i = 0; i < launches.size(); ++i)
    if (prepared[i]) clones.push_back([&spawns, &prepared, i] { spawns[i] = SpawnStart(prepared[i]->plan); });
  spawn_threads_.RunAll(std::move(clones));
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!prepared[i]) continue;
    if (!spawns[i]) {
      Abandon(prepared[i]->task);
      out[i] = Err(Status(spawns[i].error().code(), "starting task " + launches[i].key + ": " + spawns[i].error().message()));
      continue;
    }
    started[i] = *spawns[i];
  }
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!started[i]) continue;
    Task& task = prepared[i]->task;
    if (!wait_for_exec) {
      task.pid = started[i]->pid;
      task.started_ms = options_.clock();
      task.exec_report_fd = started[i]->report_fd;
      task.plan = std::make_shared<const SpawnPlan>(std::move(prepared[i]->plan));
      tasks_.emplace(launches[i].key, std::move(task));
      out[i] = started[i]->pid;
      continue;
    }
    auto pid = SpawnWait(prepared[i]->plan, *started[i]);
    if (!pid) {
      Abandon(task);
      out[i] = Err(Status(pid.error().code(), "starting task " + launches[i].key + ": " + pid.error().message()));
      continue;
    }
    task.pid = *pid;
    task.started_ms = options_.clock();
    tasks_.emplace(launches[i].key, std::move(task));
    out[i] = *pid;
  }
  return out;
}

void Runner::CheckExec(Task& task, bool block) {
  if (task.exec_report_fd < 0) return;
  pollfd p{task.exec_report_fd, POLLIN, 0};
  if (!block && ::poll(&p, 1, 0) <= 0) return;  // the child has neither exec'd nor failed yet
  Status s = SpawnOutcome(*task.plan, task.exec_report_fd);
  task.exec_report_fd = -1;
  if (!s.ok()) task.start_error = "could not start: starting task " + task.launch.key + ": " + s.message();
}

std::optional<std::pair<std::string, TaskCgroup>> Runner::TakeSpareCgroup(const CgroupLimits& limits,
                                                                        const std::string& key) {
  std::optional<std::pair<std::string, TaskCgroup>> out;
  for (auto it = spare_cgroups_.begin(); it != spare_cgroups_.end();) {
    const bool fits = !out && it->limits == limits;
    if (!fits && it->name != key) {
      ++it;
      continue;
    }
    if (fits) out.emplace(std::move(it->name), std::move(it->cgroup));
    else RemoveCgroup(std::move(it->cgroup));  // named as the new task: its Create would write into it
    it = spare_cgroups_.erase(it);
  }
  return out;
}

void Runner::RemoveCgroup(TaskCgroup cg) {
  if (!cg.Remove().ok()) leftover_cgroups_.push_back(std::move(cg));
}

void Runner::Abandon(Task& task) {
  cgroup_names_held_.erase(task.cgroup_name);
  if (task.cgroup) task.cgroup->Remove();
  if (!task.root_scratch.empty()) RemoveTaskRoot(task.root_scratch);
}

Result<Runner::Prepared> Runner::Prepare(const TaskLaunch& l) {
  if (Status s = CheckLaunch(l); !s.ok()) return Err(s);
  const EnvList env = TaskEnv(l);
  if (!l.image_rootfs.empty() && !sandboxed())
    return Err(FailedPrecondition("image: a task with its own root filesystem needs a sandbox (--sandbox native or bwrap)"));
  auto exe = l.image_rootfs.empty() ? ResolveCommand(l.argv[0], EnvValue(env, "PATH"))
                                    : ResolveCommandIn(l.image_rootfs, l.argv[0], EnvValue(env, "PATH"));
  if (!exe) return Err(exe.error());
  std::vector<std::string> command = l.argv;
  command[0] = *exe;

  const std::string preempt_dir = fs::path(l.preempt_file).parent_path().string();
  for (const std::string& dir : {l.work_dir, l.checkpoint_dir, fs::path(l.log_path).parent_path().string(), preempt_dir})
    if (Status s = MakeDirs(dir); !s.ok()) return Err(s);
  ::unlink(l.preempt_file.c_str());  // a stale one would tell the new task to stop

  Task task;
  task.launch = l;
  SpawnPlan plan;
  plan.env = env;
  plan.log_path = l.log_path;
  plan.cwd = l.work_dir;
  if (uids_) {
    auto uid = uids_->UidFor(l.tenant);
    if (!uid) return Err(uid.error());
    std::vector<std::string> owned = {l.work_dir, l.checkpoint_dir};
    for (const auto& [host, inside] : l.writable_binds) owned.push_back(host);  // the tenant's volumes
    for (const std::string& dir : owned)
      if (::lchown(dir.c_str(), *uid, *uid) != 0)
        return Err(Unavailable("giving " + dir + " to uid " + std::to_string(*uid) + ": " + ErrnoText(errno)));
    plan.drop_ids = true;
    plan.uid = *uid;
    plan.gid = *uid;
  }
  if (sandboxed()) {
    SandboxSpec spec;
    spec.bwrap_path = options_.bwrap_path;
    spec.work_root = options_.work_root;
    spec.hidden_roots = options_.hidden_roots;
    // Other tasks' image roots (their overlays' upper layers hold what they wrote) are no task's
    // to read, whichever tenant's.
    if (!Within(options_.roots_dir, options_.work_root)) spec.hidden_roots.push_back(options_.roots_dir);
    spec.work_dir = l.work_dir;
    spec.checkpoint_dir = l.checkpoint_dir;
    if (!Within(preempt_dir, l.work_dir) && !Within(preempt_dir, l.checkpoint_dir))
      spec.read_only_dirs.push_back(preempt_dir);
    spec.network = l.network;
    // The host's "/" as one read-only bind when every bind target exists on the host: bwrap
    // re-reads its mountinfo after each mount, so one bind per root entry (~20) cost ~8 ms of
    // a ~45 ms start on the 2-core build machine (docs/performance.md). A volume at a path
    // the host lacks (/data) needs the entries bound one by one, onto bwrap's own root.
    bool targets_exist = true;
    for (const auto* binds : {&l.read_only_binds, &l.writable_binds})
      for (const auto& [host, inside] : *binds) targets_exist = targets_exist && Exists(inside);
    if (!targets_exist) spec.host_root = host_root_;
    spec.devices = l.devices;
    spec.proc_driver = l.proc_driver;
    spec.read_only_binds = l.read_only_binds;
    spec.writable_binds = l.writable_binds;
    spec.shm_size_mib = l.shm_size_mib;
    if (!l.image_rootfs.empty()) {
      auto root = MountRoot(l, spec, task);
      if (!root) return Err(root.error());
      spec.root = *root;
    }
    if (sandbox_ == SandboxKind::kNative) {
      // The host's root stays whole (made read-only) unless a bind target is missing on it.
      // The stage is made when needed: a restarted agent's sweep of the roots directory removes it.
      if (!spec.host_root.empty())
        if (Status s = MakeDirs(stage_dir_); !s.ok()) return Err(s);
      plan.sandbox = NativeSandboxPlan(spec, stage_dir_, host_proc_driver_);
      plan.sandbox->init_fd = init_fd_;
      plan.argv = {options_.init_path};
      plan.argv.insert(plan.argv.end(), command.begin(), command.end());
    } else {
      plan.argv = BwrapArgv(spec, command, host_proc_driver_);
    }
  } else {
    plan.argv = command;
  }
  auto unmount = [&] {
    if (!task.root_scratch.empty()) RemoveTaskRoot(task.root_scratch);
  };
  if (limits_enforced_) {
    CgroupLimits limits = controllers_.Carried(CgroupLimits{l.cpu_millis, l.memory_mib, l.pids_max});
    if (confine_devices_) limits.devices = TaskDeviceRules(l.devices);
    if (auto spare = TakeSpareCgroup(limits, l.key)) {
      task.cgroup_name = std::move(spare->first);
      task.cgroup = std::move(spare->second);
    } else {
      // The group may have gone with its last task (Remove); making it again is idempotent.
      if (auto on = PrepareCgroupGroup(layout_, options_.cgroup_group); !on) {
        unmount();
        return Err(on.error());
      }
      // Create takes an existing directory as it is: never one another task holds.
      std::string name = l.key;
      while (cgroup_names_held_.count(name)) name = l.key + "~" + std::to_string(++cgroup_serial_);
      auto cg = TaskCgroup::Create(layout_, options_.cgroup_group, name, limits, &device_programs_);
      if (!cg) {
        unmount();
        return Err(cg.error());
      }
      task.cgroup_name = std::move(name);
      task.cgroup = std::move(*cg);
    }
    cgroup_names_held_.insert(task.cgroup_name);
    task.limits = std::move(limits);
    plan.join_cgroups = task.cgroup->procs_files();
  }
  return Prepared{std::move(task), std::move(plan)};
}

Result<std::string> Runner::MountRoot(const TaskLaunch& l, const SandboxSpec& spec, Task& task) const {
  MountPoints points;
  points.dirs = {"/dev", "/proc", "/tmp", spec.work_dir};
  if (!spec.work_root.empty()) points.dirs.push_back(spec.work_root);
  for (const std::string& d : spec.hidden_roots) points.dirs.push_back(d);
  if (!spec.checkpoint_dir.empty()) points.dirs.push_back(spec.checkpoint_dir);
  for (const std::string& d : spec.read_only_dirs) points.dirs.push_back(d);
  for (const auto* binds : {&spec.read_only_binds, &spec.writable_binds})
    for (const auto& [host, inside] : *binds) (fs::is_directory(host) ? points.dirs : points.files).push_back(inside);
  points.symlinks = l.image_links;
  points.contents = l.image_files;
  task.root_scratch = options_.roots_dir + "/" + l.key;
  RemoveTaskRoot(task.root_scratch);  // a previous life's, if any
  auto root = MountTaskRoot(l.image_rootfs, task.root_scratch, points);
  if (!root) task.root_scratch.clear();
  return root;
}

std::vector<pid_t> Runner::TaskPids(const Task& task) const {
  std::vector<pid_t> all;
  if (task.cgroup) {
    all = task.cgroup->LivePids();
  } else {
    all = Descendants(task.pid);
    all.insert(all.begin(), task.pid);
  }
  if (!sandboxed()) return all;
  // bwrap's two processes: the one we started and, in the new pid namespace, its init; allot's
  // own sandbox's one: allot-init, which we started.
  std::vector<pid_t> out;
  for (pid_t p : all)
    if (p != task.pid && (sandbox_ == SandboxKind::kNative || ParentOf(p) != task.pid)) out.push_back(p);
  return out;
}

bool Runner::KillTree(Task& task) {
  bool emptied = false;
  if (task.cgroup) {
    emptied = task.cgroup->KillAll(2000).ok();
  } else {
    // Without a cgroup: the session's process group, then what /proc shows below the task,
    // repeated because a process may fork between our scan and our kill.
    for (int round = 0; round < 20; ++round) {
      std::vector<pid_t> pids = Descendants(task.pid);
      ::kill(-task.pid, SIGKILL);
      ::kill(task.pid, SIGKILL);
      for (pid_t p : pids) ::kill(p, SIGKILL);
      if (pids.empty()) break;
      SleepMillis(2);
    }
  }
  ::kill(-task.pid, SIGKILL);
  return emptied;
}

bool Runner::HasExited(const Task& task, int64_t grace_ms) const {
  for (int64_t waited = 0;; waited += 2) {
    // WNOWAIT: the zombie stays, so its pid (and process group id) cannot be reused while the
    // rest of the tree is being killed.
    siginfo_t info{};
    int r = ::waitid(P_PID, static_cast<id_t>(task.pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if ((r == 0 && info.si_pid == task.pid) || (r < 0 && errno == ECHILD)) return true;
    if (waited >= grace_ms) return false;
    SleepMillis(2);
  }
}

TaskExit Runner::Finish(Task& task) {
  // The task is its first process: what it left behind goes with it, before the zombie is reaped.
  const bool emptied = KillTree(task);
  int wait_status = 0;
  bool lost = ::waitpid(task.pid, &wait_status, 0) != task.pid;  // ECHILD: reaped behind our back
  CheckExec(task, true);  // it has ended: its report is there (or its pipe closed)
  TaskExit e;
  e.key = task.launch.key;
  e.started_ms = task.started_ms;
  e.ended_ms = options_.clock();
  if (WIFEXITED(wait_status)) e.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) e.signal = WTERMSIG(wait_status);
  // bwrap reports a task killed by signal N as exit 128+N.
  if (sandboxed() && e.exit_code > 128 && e.exit_code < 128 + NSIG) {
    e.signal = e.exit_code - 128;
    e.exit_code = -1;
  }
  e.oom_killed = task.cause == Cause::kOom || (task.cgroup && task.cgroup->OomKilled());
  e.time_limit_exceeded = task.cause == Cause::kTimeLimit;
  e.preempted = task.preempted;

  const std::string how = e.signal ? "killed by " + SignalName(e.signal) : "exited with code " + std::to_string(e.exit_code);
  if (e.oom_killed)
    e.reason = how + ": memory limit " + std::to_string(task.launch.memory_mib) + " MiB exceeded (cgroup OOM kill)";
  else if (e.time_limit_exceeded)
    e.reason = "killed: time limit " + Duration(task.launch.time_limit_ms) + " exceeded";
  else if (task.cause == Cause::kPreemptDeadline)
    e.reason = "killed by SIGKILL: still running at the preemption deadline";
  else if (task.cause == Cause::kKilled)
    e.reason = "killed: " + task.kill_reason;
  else if (e.preempted)
    e.reason = how + " after preemption signal";
  else
    e.reason = how;
  if (lost) {
    e.exit_code = -1;
    e.reason = "ended; its exit status was collected elsewhere (is SIGCHLD ignored in the agent?)";
  }
  if (!task.start_error.empty()) {
    e.exit_code = 127;
    e.signal = 0;
    e.reason = task.start_error;
  }
  cgroup_names_held_.erase(task.cgroup_name);
  if (task.cgroup && emptied) {
    task.cgroup->ForgetOomKills();
    spare_cgroups_.push_back({task.cgroup_name, std::move(task.limits), std::move(*task.cgroup)});
    if (spare_cgroups_.size() > kMaxSpareCgroups) {
      RemoveCgroup(std::move(spare_cgroups_.front().cgroup));
      spare_cgroups_.erase(spare_cgroups_.begin());
    }
  } else if (task.cgroup) {
    RemoveCgroup(std::move(*task.cgroup));
  }
  if (!task.root_scratch.empty()) RemoveTaskRoot(task.root_scratch);
  return e;
}

std::vector<TaskExit> Runner::Poll() {
  for (auto it = leftover_cgroups_.begin(); it != leftover_cgroups_.end();)
    it = it->Remove().ok() ? leftover_cgroups_.erase(it) : it + 1;
  std::vector<TaskExit> out;
  const int64_t now = options_.clock();
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    Task& t = it->second;
    CheckExec(t, false);
    bool ended = HasExited(t, 0);
    // A task preempted before its command ran inside bwrap gets its SIGTERM now.
    if (!ended && t.preempted && !t.term_sent) t.term_sent = SendTerm(t);
    if (!ended && t.cause == Cause::kNone) {
      // The OOM counter is a file read per running task, and the agent polls at every exit of
      // any task: read it at most every kOomCheckMs of a task's life (within Poll's ~100 ms
      // contract). Finish reads it once more for the report.
      if (t.cgroup && now - std::max(t.started_ms, t.oom_checked_ms) >= kOomCheckMs) {
        t.oom_checked_ms = now;
        if (t.cgroup->OomKilled()) t.cause = Cause::kOom;
      }
      if (t.cause == Cause::kNone && t.launch.time_limit_ms > 0 && now - t.started_ms >= t.launch.time_limit_ms)
        t.cause = Cause::kTimeLimit;
      else if (t.cause == Cause::kNone && t.deadline_ms >= 0 && now >= t.deadline_ms)
        t.cause = Cause::kPreemptDeadline;
      if (t.cause != Cause::kNone) {
        KillTree(t);
        ended = HasExited(t, 500);
      }
    }
    if (ended) {
      out.push_back(Finish(t));
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Status Runner::Preempt(const std::string& key, int64_t deadline_ms) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return NotFound("task '" + key + "' is not running");
  Task& t = it->second;
  if (Status s = ReplaceFile(t.launch.preempt_file, std::to_string(deadline_ms) + "\n", 0644); !s.ok()) return s;
  t.preempted = true;
  t.deadline_ms = t.deadline_ms < 0 ? deadline_ms : std::min(t.deadline_ms, deadline_ms);
  t.term_sent = SendTerm(t);
  return Status::Ok();
}

bool Runner::SendTerm(const Task& task) const {
  std::vector<pid_t> pids = TaskPids(task);
  for (pid_t p : pids) ::kill(p, SIGTERM);
  if (pids.empty() && !sandboxed()) ::kill(-task.pid, SIGTERM);
  return !pids.empty() || !sandboxed();
}

Status Runner::Kill(const std::string& key, const std::string& reason) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return NotFound("task '" + key + "' is not running");
  Task& t = it->second;
  if (t.cause == Cause::kNone) {
    t.cause = Cause::kKilled;
    t.kill_reason = reason;
  }
  KillTree(t);
  return Status::Ok();
}

std::vector<std::string> Runner::Running() const {
  std::vector<std::string> keys;
  for (const auto& [key, task] : tasks_) keys.push_back(key);
  return keys;
}

Result<std::vector<std::string>> Runner::CgroupDirs(const std::string& key) const {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return Err(NotFound("task '" + key + "' is not running"));
  if (!it->second.cgroup) return std::vector<std::string>{};
  return it->second.cgroup->dirs();
}

Result<std::vector<pid_t>> Runner::Pids(const std::string& key) const {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return Err(NotFound("task '" + key + "' is not running"));
  return TaskPids(it->second);
}

Result<uint32_t> Runner::TenantUid(const std::string& tenant) {
  if (!uids_) return Err(FailedPrecondition("tenants have no uid of their own: the agent does not run as root"));
  return uids_->UidFor(tenant);
}

}  // namespace allot
