// NodeAgent's task lifecycle: reconciling the tasks it runs with what allotd assigns (MIG
// readiness, device nodes, scrubs between tenants), starting a round's tasks together, and
// reaping their exits (the heartbeat that reports them is in node_agent.cc).
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "agent/node/job_environment.h"
#include "agent/node/node_agent.h"
#include "agent/run/scrub.h"
#include "agent/run/spawn.h"
#include "agent/run/task_env.h"
#include "core/calendar.h"
#include "core/quantity.h"

namespace fs = std::filesystem;

namespace allot {

void NodeAgent::Reconcile(int64_t now) {
  std::optional<std::vector<Assignment>> desired;
  {
    std::lock_guard lock(desired_mu_);
    desired = desired_;
    if (desired && mig_) mig_->SetDesired(desired_mig_);
  }
  if (!desired) return;
  if (mig_) {
    std::set<std::pair<int, MigSlotName>> in_use;
    for (const auto& [key, t] : tasks_) {
      if (t.exit || t.a.share != ShareKind::kMig) continue;
      for (int g : t.a.gpus) in_use.insert({g, {t.a.mig_profile, t.a.mig_start}});
    }
    mig_->Sync(now, in_use);
  }
  std::set<std::string> wanted;
  std::vector<Starting> ready;
  for (const Assignment& a : *desired) {
    std::string key = a.key();
    wanted.insert(key);
    auto it = tasks_.find(key);
    if (it == tasks_.end()) {
      if (!MigReadyFor(a, now)) continue;
      if (Status s = StartTask(a, now, ready); !s.ok()) Log("task " + key + " (" + a.job + "): " + s.message());
      continue;
    }
    Local& t = it->second;
    if (a.share == ShareKind::kMps && !t.exit && a.mps_throttle_percent != t.throttle_applied && now >= t.next_throttle_try) {
      ApplyThrottle(t, a, now);
    }
    if (a.preempt_deadline_ms >= 0 && !t.preempt_sent && !t.exit) {
      Status s = runner_->Preempt(key, a.preempt_deadline_ms);
      t.preempt_sent = true;
      Log("task " + key + " (" + a.job + "): preempted, deadline in " +
          std::to_string(std::max<int64_t>(0, a.preempt_deadline_ms - now) / 1000) + " s" + (s.ok() ? "" : ": " + s.message()));
    }
  }
  LaunchTasks(std::move(ready), now);
  StopIdleMpsDaemons();
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    Local& t = it->second;
    if (wanted.count(it->first)) {
      ++it;
    } else if (!t.exit) {
      runner_->Kill(it->first, "no longer assigned to this node");
      ++it;
    } else if (t.reported && t.shipped >= (fs::exists(t.log_path) ? fs::file_size(t.log_path) : 0)) {
      it = tasks_.erase(it);  // reported, its log shipped, and allotd has moved on
    } else {
      ++it;
    }
  }
}

bool NodeAgent::MigReadyFor(const Assignment& a, int64_t now) {
  std::string key = a.key();
  if (a.share != ShareKind::kMig || !mig_) return true;
  bool ready = true;
  for (int g : a.gpus) ready &= mig_->Find(g, a.mig_profile, a.mig_start) != nullptr;
  auto [since, fresh] = mig_waits_.emplace(key, now);
  if (ready || now - since->second >= options_.mig_wait_ms) {
    mig_waits_.erase(since);
    return true;
  }
  if (fresh) Log("task " + key + " (" + a.job + "): waits for MIG instance " + a.mig_profile + "@" + std::to_string(a.mig_start));
  return false;
}

Result<NodeAgent::TaskDevices> NodeAgent::Devices(const Assignment& a) {
  TaskDevices out;
  std::vector<const GpuInfo*> usable;
  for (const GpuInfo& g : inventory_.gpus) {
    if (g.problem.empty()) usable.push_back(&g);
  }
  for (int g : a.gpus) {
    if (g < 0 || g >= static_cast<int>(usable.size())) return Err(InvalidArgument("GPU " + std::to_string(g) + " is not on this node"));
    const GpuInfo& gpu = *usable[g];
    TaskGpu device{gpu.minor, gpu.pci_bus_id, std::nullopt};
    if (a.share == ShareKind::kMig) {
      // The node holds the plan's layout (MigLayoutKeeper): the task gets its instance, made ahead.
      const MigGpuInstanceInfo* mig = mig_ ? mig_->Find(g, a.mig_profile, a.mig_start) : nullptr;
      if (!mig) {
        std::string problem = mig_ ? mig_->Problem(g) : "";
        return Err(FailedPrecondition("MIG instance " + a.mig_profile + "@" + std::to_string(a.mig_start) + " on GPU " +
                                      std::to_string(g) + " does not exist on the node after " +
                                      std::to_string(options_.mig_wait_ms / 1000) + " s" +
                                      (problem.empty() ? "" : " (" + problem + ")")));
      }
      out.uuids.push_back(mig->compute[0].uuid);
      device.mig = MigSlice{mig->id, mig->compute[0].id};
    } else {
      out.uuids.push_back(gpu.uuid);
    }
    out.gpus.push_back(device);
  }
  return out;
}

void NodeAgent::StartFailed(Local local, const std::string& why, int64_t now) {
  TaskReport r = ReportOn(local.a);
  r.exited = true;
  r.exit_code = 127;
  r.reason = "could not start: " + why;
  r.started_ms = r.ended_ms = now;
  local.exit = std::move(r);
  local.reported = false;
  next_heartbeat_ = 0;  // as an exit: told at once
  std::string key = local.key;
  tasks_[key] = std::move(local);
}

Status NodeAgent::StartTask(const Assignment& a, int64_t now, std::vector<Starting>& ready) {
  Local local;
  local.a = a;
  local.key = a.key();
  local.log_path = (fs::path(options_.work_dir) / "logs" / (local.key + ".log")).string();
  auto fail = [&](const std::string& why) {
    StartFailed(local, why, now);
    return FailedPrecondition(why);
  };
  // An image still being unpacked: the task starts on a later turn of the loop, which keeps
  // heartbeating meanwhile (an unpack of gigabytes takes minutes; the lease does not).
  if (!a.image.empty()) {
    auto image = images_->Poll(a.image);
    if (!image) {
      if (image_waits_.insert(local.key).second) Log("task " + local.key + " (" + a.job + "): unpacking its image " + a.image);
      return Status::Ok();
    }
    image_waits_.erase(local.key);
    if (!*image) return fail(image->error().message());
  }
  auto devices = Devices(a);
  if (!devices) return fail(devices.error().message());
  // Scrub the memory each GPU passing from another tenant gives this one before it sees it: a
  // MIG task's instance alone (its UUID: the other instances' tasks run on), a whole GPU's all
  // of it. An MPS or time-sliced GPU on which a task still runs is not scrubbed (a scrub would
  // reach into that task; tenants share such a GPU by design, and shared pools are for trusted
  // tenants only): it is scrubbed when a task starts on it idle, whoever of the tenants that
  // used it since its last scrub (used_by_) is not that task's.
  const bool shared = a.share == ShareKind::kMps || a.share == ShareKind::kTimeslice;
  std::set<int> unscrubbed;  // passed on beside a running task
  for (size_t i = 0; i < a.gpus.size() && !options_.scrub_command.empty(); ++i) {
    const int g = a.gpus[i];
    const MigGpuInstanceInfo* mig = a.share == ShareKind::kMig && mig_ ? mig_->Find(g, a.mig_profile, a.mig_start) : nullptr;
    const std::string from = PreviousTenant(g, mig, a.tenant);
    if (from.empty()) continue;
    const std::string& uuid = devices->uuids[i];
    const std::string what = mig ? "MIG instance " + a.mig_profile + "@" + std::to_string(a.mig_start) + " of GPU " + std::to_string(g)
                                 : "GPU " + std::to_string(g);
    auto record = [&](bool ok, const std::string& detail) {
      scrubs_.push_back({g, uuid, from, a.tenant, ok, detail});
      std::ofstream(fs::path(options_.work_dir) / "scrubs.log", std::ios::app)
          << FormatRfc3339(now) << " " << what << " " << uuid << " from '" << from << "' to '" << a.tenant << "': " << detail << "\n";
    };
    if (std::vector<std::string> others = shared ? RunningOn(g, ready) : std::vector<std::string>{}; !others.empty()) {
      unscrubbed.insert(g);
      std::string names;
      for (const std::string& o : others) names += (names.empty() ? "'" : ", '") + o + "'";
      record(true, "not run: " + names + " still run" + (others.size() == 1 ? "s" : "") +
                       " a task on this shared GPU; it is scrubbed when a task starts on it idle");
      Log(what + " passes from '" + from + "' to '" + a.tenant + "' unscrubbed: " + names + " still on it");
      continue;
    }
    auto scrub = RunScrub(options_.scrub_command, {uuid}, options_.scrub_timeout_ms);
    record(scrub.has_value(), scrub ? "ok in " + std::to_string(scrub->duration_ms) + " ms" : scrub.error().message());
    if (!scrub) {
      pending_health_ = Check(0, false, false);
      pending_health_->checks.push_back({"scrub", false, "hardware", what + ": " + scrub.error().message()});
      return fail("the scrub of " + what + " failed: " + scrub.error().message());
    }
    Log("scrubbed " + what + " (from '" + from + "' to '" + a.tenant + "')");
  }
  std::string tenant_dir = (fs::path(options_.runner.work_root) / SafeFileName(a.tenant)).string();
  TaskEnvInput in;
  in.job_name = a.job;
  in.job_id = std::to_string(a.job_id);
  in.task_index = a.task;
  in.world_size = a.world_size;
  in.master_addr = a.master_addr;
  in.devices = devices->uuids;
  in.array_index = a.array_index;
  in.frame = a.frame;
  std::string checkpoints = options_.checkpoint_root.empty() ? tenant_dir + "/checkpoints"
                                                             : options_.checkpoint_root + "/" + SafeFileName(a.tenant);
  in.checkpoint_dir = checkpoints + "/" + SafeFileName(a.job) + "/task-" + std::to_string(a.task);
  in.preempt_file = tenant_dir + "/work/.allot/preempt-" + local.key;
  if (shared) {
    // In the tenant's own work directory (the task can create it there); a stale one from an
    // earlier run would report an old latency.
    local.latency = LatencyFile(tenant_dir + "/work/.allot-latency-" + local.key);
    ::unlink(local.latency.path().c_str());
  }
  if (a.share == ShareKind::kMps && !devices->uuids.empty()) {
    // The tenant's own daemon on this GPU: a daemon serves one uid at a time (mps_control.h).
    auto uid = MpsUid(a.tenant);
    if (!uid) return fail("MPS: " + uid.error().message());
    const MpsDaemon daemon{devices->uuids[0], *uid};
    if (Status s = mps_->Start(daemon); !s.ok()) return fail("MPS: " + s.message());
    mps_->SetDefaultActiveThreadPercentage(daemon, std::max(1, a.mps_percent));
    if (a.mps_memory_mib > 0) mps_->SetDefaultPinnedMemLimit(daemon, 0, a.mps_memory_mib);
    in.mps = MpsShare{mps_->PipeDir(daemon), std::max(1, a.mps_percent), a.mps_memory_mib};
  }
  std::vector<Bind> mps_pipes;  // the control daemon's pipe directory: clients connect there
  if (in.mps) mps_pipes.emplace_back(in.mps->pipe_dir, in.mps->pipe_dir);
  auto env = BuildTaskEnv(in);
  if (!env) return fail(env.error().message());
  if (shared) env->emplace_back("ALLOT_LATENCY_FILE", local.latency.path());
  // A service's replica (allotd gave it ALLOT_SERVICE) reports its load for the autoscaler.
  if (std::any_of(a.env.begin(), a.env.end(), [](const auto& kv) { return kv.first == "ALLOT_SERVICE"; })) {
    local.load = LoadFile(tenant_dir + "/work/.allot-load-" + local.key);
    ::unlink(local.load.path().c_str());
    env->emplace_back("ALLOT_LOAD_FILE", local.load.path());
  }
  TaskLaunch l;
  l.key = local.key;
  l.argv = a.command;
  l.env = *env;
  l.tenant = a.tenant;
  l.work_dir = tenant_dir + "/work";
  l.checkpoint_dir = in.checkpoint_dir;
  l.log_path = local.log_path;
  l.preempt_file = in.preempt_file;
  l.cpu_millis = a.cpu_millis;
  l.memory_mib = a.memory_mib;
  l.pids_max = options_.pids_max;
  l.time_limit_ms = a.time_limit_ms;
  l.network = options_.network == "all" || (options_.network == "gang" && a.world_size > 1);
  auto nodes = TaskDeviceNodes(options_.driver, devices->gpus);
  if (!nodes) return fail(nodes.error().message() + " (--device-root " + options_.driver.dev + ")");
  l.devices = std::move(*nodes);
  l.proc_driver = ProcDriverBinds(options_.driver, devices->gpus, driver_params_);
  JobEnvironmentContext job_env{&driver_files_, options_.storage_root, images_.get()};
  if (Status s = ApplyJobEnvironment(a, job_env, l); !s.ok()) return fail(s.message());
  l.writable_binds.insert(l.writable_binds.end(), mps_pipes.begin(), mps_pipes.end());
  // Scrubbed above for this tenant: its GPUs are this tenant's from here on, started or not
  // (beside their other users where a shared GPU passed on unscrubbed).
  for (int g : a.gpus) {
    MarkUsedBy(g, a.share == ShareKind::kMig && mig_ ? mig_->Find(g, a.mig_profile, a.mig_start) : nullptr, a.tenant,
               unscrubbed.count(g) > 0);
  }
  ready.push_back(Starting{std::move(local), std::move(l)});
  return Status::Ok();
}

void NodeAgent::LaunchTasks(std::vector<Starting> ready, int64_t now) {
  if (ready.empty()) return;
  std::vector<TaskLaunch> launches;
  for (const Starting& s : ready) launches.push_back(s.launch);
  std::vector<Result<pid_t>> pids = runner_->StartAll(launches, /*wait_for_exec=*/false);
  for (size_t i = 0; i < ready.size(); ++i) {
    Local& local = ready[i].local;
    const Assignment& a = local.a;
    if (!pids[i]) {
      Log("task " + local.key + " (" + a.job + "): " + pids[i].error().message());
      StartFailed(std::move(local), pids[i].error().message(), now);
      continue;
    }
    const pid_t pid = *pids[i];
    // Its exit wakes the loop (no pidfd, as on a kernel before 5.3: the loop's tick finds it).
    if (int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); fd >= 0) {
      if (auto old = exit_fds_.find(local.key); old != exit_fds_.end()) ::close(old->second);
      exit_fds_[local.key] = fd;
    }
    Log("started task " + local.key + " (" + a.job + " task " + std::to_string(a.task) + ", tenant " + a.tenant +
        ", pid " + std::to_string(pid) + ")");
    std::string key = local.key;
    tasks_[key] = std::move(local);
  }
}

Result<uint32_t> NodeAgent::MpsUid(const std::string& tenant) {
  auto uid = runner_->TenantUid(tenant);
  if (!uid && uid.error().code() == Code::kFailedPrecondition) return static_cast<uint32_t>(::getuid());  // not root
  return uid;
}

std::string NodeAgent::PreviousTenant(int g, const MigGpuInstanceInfo* mig, const std::string& tenant) const {
  auto other = [&](const std::set<std::string>& users) -> std::string {
    for (const std::string& u : users) {
      if (u != tenant) return u;
    }
    return "";
  };
  auto whole = used_by_.find({g, -1});
  if (!mig) {
    // The whole GPU: whoever used it whole, or any of its slices.
    if (whole != used_by_.end()) {
      if (std::string o = other(whole->second); !o.empty()) return o;
    }
    for (auto it = used_by_.lower_bound({g, 0}); it != used_by_.end() && it->first.first == g; ++it) {
      if (std::string o = other(it->second); !o.empty()) return o;
    }
    return "";
  }
  for (int s = mig->start; s < mig->start + std::max(1, mig->size); ++s) {
    auto it = used_by_.find({g, s});
    const auto* users = it != used_by_.end() ? &it->second : whole != used_by_.end() ? &whole->second : nullptr;
    if (!users) continue;
    if (std::string o = other(*users); !o.empty()) return o;
  }
  return "";
}

void NodeAgent::MarkUsedBy(int g, const MigGpuInstanceInfo* mig, const std::string& tenant, bool keep_others) {
  if (!mig) {
    std::set<std::string>& users = used_by_[{g, -1}];
    if (keep_others) {
      for (auto it = used_by_.lower_bound({g, 0}); it != used_by_.end() && it->first.first == g; ++it) {
        users.insert(it->second.begin(), it->second.end());
      }
    } else {
      users.clear();
    }
    used_by_.erase(used_by_.lower_bound({g, 0}), used_by_.lower_bound({g + 1, -1}));
    users.insert(tenant);
    return;
  }
  auto whole = used_by_.find({g, -1});
  for (int s = mig->start; s < mig->start + std::max(1, mig->size); ++s) {
    auto [it, added] = used_by_.try_emplace({g, s});
    // A slice first met here was the whole GPU's users'.
    if (added && keep_others && whole != used_by_.end()) it->second = whole->second;
    if (!keep_others) it->second.clear();
    it->second.insert(tenant);
  }
}

std::vector<std::string> NodeAgent::RunningOn(int g, const std::vector<Starting>& ready) const {
  std::set<std::string> others;
  auto on = [&](const Assignment& t) {
    if (std::find(t.gpus.begin(), t.gpus.end(), g) != t.gpus.end()) others.insert(t.tenant);
  };
  for (const auto& [key, t] : tasks_) {
    if (!t.exit) on(t.a);
  }
  for (const Starting& s : ready) on(s.local.a);
  return {others.begin(), others.end()};
}

void NodeAgent::StopIdleMpsDaemons() {
  if (options_.pool != Sharing::kMps) return;  // no daemon is ever started
  std::set<MpsDaemon> in_use;
  for (const auto& [key, t] : tasks_) {
    if (t.exit || t.a.share != ShareKind::kMps || t.a.gpus.empty()) continue;
    const int g = t.a.gpus[0];
    auto uid = MpsUid(t.a.tenant);
    if (uid && g >= 0 && g < static_cast<int>(inventory_.gpus.size())) in_use.insert({inventory_.gpus[g].uuid, *uid});
  }
  std::vector<std::string> problems;
  for (const MpsDaemon& d : mps_->StopAllBut(in_use, &problems))
    Log("MPS daemon of uid " + std::to_string(d.uid) + " on " + d.gpu_uuid + " stopped: none of its tasks runs there");
  for (const std::string& p : problems) Log("stopping an idle MPS daemon: " + p);
}

void NodeAgent::Reap(int64_t) {
  for (const TaskExit& e : runner_->Poll()) {
    auto it = tasks_.find(e.key);
    if (it == tasks_.end()) continue;
    Local& t = it->second;
    TaskReport r = ReportOn(t.a);
    r.exited = true;
    r.exit_code = e.exit_code;
    r.signal = e.signal;
    r.oom_killed = e.oom_killed;
    r.time_limit_exceeded = e.time_limit_exceeded;
    r.preempted = e.preempted;
    r.reason = e.reason;
    r.started_ms = e.started_ms;
    r.ended_ms = e.ended_ms;
    t.exit = std::move(r);
    Log("task " + e.key + " (" + t.a.job + "): " + e.reason);
    next_heartbeat_ = 0;  // tell allotd now: its GPUs go to the next job without waiting a beat
  }
}

}  // namespace allot
