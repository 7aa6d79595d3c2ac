#include "agent/run/mps_control.h"

#include <signal.h>
#include <sys/un.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include "agent/run/command.h"
#include "agent/run/proc_tree.h"
#include "agent/run/sys_files.h"

namespace allot {

namespace {

std::string Name(const MpsDaemon& d) { return d.gpu_uuid + " uid " + std::to_string(d.uid); }

}  // namespace

std::string MpsControl::PipeDir(const MpsDaemon& d) const {
  return options_.pipe_root + "/" + d.gpu_uuid + "/" + std::to_string(d.uid) + "/pipe";
}

std::string MpsControl::LogDir(const MpsDaemon& d) const {
  return options_.state_dir + "/mps/" + d.gpu_uuid + "/" + std::to_string(d.uid) + "/log";
}

std::string MpsControl::RecordPath(const MpsDaemon& d) const {
  return options_.state_dir + "/mps/" + d.gpu_uuid + "/" + std::to_string(d.uid) + "/daemon.pids";
}

Status MpsControl::Control(const MpsDaemon& d, const std::vector<std::string>& args, const std::string& input,
                           std::string* output) {
  CommandSpec spec;
  spec.argv = {options_.control_binary};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  // The daemon sees only its GPU; clients find it by the pipe directory.
  spec.env = {{"CUDA_VISIBLE_DEVICES", d.gpu_uuid},
              {"CUDA_MPS_PIPE_DIRECTORY", PipeDir(d)},
              {"CUDA_MPS_LOG_DIRECTORY", LogDir(d)}};
  spec.env.insert(spec.env.end(), options_.extra_env.begin(), options_.extra_env.end());
  spec.stdin_text = input;
  spec.timeout_ms = options_.timeout_ms;
  spec.kill_leftovers = args.empty() || args[0] != "-d";  // -d leaves the daemon running
  auto r = RunCommand(spec);
  if (!r) return r.error();
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return Unavailable("MPS control for " + Name(d) + " " + DescribeEnd(*r, spec.timeout_ms) + "; output: " +
                       r->output_tail);
  if (output != nullptr) *output = r->output_tail;
  return Status::Ok();
}

Status MpsControl::CheckPipeDir(const MpsDaemon& d) const {
  constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;  // 107: the path and its NUL
  const std::string longest = PipeDir(d) + "/control_privileged";
  if (longest.size() <= kMaxSocketPath) return Status::Ok();
  return FailedPrecondition("MPS pipe directory " + PipeDir(d) + " is too long: the control daemon's socket " + longest +
                            " would be " + std::to_string(longest.size()) + " bytes, over the " +
                            std::to_string(kMaxSocketPath) +
                            " a Unix socket's path may have (the daemon exits without saying why); give the agent a "
                            "shorter --mps-pipe-dir");
}

Status MpsControl::Start(const MpsDaemon& d) {
  if (d.gpu_uuid.rfind("GPU-", 0) != 0)
    return InvalidArgument("gpu '" + d.gpu_uuid + "': expected a GPU-… UUID (MPS runs per physical GPU)");
  if (Running(d)) return Status::Ok();
  if (Status s = CheckPipeDir(d); !s.ok()) return s;
  std::error_code ec;
  for (const std::string& dir : {PipeDir(d), LogDir(d)}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Unavailable("creating " + dir + ": " + ec.message());
  }
  if (Status s = Control(d, {"-d"}, ""); !s.ok()) return s;
  running_.insert(d);
  // Recorded even when no process is found (it may not have settled yet): a successor still quits it.
  std::string pids;
  for (pid_t p : ProcessesWithEnv("CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(d))) pids += std::to_string(p) + "\n";
  if (Status s = ReplaceFile(RecordPath(d), pids, 0644); !s.ok()) return s;
  return Status::Ok();
}

Status MpsControl::Stop(const MpsDaemon& d) {
  if (!Running(d)) return Status::Ok();
  if (Status s = Control(d, {}, "quit\n"); !s.ok()) return s;
  running_.erase(d);
  ::unlink(RecordPath(d).c_str());
  return Status::Ok();
}

std::vector<MpsDaemon> MpsControl::StopAllBut(const std::set<MpsDaemon>& in_use, std::vector<std::string>* problems) {
  std::vector<MpsDaemon> idle, stopped;
  for (const MpsDaemon& d : running_)
    if (!in_use.count(d)) idle.push_back(d);
  for (const MpsDaemon& d : idle) {
    if (Status s = Stop(d); !s.ok()) {
      // Not asked again each pass: its record stays, so the agent's next start kills what is left.
      problems->push_back(s.message());
      running_.erase(d);
    } else {
      stopped.push_back(d);
    }
  }
  return stopped;
}

int MpsControl::StopLeftovers(std::vector<std::string>* problems) {
  int stopped = 0;
  std::error_code ec;
  for (const auto& gpu : std::filesystem::directory_iterator(options_.state_dir + "/mps", ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(gpu.path(), ec)) {
      char* end = nullptr;
      const std::string name = entry.path().filename().string();
      const unsigned long uid = std::strtoul(name.c_str(), &end, 10);
      if (name.empty() || *end != '\0') continue;  // not a daemon's directory
      const MpsDaemon d{gpu.path().filename().string(), static_cast<uint32_t>(uid)};
      auto record = ReadText(RecordPath(d));
      if (!record || running_.count(d)) continue;
      if (Status s = Control(d, {}, "quit\n"); !s.ok()) problems->push_back(s.message());
      std::istringstream in(*record);
      for (pid_t pid; in >> pid;)
        if (HasEnv(pid, "CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(d))) ::kill(pid, SIGKILL);  // not a reused pid
      ::unlink(RecordPath(d).c_str());
      ++stopped;
    }
  }
  return stopped;
}

Status MpsControl::SetDefaultActiveThreadPercentage(const MpsDaemon& d, int percentage) {
  if (percentage < 1 || percentage > 100)
    return InvalidArgument("active thread percentage " + std::to_string(percentage) + ": expected 1..100");
  if (!Running(d)) return FailedPrecondition("no MPS daemon started for " + Name(d));
  return Control(d, {}, "set_default_active_thread_percentage " + std::to_string(percentage) + "\n");
}

Status MpsControl::SetDefaultPinnedMemLimit(const MpsDaemon& d, int device_index, int64_t mib) {
  if (mib < 1) return InvalidArgument("pinned memory limit " + std::to_string(mib) + " MiB: expected 1 or more");
  if (device_index < 0) return InvalidArgument("device index " + std::to_string(device_index) + ": expected 0 or more");
  if (!Running(d)) return FailedPrecondition("no MPS daemon started for " + Name(d));
  return Control(d, {},
                 "set_default_device_pinned_mem_limit " + std::to_string(device_index) + " " + std::to_string(mib) +
                     "M\n");
}

}  // namespace allot

namespace allot {

namespace {

// The real uid of a process ("Uid:\treal\teffective…" in /proc/<pid>/status); nullopt when gone.
std::optional<uint32_t> RealUid(pid_t pid) {
  auto status = ReadText("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  std::istringstream in(*status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    uint32_t uid = 0;
    if (fields >> uid) return uid;
  }
  return std::nullopt;
}

}  // namespace

Status MpsControl::SetServerActiveThreadPercentage(const MpsDaemon& d, int percentage) {
  if (percentage < 1 || percentage > 100)
    return InvalidArgument("active thread percentage " + std::to_string(percentage) + ": expected 1..100");
  if (!Running(d)) return FailedPrecondition("no MPS daemon started for " + Name(d));
  std::string list;
  if (Status s = Control(d, {}, "get_server_list\n", &list); !s.ok()) return s;
  std::istringstream in(list);
  for (std::string word; in >> word;) {
    char* end = nullptr;
    long pid = std::strtol(word.c_str(), &end, 10);
    if (end == word.c_str() || *end != '\0' || pid <= 0) continue;  // not a PID line
    if (RealUid(static_cast<pid_t>(pid)) != d.uid) continue;
    return Control(d, {}, "set_active_thread_percentage " + word + " " + std::to_string(percentage) + "\n");
  }
  return NotFound("no MPS server of uid " + std::to_string(d.uid) + " runs on " + d.gpu_uuid);
}

}  // namespace allot
