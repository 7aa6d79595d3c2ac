#include "agent/node/dedicated_clusters.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "agent/cluster/assigned_slurm.h"
#include "agent/cluster/provision_hook.h"
#include "agent/cluster/tenant_user.h"
#include "agent/run/sys_files.h"

namespace fs = std::filesystem;

namespace allot {
namespace {

template <class T>
bool Done(std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

ProvisionWindow WindowOf(const ClusterAssignment& a) {
  return ProvisionWindow{a.reservation, a.tenant, a.start_ms, a.end_ms, a.nodes};
}

}  // namespace

DedicatedClusters::DedicatedClusters(DedicatedClusterOptions options) : options_(std::move(options)) {}

DedicatedClusters::~DedicatedClusters() { StopAll(); }

void DedicatedClusters::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
  else std::cerr << "allot-agent: " << line << "\n";
}

void DedicatedClusters::Reconcile(const std::vector<ClusterAssignment>& desired, int64_t now) {
  // 1. Take in the starts and stops that finished.
  for (auto& [key, e] : clusters_) {
    if (!Done(e.op)) continue;
    e.shown = e.op.get();
    if (e.stopping) {
      e.stopped_ms = now;
      Log("cluster " + key + " (reservation " + e.a.reservation + ", " + e.a.orchestrator + "): torn down" +
          (e.shown.error.empty() ? "" : ": " + e.shown.error));
    } else {
      Log("cluster " + key + " (reservation " + e.a.reservation + ", " + e.a.orchestrator + "): " + e.shown.state +
          (e.shown.error.empty() ? "" : ": " + e.shown.error));
    }
  }
  // 2. Start what opens; follow an extended end and changed keys.
  std::map<std::string, const ClusterAssignment*> wanted;
  for (const ClusterAssignment& a : desired) {
    wanted[a.key()] = &a;
    auto it = clusters_.find(a.key());
    if (it == clusters_.end()) {
      if (now >= a.start_ms && now < a.end_ms) StartOne(a);
      continue;
    }
    Entry& e = it->second;
    if (e.stopping) continue;
    e.a.end_ms = a.end_ms;
    if (!e.op.valid() && e.sshd && e.a.keys != a.keys && !a.keys.empty()) {
      Status s = e.sshd->SetAuthorizedKeys(a.keys);
      Log("cluster " + a.key() + ": authorized keys updated" + (s.ok() ? "" : ": " + s.message()));
      if (s.ok()) e.a.keys = a.keys;
    }
  }
  // 3. Stop what is over or no longer asked for (cancelled); forget what stopped a minute ago.
  for (auto it = clusters_.begin(); it != clusters_.end();) {
    Entry& e = it->second;
    const bool asked = wanted.count(it->first) > 0;
    if (!e.stopping && !e.op.valid() && (!asked || now >= e.a.end_ms)) StopOne(e);
    if (e.stopping && !e.op.valid() && e.stopped_ms > 0 && now - e.stopped_ms > 60000 && !asked) {
      it = clusters_.erase(it);
    } else {
      ++it;
    }
  }
}

void DedicatedClusters::StartOne(const ClusterAssignment& a) {
  Entry& e = clusters_[a.key()];
  e.a = a;
  // The uid on this thread: the runner's uid file is not shared with the start's thread.
  auto uid = options_.uid_for ? options_.uid_for(a.tenant) : Result<uint32_t>(Err(FailedPrecondition("no tenant uids")));
  if (a.uid != 0) {  // a multi-node Slurm: one uid on every node, allotd's
    const bool in_tasks = a.uid >= options_.task_uid_base && a.uid - options_.task_uid_base < options_.task_uid_count;
    uid = in_tasks ? Result<uint32_t>(Err(FailedPrecondition(
                         std::to_string(a.uid) + " is in this node's task uid range " + std::to_string(options_.task_uid_base) +
                         " to " + std::to_string(options_.task_uid_base + options_.task_uid_count - 1) +
                         "; expected a cluster uid outside it")))
                   : Result<uint32_t>(a.uid);
  }
  if (!uid) {
    e.shown = Outcome{"failed", "tenant uid: " + uid.error().message(), "", "", "", 0};
    Log("cluster " + a.key() + " (reservation " + a.reservation + "): " + e.shown.error);
    return;
  }
  e.uid = *uid;
  Log("cluster " + a.key() + " (reservation " + a.reservation + " of " + a.tenant + ", " + a.orchestrator +
      "): window open, starting");
  e.op = std::async(std::launch::async, [this, &e] { return Start(e); });
}

std::vector<ClusterReport> DedicatedClusters::Reports() const {
  std::vector<ClusterReport> out;
  for (const auto& [key, e] : clusters_) {
    ClusterReport r;
    r.reservation = e.a.reservation;
    r.reservation_id = e.a.reservation_id;
    r.window = e.a.window;
    r.state = e.op.valid() ? (e.stopping ? "stopping" : "starting") : e.shown.state;
    r.ssh_host = e.shown.ssh_host;
    r.ssh_port = e.shown.ssh_port;
    r.user = e.shown.user;
    r.login_details = e.shown.login_details;
    r.error = e.shown.error;
    if (r.state == "stopping" || r.state == "stopped") r.ssh_host.clear(), r.login_details.clear();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> DedicatedClusters::TenantsHoldingGpus() const {
  std::vector<std::string> out;
  for (const auto& [key, e] : clusters_) {
    if (e.slurm || e.hook_started || (e.op.valid() && !e.stopping)) out.push_back(e.a.tenant);
  }
  return out;
}

void DedicatedClusters::StopOne(Entry& e) {
  e.stopping = true;
  Log("cluster " + e.a.key() + " (reservation " + e.a.reservation + "): tearing down");
  e.op = std::async(std::launch::async, [this, &e] { return Stop(e); });
}

void DedicatedClusters::StopAll() {
  for (auto& [key, e] : clusters_) {
    if (e.op.valid()) e.shown = e.op.get();
    if (e.shown.state != "stopped") {
      e.stopping = true;
      e.shown = Stop(e);
    }
  }
}

DedicatedClusters::Outcome DedicatedClusters::Start(Entry& e) {
  const ClusterAssignment& a = e.a;
  Outcome out{"failed", "", "", "", "", 0};
  const std::string dir = Dir(a);
  const std::string user = TenantUserName(e.uid);
  out.user = user;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return out.error = "cannot make " + dir + ": " + ec.message(), out;
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, ec);
  // Written first: a restarted agent stops from this what a crash left (StopLeftovers). Without
  // the munge key (a secret the stop does not need) and so without the members it goes with.
  ClusterAssignment kept = a;
  kept.members.clear();
  kept.controller_host.clear();
  kept.controller_port = 0;
  kept.munge_key.clear();
  Json record = {{"assignment", ClusterAssignmentsJson({kept})[0]}, {"uid", e.uid}};
  if (Status s = ReplaceFile(dir + "/cluster.json", record.dump(), 0600); !s.ok()) return out.error = s.message(), out;
  if (Status s = EnsureTenantUser(TenantUser{user, e.uid, e.uid}); !s.ok()) return out.error = "tenant user: " + s.message(), out;
  auto fail = [&](const std::string& why) {
    Outcome stopped = Stop(e);
    out.ssh_host.clear();
    out.ssh_port = 0;
    out.error = why + (stopped.error.empty() ? "" : "; then, stopping: " + stopped.error);
    return out;
  };
  if (!a.keys.empty()) {
    TenantSshdSpec spec;
    spec.dir = dir + "/sshd";
    spec.uid = e.uid;
    spec.gid = e.uid;
    spec.user = user;
    spec.port = a.ssh_port;
    spec.authorized_keys = a.keys;
    spec.listen = options_.listen;
    e.sshd = std::make_unique<TenantSshd>(spec);
    if (Status s = e.sshd->Start(); !s.ok()) return fail("sshd: " + s.message());
    out.ssh_host = options_.address;
    out.ssh_port = a.ssh_port;
  }
  std::string details;
  if (!a.keys.empty()) {
    details = "ssh -p " + std::to_string(a.ssh_port) + " " + user + "@" + options_.address + "\n";
  } else {
    details = "no ssh: tenant '" + a.tenant + "' has no registered keys (allot keys add)\n";
  }
  if (a.orchestrator == "slurm") {
    SlurmHost host{options_.node, dir + "/slurm", e.uid, user, options_.gpu_files, options_.cpus, options_.memory_mib};
    auto spec = AssignedSlurmSpec(a, host);
    if (!spec) return fail("private Slurm: " + spec.error().message());
    PrivateSlurmOptions so;
    if (!options_.path.empty()) so.path = options_.path;
    e.slurm = std::make_unique<PrivateSlurm>(std::move(*spec), so);
    if (Status s = e.slurm->Start(); !s.ok()) return fail("private Slurm: " + s.message());
    if (Status s = e.slurm->WaitReady(options_.ready_timeout_ms); !s.ok()) return fail("private Slurm: " + s.message());
    details += e.slurm->LoginDetails();
  } else if (a.orchestrator == "hook") {
    if (options_.provision_hook.empty()) return fail("orchestrator hook: this agent has no --provision-hook");
    ProvisionHookOptions ho;
    ho.executable = options_.provision_hook;
    ho.timeout_ms = options_.hook_timeout_ms;
    e.hook_started = true;  // "end" runs even after a "start" that failed halfway
    auto answer = RunProvisionHook(ho, HookPhase::kStart, WindowOf(a));
    if (!answer) return fail(answer.error().message());
    details += answer->login_details;
  }
  out.state = "running";
  out.login_details = details;
  return out;
}

DedicatedClusters::Outcome DedicatedClusters::Stop(Entry& e) {
  Outcome out{"stopped", "", "", "", "", 0};
  std::vector<std::string> problems;
  if (e.slurm) {
    if (Status s = e.slurm->Stop(e.a.grace_ms); !s.ok()) problems.push_back(s.message());
    e.slurm.reset();
  }
  if (e.hook_started) {
    ProvisionHookOptions ho;
    ho.executable = options_.provision_hook;
    ho.timeout_ms = options_.hook_timeout_ms;
    if (auto r = RunProvisionHook(ho, HookPhase::kEnd, WindowOf(e.a)); !r) problems.push_back(r.error().message());
    e.hook_started = false;
  }
  if (e.sshd) {
    if (Status s = e.sshd->Stop(); !s.ok()) problems.push_back("sshd: " + s.message());
    e.sshd.reset();
  }
  std::error_code ec;
  fs::remove_all(Dir(e.a), ec);
  if (ec) problems.push_back("removing " + Dir(e.a) + ": " + ec.message());
  for (const std::string& p : problems) out.error += (out.error.empty() ? "" : "; ") + p;
  return out;
}

std::string DedicatedClusters::StopLeftovers() {
  int stopped = 0;
  std::vector<std::string> problems;
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator(options_.dir, ec)) {
    auto text = ReadText((d.path() / "cluster.json").string());
    Json record = text ? Json::parse(*text, nullptr, false) : Json();
    auto parsed = record.is_object() ? ParseClusterAssignments(Json{{"clusters", Json::array({record.value("assignment", Json())})}})
                                     : Result<std::vector<ClusterAssignment>>(Err(InvalidArgument("no cluster.json")));
    Entry e;
    if (parsed && parsed->size() == 1 && parsed->front().key() == d.path().filename().string()) {
      e.a = parsed->front();
      e.uid = record.value("uid", 0u);
      const std::string user = TenantUserName(e.uid);
      if (fs::exists(d.path() / "sshd")) {
        TenantSshdSpec spec;
        spec.dir = (d.path() / "sshd").string();
        spec.uid = spec.gid = e.uid;
        spec.user = user;
        spec.port = e.a.ssh_port;
        spec.authorized_keys = e.a.keys;
        spec.listen = options_.listen;
        e.sshd = std::make_unique<TenantSshd>(spec);
      }
      if (fs::exists(d.path() / "slurm")) {
        PrivateSlurmSpec spec;
        spec.cluster = "allot-" + e.a.key();
        spec.dir = (d.path() / "slurm").string();
        spec.uid = spec.gid = e.uid;
        spec.user = user;
        spec.controller_port = e.a.slurmctld_port;
        spec.nodes.push_back(PrivateSlurmNode{options_.node, 0, 1, 1024, e.a.slurmd_port, {}});
        e.slurm = std::make_unique<PrivateSlurm>(spec);
      }
      e.hook_started = e.a.orchestrator == "hook" && !options_.provision_hook.empty();
      e.a.grace_ms = 0;
      Outcome o = Stop(e);
      if (!o.error.empty()) problems.push_back(d.path().filename().string() + ": " + o.error);
    } else {
      fs::remove_all(d.path(), ec);  // nothing was started before cluster.json was written
    }
    ++stopped;
  }
  std::string line = stopped == 0 ? "no dedicated cluster left by a previous run"
                                   : "stopped " + std::to_string(stopped) + " dedicated cluster(s) left by a previous run";
  for (const std::string& p : problems) line += "; could not: " + p;
  return line;
}

}  // namespace allot
