#include "agent/cluster/private_slurm.h"

#include <pwd.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>
#include <tuple>

#include "agent/run/command.h"
#include "agent/run/proc_tree.h"
#include "agent/run/reachable.h"
#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"
#include "core/strings.h"

namespace allot {
namespace {

constexpr size_t kMungeKeyBytes = 1024;  // mungekey's default
constexpr size_t kLogTailLines = 8;
constexpr int64_t kPollMs = 200;

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The last `n` non-empty lines of `text`, each indented, for an error message.
std::string LastLines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  for (const std::string& l : Split(text, '\n'))
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n    " + lines[i];
  return out;
}

std::string EndText(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return std::string("was killed by SIG") + (abbrev ? abbrev : "?");
  }
  return "ended";
}

// mkdir (or an existing directory) made exactly `mode` and owned by uid:gid.
Status MakeDir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
    return Unavailable("creating " + path + ": " + ErrnoText(errno));
  if (::chmod(path.c_str(), mode) != 0 || ::chown(path.c_str(), uid, gid) != 0)
    return Unavailable("setting the mode and owner of " + path + ": " + ErrnoText(errno));
  return Status::Ok();
}

Result<std::string> RandomBytes(size_t n) {
  std::string key(n, '\0');
  for (size_t done = 0; done < n;) {
    ssize_t got = ::getrandom(key.data() + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Err(Unavailable("getrandom: " + ErrnoText(errno)));
    done += static_cast<size_t>(got);
  }
  return key;
}

}  // namespace

PrivateSlurm::PrivateSlurm(PrivateSlurmSpec spec, PrivateSlurmOptions options)
    : spec_(std::move(spec)), options_(std::move(options)) {}

PrivateSlurm::~PrivateSlurm() {
  if (!daemons_.empty() || made_dir_) Stop(0);
}

std::vector<pid_t> PrivateSlurm::DaemonPids() const {
  std::vector<pid_t> pids;
  for (const Daemon& d : daemons_)
    if (d.pid > 0) pids.push_back(d.pid);
  return pids;
}

std::string PrivateSlurm::LogTail(const std::string& daemon) const {
  auto text = ReadText(LogPath(daemon));
  if (!text) return "\n    (no log: " + text.error().message() + ")";
  return text->empty() ? "\n    (empty log)" : LastLines(*text, kLogTailLines);
}

Status PrivateSlurm::Start() {
  if (!daemons_.empty() || made_dir_) return FailedPrecondition("private Slurm '" + spec_.cluster + "' is already started");
  if (Status s = CheckPrivateSlurmSpec(spec_); !s.ok()) return s;
  if (::geteuid() != 0) {
    return FailedPrecondition("private Slurm: slurmd must start as root (it runs each job step as its user); "
                              "this agent runs as uid " + std::to_string(::geteuid()));
  }
  std::vector<std::string> missing;
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sinfo", "squeue", "scancel"})
    if (!ResolveCommand(tool, options_.path)) missing.push_back(tool);
  if (!missing.empty()) {
    return NotFound("private Slurm: " + Join(missing, ", ") + " not found in PATH=" + options_.path +
                    "; expected the Debian packages slurm-wlm and munge (scripts/install-deps)");
  }
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  ::getpwnam_r(spec_.user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr)
    return FailedPrecondition("user: '" + spec_.user + "' has no passwd entry on this host; expected the tenant's user "
                              "(Slurm refuses a SlurmUser it cannot look up)");
  if (found->pw_uid != spec_.uid)
    return FailedPrecondition("user: '" + spec_.user + "' is uid " + std::to_string(found->pw_uid) + " here; expected uid " +
                              std::to_string(spec_.uid));
  std::error_code ec;
  if (std::filesystem::exists(spec_.dir, ec) && !std::filesystem::is_empty(spec_.dir, ec))
    return FailedPrecondition("dir: " + spec_.dir + " exists and is not empty; expected a new directory for the cluster");
  std::filesystem::create_directories(spec_.dir, ec);
  if (ec) return Unavailable("creating " + spec_.dir + ": " + ec.message());
  made_dir_ = true;
  Status s = Prepare();
  if (s.ok()) s = CheckTaskUidReaches("dir", spec_.dir, spec_.dir, spec_.uid);
  if (s.ok()) s = StartDaemon("munged", {"munged", "--foreground", "--socket=" + MungeSocketPath(spec_),
                                          "--key-file=" + spec_.dir + "/munge/munge.key",
                                          "--pid-file=" + spec_.dir + "/munge/munged.pid",
                                          "--seed-file=" + spec_.dir + "/munge/munged.seed"},
                              RunAs::kTenant);
  if (s.ok()) s = WaitForMungeSocket();
  if (s.ok() && !spec_.controller_remote) s = StartDaemon("slurmctld", {"slurmctld", "-D"}, RunAs::kTenant);
  for (const PrivateSlurmNode& n : spec_.nodes)
    if (s.ok() && !n.remote) s = StartDaemon("slurmd-" + n.name, {"slurmd", "-D", "-N", n.name}, RunAs::kRoot);
  if (!s.ok()) Stop(0);
  return s;
}

// Directories with the owners slurm_conf.h lists. The tenant owns only what its daemons write;
// root's daemons (slurmd) write only in root's directories, so a link the tenant plants cannot
// make root write elsewhere.
Status PrivateSlurm::Prepare() {
  const std::string& d = spec_.dir;
  const uid_t u = spec_.uid;
  const gid_t g = spec_.gid;
  std::vector<std::tuple<std::string, mode_t, uid_t, gid_t>> dirs = {
      {d, 0755, 0, 0},
      {d + "/etc", 0755, 0, 0},
      {d + "/munge", 0700, u, g},
      {d + "/munge-socket", 0755, u, g},
      {d + "/ctld", 0700, u, g},
      {d + "/spool", 0755, 0, 0},
      {d + "/log", 0755, 0, 0},
  };
  for (const PrivateSlurmNode& n : spec_.nodes)
    if (!n.remote) dirs.emplace_back(d + "/spool/" + n.name, 0755, 0, 0);
  for (const auto& [path, mode, uid, gid] : dirs)
    if (Status s = MakeDir(path, mode, uid, gid); !s.ok()) return s;
  auto conf = SlurmConf(spec_);
  if (!conf) return conf.error();
  auto gres = GresConf(spec_);
  if (!gres) return gres.error();
  if (Status s = ReplaceFile(ConfPath(), *conf, 0644); !s.ok()) return s;
  if (Status s = ReplaceFile(d + "/etc/gres.conf", *gres, 0644); !s.ok()) return s;
  // munged refuses a key that others may read or that is not its own user's. A cluster over
  // several hosts brings the key they share; one on this host alone makes its own.
  auto key = spec_.munge_key.empty() ? RandomBytes(kMungeKeyBytes) : Result<std::string>(spec_.munge_key);
  if (!key) return key.error();
  const std::string key_path = d + "/munge/munge.key";
  if (Status s = ReplaceFile(key_path, *key, 0400); !s.ok()) return s;
  if (::chown(key_path.c_str(), u, g) != 0) return Unavailable("chown " + key_path + ": " + ErrnoText(errno));
  return Status::Ok();
}

Status PrivateSlurm::StartDaemon(const std::string& name, std::vector<std::string> argv, RunAs as) {
  auto exe = ResolveCommand(argv[0], options_.path);
  if (!exe) return exe.error();
  argv[0] = *exe;
  SpawnPlan plan;
  plan.argv = std::move(argv);
  plan.env = {{"PATH", options_.path}, {"LANG", "C.UTF-8"}, {"SLURM_CONF", ConfPath()}};
  plan.log_path = LogPath(name);
  plan.drop_ids = as == RunAs::kTenant;
  plan.uid = spec_.uid;
  plan.gid = spec_.gid;
  auto pid = Spawn(plan);
  if (!pid) return Unavailable("starting " + name + " of private Slurm '" + spec_.cluster + "': " + pid.error().message());
  daemons_.push_back({name, *pid});
  return Status::Ok();
}

Status PrivateSlurm::WaitForMungeSocket() {
  const int64_t deadline = WallMillis() + options_.munge_ready_ms;
  while (!Exists(MungeSocketPath(spec_))) {
    if (Status s = CheckDaemonsAlive(); !s.ok()) return s;
    if (WallMillis() >= deadline)
      return Unavailable("munged made no socket at " + MungeSocketPath(spec_) + " within " +
                         std::to_string(options_.munge_ready_ms) + " ms; munged.log:" + LogTail("munged"));
    SleepMillis(20);
  }
  return Status::Ok();
}

Status PrivateSlurm::CheckDaemonsAlive() {
  for (Daemon& d : daemons_) {
    int status = 0;
    if (d.pid <= 0 || ::waitpid(d.pid, &status, WNOHANG) != d.pid) continue;
    d.pid = -1;
    return Unavailable(d.name + " of private Slurm '" + spec_.cluster + "' " + EndText(status) + "; " + d.name +
                       ".log:" + LogTail(d.name));
  }
  return Status::Ok();
}

Result<std::string> PrivateSlurm::Client(const std::vector<std::string>& argv) const {
  CommandSpec c;
  c.argv = argv;
  c.env = {{"PATH", options_.path}, {"SLURM_CONF", ConfPath()}};
  c.timeout_ms = options_.command_timeout_ms;
  auto r = RunCommand(c);
  if (!r) return Err(r.error());
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return Err(Unavailable(Join(argv, " ") + " " + DescribeEnd(*r, c.timeout_ms) + ":" + LastLines(r->output_tail, 4)));
  return r->output_tail;
}

Status PrivateSlurm::WaitReady(int64_t timeout_ms) {
  if (daemons_.empty()) return FailedPrecondition("private Slurm '" + spec_.cluster + "' is not started");
  const int64_t deadline = WallMillis() + timeout_ms;
  std::map<std::string, std::string> state;  // node → sinfo's state, "?" until listed
  std::string last_error;
  while (true) {
    if (Status s = CheckDaemonsAlive(); !s.ok()) return s;
    for (const PrivateSlurmNode& n : spec_.nodes)
      if (!spec_.controller_remote || !n.remote) state[n.name] = "?";
    auto out = Client({"sinfo", "--noheader", "--Node", "--format=%N %t"});
    last_error = out ? "" : out.error().message();
    if (out) {
      for (const std::string& line : Split(*out, '\n')) {
        auto words = Split(line, ' ');
        if (words.size() == 2 && state.count(words[0])) state[words[0]] = words[1];
      }
    }
    std::vector<std::string> not_up;
    for (const auto& [node, st] : state)
      if (st != "idle") not_up.push_back(node);
    if (not_up.empty()) return Status::Ok();
    if (WallMillis() >= deadline) {
      std::string m = "private Slurm '" + spec_.cluster + "' not ready after " + std::to_string(timeout_ms) +
                      " ms; nodes not idle:";
      for (const std::string& node : not_up) m += " " + node + " (" + state[node] + ")";
      if (!last_error.empty()) m += "; " + last_error;
      for (const PrivateSlurmNode& n : spec_.nodes) {
        if (state.count(n.name) == 0 || state[n.name] == "idle") continue;
        m += n.remote ? "; slurmd-" + n.name + ": on " + n.address + ", see its agent's log"
                      : "; slurmd-" + n.name + ".log:" + LogTail("slurmd-" + n.name);
      }
      if (spec_.controller_remote) return Unavailable(m + "; slurmctld: on " + spec_.controller_address + ", see its agent's log");
      return Unavailable(m + "; slurmctld.log:" + LogTail("slurmctld"));
    }
    SleepMillis(kPollMs);
  }
}

Status PrivateSlurm::CancelJobs(int64_t grace_ms) {
  const std::string partition = "--partition=" + spec_.cluster;
  auto jobs_left = [&]() -> bool {
    auto out = Client({"squeue", "--noheader", "--format=%i"});
    return !out || out->find_first_not_of(" \n") != std::string::npos;  // unknown counts as left
  };
  if (auto r = Client({"scancel", "--signal=TERM", "--full", partition}); !r) return r.error();
  const int64_t deadline = WallMillis() + grace_ms;
  while (jobs_left() && WallMillis() < deadline) SleepMillis(kPollMs);
  if (!jobs_left()) return Status::Ok();
  // Past the grace: KILL every step and the batch scripts, then end the jobs themselves.
  if (auto r = Client({"scancel", "--signal=KILL", "--full", partition}); !r) return r.error();
  if (auto r = Client({"scancel", partition}); !r) return r.error();
  const int64_t bound = WallMillis() + options_.daemon_stop_ms;
  while (jobs_left() && WallMillis() < bound) SleepMillis(kPollMs);
  return Status::Ok();  // what is left dies with the daemons and the sweep
}

// A node whose controller is elsewhere: the controller's agent signals the jobs and gives them
// the grace; this node's slurmd stays up meanwhile, so its steps get the signal and end on their
// own. Waits until no job is on this host's nodes, the controller cannot be asked (it stopped),
// or the grace and the controller's kill time have passed.
void PrivateSlurm::WaitForJobsToLeave(int64_t grace_ms) {
  std::string local;
  for (const PrivateSlurmNode& n : spec_.nodes)
    if (!n.remote) local += (local.empty() ? "" : ",") + n.name;
  const int64_t deadline = WallMillis() + grace_ms + 2 * options_.daemon_stop_ms;
  while (WallMillis() < deadline) {
    auto out = Client({"squeue", "--noheader", "--format=%i", "--nodelist=" + local});
    if (!out || out->find_first_not_of(" \n") == std::string::npos) return;
    SleepMillis(kPollMs);
  }
}

Status PrivateSlurm::StopDaemons() {
  // Nodes first, then the controller, munged last (the others authenticate through it); each
  // stage SIGTERMed together and given options_.daemon_stop_ms before SIGKILL.
  auto stage_of = [](const Daemon& d) { return d.name == "munged" ? 2 : d.name == "slurmctld" ? 1 : 0; };
  std::vector<std::string> killed;
  for (int stage = 0; stage < 3; ++stage) {
    for (const Daemon& d : daemons_)
      if (d.pid > 0 && stage_of(d) == stage) ::kill(d.pid, SIGTERM);
    const int64_t deadline = WallMillis() + options_.daemon_stop_ms;
    for (Daemon& d : daemons_) {
      if (d.pid <= 0 || stage_of(d) != stage) continue;
      int status = 0;
      while (::waitpid(d.pid, &status, WNOHANG) == 0) {
        if (WallMillis() >= deadline) {
          ::kill(-d.pid, SIGKILL);  // its session (Spawn made it the leader); not reaped, so still ours
          ::waitpid(d.pid, &status, 0);
          killed.push_back(d.name);
          break;
        }
        SleepMillis(20);
      }
      d.pid = -1;
    }
  }
  daemons_.clear();
  if (killed.empty()) return Status::Ok();
  return Unavailable("killed " + Join(killed, ", ") + " after " + std::to_string(options_.daemon_stop_ms) +
                     " ms without stopping on SIGTERM");
}

Status PrivateSlurm::Stop(int64_t grace_ms) {
  std::vector<std::string> problems;
  bool controller_up = false;
  for (const Daemon& d : daemons_) controller_up = controller_up || (d.name == "slurmctld" && d.pid > 0);
  bool slurmd_up = false;
  for (const Daemon& d : daemons_) slurmd_up = slurmd_up || (d.name.rfind("slurmd-", 0) == 0 && d.pid > 0);
  if (controller_up) {
    if (Status s = CancelJobs(grace_ms); !s.ok()) problems.push_back("cancelling jobs: " + s.message());
  } else if (slurmd_up && spec_.controller_remote) {
    WaitForJobsToLeave(grace_ms);
  }
  if (Status s = StopDaemons(); !s.ok()) problems.push_back(s.message());
  // slurmstepd detaches from slurmd, and a step it started may outlive it; both carry the
  // cluster's SLURM_CONF in their environment, which nothing outside this cluster does.
  const std::string marker = "SLURM_CONF=" + ConfPath();
  const int64_t deadline = WallMillis() + options_.daemon_stop_ms;
  for (auto left = ProcessesWithEnv(marker); !left.empty(); left = ProcessesWithEnv(marker)) {
    if (WallMillis() >= deadline) {
      problems.push_back(std::to_string(left.size()) + " processes with " + marker + " survived SIGKILL");
      break;
    }
    for (pid_t p : left)
      if (p != ::getpid()) ::kill(p, SIGKILL);
    SleepMillis(20);
  }
  if (made_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(spec_.dir, ec);
    if (ec) problems.push_back("removing " + spec_.dir + ": " + ec.message());
    else made_dir_ = false;
  }
  if (problems.empty()) return Status::Ok();
  return Unavailable("stopping private Slurm '" + spec_.cluster + "': " + Join(problems, "; "));
}

std::string PrivateSlurm::LoginDetails() const {
  int gpus = 0;
  std::vector<std::string> names;
  for (const PrivateSlurmNode& n : spec_.nodes) {
    gpus += n.gpus;
    names.push_back(n.name);
  }
  const int first_gpus = spec_.nodes.empty() ? 0 : spec_.nodes.front().gpus;
  std::ostringstream t;
  t << "Private Slurm cluster '" << spec_.cluster << "': " << spec_.nodes.size() << " nodes (" << Join(names, ", ")
    << "), " << gpus << " GPUs; controller " << spec_.controller_address << ":" << spec_.controller_port
    << ", administered by "
    << spec_.user << ".\n"
    << "  export SLURM_CONF=" << ConfPath() << "\n"
    << "  sinfo                                   # the nodes and their state\n"
    << "  srun -N " << spec_.nodes.size() << " --gres=gpu:" << first_gpus << " hostname   # a step on every node\n"
    << "  sbatch -N 1 --gres=gpu:1 --wrap 'CMD'   # a batch job; squeue, scancel as usual\n"
    << "Jobs run as the user who submits them. The cluster, its jobs and its state end with the window.\n";
  return t.str();
}

}  // namespace allot
