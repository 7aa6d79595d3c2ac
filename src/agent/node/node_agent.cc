#include "agent/node/node_agent.h"

#include "agent/node/node_labels.h"

#include <httplib.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agent/node/job_environment.h"
#include "agent/node/leftovers.h"
#include "agent/run/reachable.h"
#include "agent/run/scrub.h"
#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"
#include "agent/run/task_env.h"
#include "core/calendar.h"
#include "core/quantity.h"
#include "core/version.h"

namespace fs = std::filesystem;

namespace allot {
namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The main loop's calls (heartbeat, logs) use LeaseClient instead: they give up when the lease
// would run out, so a lease running out while allotd is unreachable is acted on at once.
std::unique_ptr<httplib::Client> Client(const AgentOptions& o, int64_t read_timeout_s) {
  auto c = std::make_unique<httplib::Client>(o.server);
  c->set_bearer_token_auth(o.token);
  c->set_connection_timeout(5);
  c->set_read_timeout(read_timeout_s);
  c->set_write_timeout(10);
  c->set_keep_alive(true);
  // Requests are small and answered at once: a body held back by Nagle behind its headers waits
  // for allotd's delayed ACK (~40 ms per heartbeat, i.e. per reported exit).
  c->set_tcp_nodelay(true);
  if (!o.ca_cert.empty()) {
    c->set_ca_cert_path(o.ca_cert);
    c->enable_server_certificate_verification(true);
  }
  return c;
}

// "409 node 'x' was declared lost…" from an error answer, or the transport's error.
std::string Describe(const httplib::Result& r) {
  if (!r) return "allotd unreachable: " + httplib::to_string(r.error());
  Json body = Json::parse(r->body, nullptr, false);
  std::string message = body.is_object() && body.contains("error") ? body["error"].value("message", "") : r->body;
  return std::to_string(r->status) + " " + message;
}

}  // namespace

std::string HostCpus() { return std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

std::string HostMemory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return std::to_string(kib / 1024) + "Mi";
    in.ignore(1 << 10, '\n');
  }
  return "1Gi";
}

NodeAgent::NodeAgent(AgentOptions options, std::unique_ptr<GpuBackend> gpus)
    : options_(std::move(options)), gpus_(std::move(gpus)) {}

NodeAgent::~NodeAgent() {
  stopping_ = true;
  if (poller_.joinable()) poller_.join();
  for (const auto& [key, fd] : exit_fds_) ::close(fd);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void NodeAgent::Wake() {
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

void NodeAgent::WaitForWork(int64_t max_ms) {
  std::vector<pollfd> fds;
  if (wake_fd_ >= 0) fds.push_back({wake_fd_, POLLIN, 0});
  for (auto it = exit_fds_.begin(); it != exit_fds_.end();) {
    auto t = tasks_.find(it->first);
    if (t == tasks_.end() || t->second.exit) {  // reaped (or fenced away): nothing more to wait for
      ::close(it->second);
      it = exit_fds_.erase(it);
      continue;
    }
    fds.push_back({it->second, POLLIN, 0});
    ++it;
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(max_ms));
    return;
  }
  if (::poll(fds.data(), fds.size(), static_cast<int>(max_ms)) > 0 && wake_fd_ >= 0 && (fds[0].revents & POLLIN)) {
    uint64_t n = 0;
    (void)!::read(wake_fd_, &n, sizeof n);
  }
}

void NodeAgent::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "allot-agent: " << line << "\n";
  }
}

Status NodeAgent::Init() {
  if (options_.node.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    options_.node = host;
  }
  if (options_.cpu.empty()) options_.cpu = HostCpus();
  if (options_.memory.empty()) options_.memory = HostMemory();
  std::error_code ec;
  fs::path work = fs::absolute(options_.work_dir, ec);
  fs::create_directories(work / "tenants", ec);
  fs::create_directories(work / "logs", ec);
  if (ec) return Unavailable("--work-dir: cannot create " + work.string() + ": " + ec.message());
  // Task logs are each readable by their own task's group only (spawn.cc); nobody lists them.
  fs::permissions(work / "logs", fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, ec);
  if (ec) return Unavailable("--work-dir: cannot restrict " + (work / "logs").string() + ": " + ec.message());
  options_.work_dir = work.string();
  if (Status s = CheckTaskDirsReachable((work / "tenants").string()); !s.ok()) return s;
  if (gpus_) {
    auto inv = gpus_->Discover();
    if (!inv) return inv.error();
    inventory_ = std::move(*inv);
    std::vector<std::string> usable;  // by the index assignments use
    for (const GpuInfo& g : inventory_.gpus) {
      if (!g.problem.empty()) Log("GPU " + std::to_string(g.index) + " (" + g.uuid + ") is not registered: " + g.problem);
      if (g.problem.empty()) usable.push_back(g.uuid);
    }
    if (options_.pool == Sharing::kMig) mig_ = std::make_unique<MigLayoutKeeper>(*gpus_, usable, [this](const std::string& l) { Log(l); });
  }
  options_.runner.work_root = (work / "tenants").string();
  // Tasks see the driver's params with ModifyDeviceFiles: 0, so the driver never makes device
  // nodes inside a sandbox (what NVIDIA's container toolkit does too).
  if (auto params = ReadText(options_.driver.proc_driver + "/params")) {
    fs::create_directories(work / "driver", ec);
    driver_params_ = (work / "driver" / "params").string();
    if (Status s = ReplaceFile(driver_params_, ParamsWithoutDeviceFileChanges(*params), 0644); !s.ok()) return s;
  }
  if (!options_.checkpoint_root.empty()) {
    fs::path root = fs::absolute(options_.checkpoint_root, ec);
    fs::create_directories(root, ec);
    if (ec) return Unavailable("--checkpoint-root: cannot create " + root.string() + ": " + ec.message());
    options_.checkpoint_root = root.string();
    options_.runner.hidden_roots.push_back(options_.checkpoint_root);  // no tenant sees another's
  }
  auto driver = FindDriverFiles(options_.ldconfig, std::getenv("PATH") ? std::getenv("PATH") : kTaskPath);
  if (!driver) return driver.error();
  driver_files_ = std::move(*driver);
  Log("driver files for image tasks: " + std::to_string(driver_files_.libraries.size()) + " librar" +
      (driver_files_.libraries.size() == 1 ? "y" : "ies") + " from " + options_.ldconfig + " -p, " +
      std::to_string(driver_files_.binaries.size()) + " tool(s)");
  images_ = std::make_unique<ImageCache>((work / "images").string(), options_.umoci);
  if (!options_.storage_root.empty()) options_.storage_root = fs::absolute(options_.storage_root, ec).string();
  if (!options_.runner.cgroups) options_.runner.cgroups = DetectCgroups();  // shared with the watchdog
  auto runner = Runner::Create(options_.runner);
  if (!runner) return runner.error();
  runner_ = std::move(*runner);
  Log(runner_->description());
  MpsOptions mps;
  mps.control_binary = options_.mps_control;
  mps.state_dir = (work / "mps").string();
  mps.pipe_root = fs::absolute(options_.mps_pipe_dir, ec).string();
  mps_ = std::make_unique<MpsControl>(mps);
  if (options_.pool == Sharing::kMps) {  // refused at start, not at each task's: for the longest uid
    for (const GpuInfo& g : inventory_.gpus)
      if (Status s = mps_->CheckPipeDir({g.uuid, UINT32_MAX}); !s.ok()) return s;
  }
  LeftoverPlaces at{*options_.runner.cgroups, options_.runner.cgroup_group, options_.runner.work_root};
  Log(CleanLeftovers(at, *mps_, gpus_.get()).Describe());
  // Image tasks' overlay roots a previous life left mounted.
  for (const auto& e : fs::directory_iterator(work / "roots", ec)) {
    if (Status s = RemoveTaskRoot(e.path().string()); !s.ok()) Log("leftover image root: " + s.message());
  }
  {
    DedicatedClusterOptions c;
    c.dir = options_.cluster_dir.empty() ? (work / "clusters").string() : fs::absolute(options_.cluster_dir, ec).string();
    c.node = options_.node;
    c.address = options_.address.empty() ? options_.node : options_.address;
    c.listen = options_.cluster_listen;
    c.provision_hook = options_.provision_hook;
    for (const GpuInfo& g : inventory_.gpus) {
      if (g.problem.empty()) c.gpu_files.push_back(options_.driver.dev + "/nvidia" + std::to_string(g.minor));
    }
    c.cpus = static_cast<int>(std::max<int64_t>(1, ParseMilli(options_.cpu).value_or(1000) / 1000));
    c.memory_mib = std::max<int64_t>(1, ParseMemoryMiB(options_.memory).value_or(1024));
    c.uid_for = [this](const std::string& tenant) { return runner_->TenantUid(tenant); };
    c.task_uid_base = options_.runner.uids.base;
    c.task_uid_count = options_.runner.uids.count;
    c.log = [this](const std::string& l) { Log(l); };
    fs::create_directories(c.dir, ec);
    clusters_ = std::make_unique<DedicatedClusters>(std::move(c));
    Log(clusters_->StopLeftovers());
  }
  {
    AcceptanceRunOptions a;
    a.health = options_.health;
    a.commands = options_.acceptance_commands;
    a.nvml_checks = [this] {
      std::vector<HealthCheck> out;
      if (gpus_) {
        if (auto samples = gpus_->Sample()) out = NvmlChecks(*samples, options_.health);
      }
      return out;
    };
    a.log = [this](const std::string& l) { Log(l); };
    acceptance_ = std::make_unique<AcceptanceRuns>(std::move(a));
  }
  if (!runner_->limits_enforced()) {
    Log("no watchdog (it finds tasks by their cgroups): a stopped or hung agent's tasks run on until it resumes");
    return Status::Ok();
  }
  auto watchdog = Watchdog::Start({*options_.runner.cgroups, options_.runner.cgroup_group});
  if (!watchdog) return watchdog.error();
  watchdog_ = std::move(*watchdog);
  Log("watchdog (pid " + std::to_string(watchdog_->pid()) + ") kills the tasks once the lease passes unrenewed or the agent dies");
  return Status::Ok();
}

Status NodeAgent::CheckTaskDirsReachable(const std::string& work_root) const {
  if (::geteuid() != 0) return Status::Ok();  // tasks run as the agent's own user
  const uid_t uid = options_.runner.uids.base;
  if (Status s = CheckTaskUidReaches("--work-dir", options_.work_dir, work_root, uid); !s.ok()) return s;
  if (options_.checkpoint_root.empty()) return Status::Ok();
  return CheckTaskUidReaches("--checkpoint-root", options_.checkpoint_root, options_.checkpoint_root, uid);
}

void NodeAgent::Renewed(int64_t at) {
  last_heartbeat_ok_ = at;
  if (watchdog_) watchdog_->Arm(at + lease_ms_);
}

Status NodeAgent::Register() {
  NodeSpec spec;
  spec.name = options_.node;
  spec.zone = options_.zone;
  spec.rack = options_.rack;
  spec.mig_layout = options_.mig_layout;
  auto cpu = ParseMilli(options_.cpu);
  auto mem = ParseMemoryMiB(options_.memory);
  if (!cpu || !mem) return InvalidArgument("--cpu/--memory: '" + options_.cpu + "', '" + options_.memory + "' are not valid");
  spec.cpu = *cpu;
  spec.memory = *mem;
  spec.sharing = options_.pool;
  // The node's confinement of tasks, also as a label jobs and reservations may require.
  const std::vector<std::string> gaps = runner_->IsolationGaps();
  spec.labels = ReportedLabels(inventory_, options_.labels, gaps.empty());
  AgentIdentity session;
  session.isolation_gaps = gaps;
  session.address = options_.address.empty() ? options_.node : options_.address;
  session.agent_version = std::string("allot-agent ") + kAllotVersion;
  session.driver_version = inventory_.driver_version;
  std::vector<Json> gpus;
  for (const GpuInfo& g : inventory_.gpus) {
    if (!g.problem.empty()) continue;
    gpus.push_back({{"index", gpus.size()}, {"uuid", g.uuid}, {"model", g.model}, {"memory_mib", g.memory_bytes >> 20},
                    {"pci_bus_id", g.pci_bus_id}, {"numa_node", g.numa_node}, {"nvlink_peers", g.nvlink_peers}});
  }
  auto client = Client(options_, 30);
  auto r = client->Post("/v1/agent/register", RegistrationJson(spec, session, gpus).dump(), "application/json");
  if (!r || r->status != 200) return Status(r && r->status == 409 ? Code::kConflict : Code::kUnavailable, "registering: " + Describe(r));
  Json body = Json::parse(r->body, nullptr, false);
  lease_ms_ = body.value("lease_ms", int64_t{10000});
  heartbeat_ms_ = body.value("heartbeat_ms", int64_t{1000});
  Renewed(WallMs());
  must_register_ = false;
  fenced_ = false;
  Log("registered node '" + options_.node + "' with " + std::to_string(gpus.size()) + " GPU(s), pool " + SharingName(options_.pool) +
      (gpus_ ? "" : " (no NVML: no GPUs registered)"));
  // The acceptance check: every built-in and configured check, before the node takes work.
  StartChecks(0, true);
  return Status::Ok();
}

HealthReport NodeAgent::Check(uint64_t check, bool acceptance, bool commands) {
  HealthReport report;
  report.check = check;
  report.acceptance = acceptance;
  report.at_ms = WallMs();
  if (gpus_) {
    auto samples = gpus_->Sample();
    if (samples) report.checks = NvmlChecks(*samples, options_.health);
  }
  if (commands) {
    for (HealthCheck& c : CommandChecks(options_.health)) report.checks.push_back(std::move(c));
  }
  return report;
}

void NodeAgent::StartChecks(uint64_t check, bool acceptance) {
  if (checks_.valid()) {  // one run at a time; the newest request runs next
    queued_check_ = std::max(queued_check_, check);
    queued_acceptance_ |= acceptance;
    return;
  }
  running_check_ = check;
  running_acceptance_ = acceptance;
  acceptance_pending_ |= acceptance;
  // Commands may take minutes (a full diagnostic): they run beside the loop, which keeps
  // heartbeating (and so its lease).
  checks_ = std::async(std::launch::async, [health = options_.health] { return CommandChecks(health); });
}

void NodeAgent::CollectChecks(int64_t now) {
  if (!checks_.valid() || checks_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  HealthReport report = Check(running_check_, running_acceptance_, false);
  for (HealthCheck& c : checks_.get()) report.checks.push_back(std::move(c));
  if (running_acceptance_) acceptance_pending_ = false;
  Log(std::string(running_acceptance_ ? "acceptance check" : "health check") +
      (running_check_ > 0 ? " " + std::to_string(running_check_) : "") + ": " +
      (report.ok() ? "passed" : "failed: " + report.Failures()));
  pending_health_ = std::move(report);
  next_command_check_ = now + options_.check_interval_ms;
  if (queued_check_ > 0 || queued_acceptance_) {
    uint64_t check = queued_check_;
    bool acceptance = queued_acceptance_;
    queued_check_ = 0;
    queued_acceptance_ = false;
    StartChecks(check, acceptance);
  }
}

void NodeAgent::PollLoop() {
  auto client = Client(options_, options_.poll_wait_s + 15);
  std::string version;
  while (!stopping_) {
    std::string path = "/v1/agent/assignments?node=" + httplib::detail::encode_query_param(options_.node) +
                       "&version=" + version + "&wait=" + std::to_string(options_.poll_wait_s);
    auto r = client->Get(path.c_str());
    if (!r || r->status != 200) {
      version.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    Json body = Json::parse(r->body, nullptr, false);
    auto tasks = ParseAssignments(body);
    if (!tasks) {
      Log("assignments: " + tasks.error().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    auto mig = ParseDesiredMig(body);
    if (!mig) {
      Log("assignments: " + mig.error().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    auto clusters = ParseClusterAssignments(body);
    if (!clusters) {
      Log("assignments: " + clusters.error().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    auto acceptance = ParseAcceptanceAsks(body);
    if (!acceptance) {
      Log("assignments: " + acceptance.error().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    version = body.value("version", "");
    std::lock_guard lock(desired_mu_);
    desired_ = std::move(*tasks);
    desired_clusters_ = std::move(*clusters);
    desired_acceptance_ = std::move(*acceptance);
    desired_mig_ = std::move(*mig);
    desired_condition_ = body.value("condition", "");
    Wake();
  }
}

Status NodeAgent::Run() {
  while (!stopping_) {
    Status s = Register();
    if (s.ok()) break;
    Log(s.message());
    if (s.code() == Code::kConflict) return s;  // another inventory: an operator must act
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (wake_fd_ < 0) wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);  // -1: the loop ticks only
  poller_ = std::thread([this] { PollLoop(); });
  int64_t next_logs = 0;
  while (!stopping_) {
    int64_t now = WallMs();
    // First, before tasks are reaped: an agent resumed past its lease (stopped, or its watchdog
    // killed the tasks) must not report them as failed.
    FenceIfLeaseLapsed(now);
    if (must_register_) {
      if (Status s = Register(); !s.ok()) {
        Log(s.message());
        if (s.code() == Code::kConflict) return s;
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      std::lock_guard lock(desired_mu_);
      desired_.reset();  // wait for an answer given after the registration
    }
    Reap(now);
    // An exit is told at once, before the next tasks start: its GPUs go to the next job sooner.
    // Its output goes first: a job allotd calls finished has its log (`allot logs` right after
    // shows the end, which it did not always before).
    if (next_heartbeat_ == 0 && !must_register_) {
      ShipLogs(now, true);
      Heartbeat(now);
    }
    if (!fenced_) Reconcile(now);
    // Dedicated clusters follow their windows by this clock, fenced or not: a window ends on time.
    if (clusters_) {
      std::vector<ClusterAssignment> wanted;
      {
        std::lock_guard lock(desired_mu_);
        wanted = desired_clusters_;
      }
      clusters_->Reconcile(wanted, now);
      // The GPUs are the cluster tenant's: the next task of another tenant scrubs them first.
      for (const std::string& tenant : clusters_->TenantsHoldingGpus()) {
        for (int g = 0; g < static_cast<int>(inventory_.gpus.size()); ++g) MarkUsedBy(g, nullptr, tenant);
      }
    }
    if (acceptance_) {
      std::vector<AcceptanceAsk> asks;
      {
        std::lock_guard lock(desired_mu_);
        asks = desired_acceptance_;
      }
      acceptance_->Reconcile(asks, now);
    }
    CollectChecks(now);
    if (!options_.health.commands.empty() && next_command_check_ > 0 && now >= next_command_check_ && !checks_.valid()) {
      StartChecks(0, false);  // the periodic run of the configured commands
    }
    if (now >= next_heartbeat_) Heartbeat(now);
    if (now >= next_logs) {
      ShipLogs(now);
      next_logs = now + 500;
    }
    WaitForWork(50);
  }
  for (auto& [key, t] : tasks_) {
    if (!t.exit) runner_->Kill(key, "the agent is stopping");
  }
  if (clusters_) clusters_->StopAll();  // as its tasks: a restarted agent starts what is still in its window
  if (poller_.joinable()) poller_.join();
  return Status::Ok();
}

void NodeAgent::Heartbeat(int64_t now) {
  next_heartbeat_ = now + heartbeat_ms_;
  allot::Heartbeat hb;
  hb.node = options_.node;
  std::vector<GpuSample> samples;
  if (gpus_) {
    if (auto s = gpus_->Sample()) samples = std::move(*s);
  }
  for (const GpuSample& s : samples) {
    GpuTelemetry t;
    t.index = s.index;
    t.uuid = s.uuid;
    auto opt = [](const auto& v) { return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt; };
    t.utilization_percent = opt(s.utilization_percent);
    t.memory_used_mib = s.memory_used_bytes ? std::optional<int64_t>(static_cast<int64_t>(*s.memory_used_bytes >> 20)) : std::nullopt;
    t.power_mw = opt(s.power_mw);
    t.temperature_c = opt(s.temperature_c);
    t.ecc_corrected = opt(s.ecc_corrected);
    t.ecc_uncorrected = opt(s.ecc_uncorrected);
    t.retired_pages = opt(s.retired_pages);
    for (const XidEvent& x : s.xids) t.xids.push_back(x.xid);
    hb.gpus.push_back(std::move(t));
  }
  AddTaskActivity(samples, hb.gpus);
  EnforceVram(samples);
  for (auto& [key, t] : tasks_) {
    if (t.exit || t.load.path().empty()) continue;
    t.load.Read();
    if (auto l = t.load.load_milli()) hb.loads.push_back({t.a.job_id, t.a.task, t.a.run, *l});
  }
  for (auto& [key, t] : tasks_) {
    if (t.exit) {
      hb.tasks.push_back(*t.exit);
    } else {
      hb.tasks.push_back(ReportOn(t.a));  // running: not exited, no exit code yet
    }
  }
  hb.scrubs = scrubs_;
  if (clusters_) hb.clusters = clusters_->Reports();
  if (acceptance_) hb.acceptance = acceptance_->Reports();
  if (mig_) hb.mig = mig_->Held();
  // Health: the acceptance or asked-for check once made; else what NVML says now.
  if (pending_health_) {
    hb.health = pending_health_;
  } else if (gpus_ && !acceptance_pending_) {  // until accepted, only the acceptance report counts
    hb.health = HealthReport{0, false, now, NvmlChecks(samples, options_.health)};
  }
  if (!heartbeat_client_) heartbeat_client_ = Client(options_, 10);
  LimitToLease(*heartbeat_client_, now);
  auto r = heartbeat_client_->Post("/v1/agent/heartbeat", HeartbeatJson(hb).dump(), "application/json");
  if (!r) heartbeat_client_.reset();  // a fresh connection next time
  if (!r || r->status != 200) {
    if (r && (r->status == 409 || r->status == 404)) {
      // Stopped between the loop's look at the lease and this answer (SIGSTOP, a long pause): the
      // lease ran out on the agent's own clock first, and that is the reason it fences.
      if (!FenceIfLeaseLapsed(WallMs())) Fence("allotd answered " + Describe(r));
      must_register_ = true;
    } else if (now - last_heartbeat_ok_ > 2 * heartbeat_ms_) {
      Log("heartbeat: " + Describe(r));
    }
    return;
  }
  Renewed(now);
  pending_health_.reset();
  scrubs_.erase(scrubs_.begin(), scrubs_.begin() + static_cast<std::ptrdiff_t>(hb.scrubs.size()));
  for (auto& [key, t] : tasks_) t.reported = t.exit.has_value();
  Json body = Json::parse(r->body, nullptr, false);
  uint64_t check = body.value("check", uint64_t{0});
  if (check > checks_done_) {
    checks_done_ = check;
    StartChecks(check, false);
  }
  if (hb.health && !hb.health->ok() && !hb.health->hardware_fault() && gpus_) {
    // A software fault: allotd requeued the node's jobs; reset what a reset fixes, then recheck.
    DestroyAllMigInstances(*gpus_);
    if (mig_) mig_->Invalidate();  // made again to the plan at the next reconcile
    Log("software fault (" + hb.health->Failures() + "): tasks stopped, MIG instances reset; rechecking");
  }
}

std::unique_ptr<httplib::Client> NodeAgent::LeaseClient(int64_t now) const {
  auto c = Client(options_, 10);
  LimitToLease(*c, now);
  return c;
}

void NodeAgent::LimitToLease(httplib::Client& c, int64_t now) const {
  int64_t left_ms = std::clamp<int64_t>(last_heartbeat_ok_ + lease_ms_ - now, 100, 10000);
  c.set_connection_timeout(left_ms / 1000, (left_ms % 1000) * 1000);
  c.set_read_timeout(left_ms / 1000, (left_ms % 1000) * 1000);
  c.set_write_timeout(left_ms / 1000, (left_ms % 1000) * 1000);
}

void NodeAgent::ShipLogs(int64_t now, bool ended_in_full) {
  constexpr uint64_t kChunk = 256 << 10;
  // An ended task's output beyond this waits for the next rounds, after its exit is told: a task
  // that wrote gigabytes must not hold its GPUs back from the next job.
  constexpr uint64_t kEndedInFull = 8 << 20;
  httplib::Client* client = nullptr;
  std::unique_ptr<httplib::Client> owned;
  for (auto& [key, t] : tasks_) {
    std::error_code ec;
    const uint64_t size = fs::exists(t.log_path, ec) ? fs::file_size(t.log_path, ec) : 0;
    const uint64_t until = std::min(size, t.shipped + (ended_in_full && t.exit ? kEndedInFull : kChunk));
    while (t.shipped < until) {
      if (!client) {
        owned = LeaseClient(now);
        client = owned.get();
      }
      std::ifstream in(t.log_path, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(t.shipped));
      std::string chunk(std::min(until - t.shipped, kChunk), '\0');
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.resize(static_cast<size_t>(in.gcount()));
      if (chunk.empty()) break;
      std::string path = "/v1/agent/logs?node=" + httplib::detail::encode_query_param(options_.node) +
                         "&job=" + httplib::detail::encode_query_param(t.a.job) + "&job_id=" + std::to_string(t.a.job_id) + "&run=" + std::to_string(t.a.run) +
                         "&task=" + std::to_string(t.a.task) + "&offset=" + std::to_string(t.shipped);
      auto r = client->Post(path.c_str(), chunk, "application/octet-stream");
      if (r && r->status == 200) {
        t.shipped += chunk.size();
      } else if (r && r->status == 409) {
        Json body = Json::parse(r->body, nullptr, false);
        t.shipped = body.value("size", t.shipped);  // allotd's end: resume from there
        break;
      } else {
        return;  // allotd unreachable: try again later
      }
    }
  }
}

bool NodeAgent::FenceIfLeaseLapsed(int64_t now) {
  if (fenced_ || now - last_heartbeat_ok_ <= lease_ms_) return false;
  Fence("no heartbeat answered for " + std::to_string((now - last_heartbeat_ok_) / 1000) + " s (lease " +
        std::to_string(lease_ms_ / 1000) + " s)");
  return true;
}

void NodeAgent::Fence(const std::string& why) {
  int killed = 0;
  for (auto& [key, t] : tasks_) {
    if (!t.exit) {
      runner_->Kill(key, "fenced: " + why);
      ++killed;
    }
  }
  // Their exits are not reported: allotd requeues the jobs (node lost, or the registration
  // that follows).
  for (int i = 0; i < 20 && !runner_->Running().empty(); ++i) {
    runner_->Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  tasks_.clear();
  fenced_ = true;
  must_register_ = true;
  Log("fenced: " + why + "; stopped " + std::to_string(killed) + " task(s); registering again");
}

}  // namespace allot
