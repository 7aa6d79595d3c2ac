#include "agent/run/mps_control.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include "agent/run/command.h"
#include "agent/run/proc_tree.h"
#include "agent/run/sys_files.h"

namespace allot {

std::string MpsControl::PipeDir(const std::string& gpu_uuid) const {
  return options_.state_dir + "/mps/" + gpu_uuid + "/pipe";
}

std::string MpsControl::LogDir(const std::string& gpu_uuid) const {
  return options_.state_dir + "/mps/" + gpu_uuid + "/log";
}

std::string MpsControl::RecordPath(const std::string& gpu_uuid) const {
  return options_.state_dir + "/mps/" + gpu_uuid + "/daemon.pids";
}

Status MpsControl::Control(const std::string& gpu_uuid, const std::vector<std::string>& args,
                           const std::string& input, std::string* output) {
  CommandSpec spec;
  spec.argv = {options_.control_binary};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  // The daemon sees only its GPU; clients find it by the pipe directory.
  spec.env = {{"CUDA_VISIBLE_DEVICES", gpu_uuid},
              {"CUDA_MPS_PIPE_DIRECTORY", PipeDir(gpu_uuid)},
              {"CUDA_MPS_LOG_DIRECTORY", LogDir(gpu_uuid)}};
  spec.env.insert(spec.env.end(), options_.extra_env.begin(), options_.extra_env.end());
  spec.stdin_text = input;
  spec.timeout_ms = options_.timeout_ms;
  spec.kill_leftovers = args.empty() || args[0] != "-d";  // -d leaves the daemon running
  auto r = RunCommand(spec);
  if (!r) return r.error();
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return Unavailable("MPS control for " + gpu_uuid + " " + DescribeEnd(*r, spec.timeout_ms) +
                       "; output: " + r->output_tail);
  if (output != nullptr) *output = r->output_tail;
  return Status::Ok();
}

Status MpsControl::Start(const std::string& gpu_uuid) {
  if (gpu_uuid.rfind("GPU-", 0) != 0)
    return InvalidArgument("gpu '" + gpu_uuid + "': expected a GPU-… UUID (MPS runs per physical GPU)");
  if (Running(gpu_uuid)) return Status::Ok();
  std::error_code ec;
  for (const std::string& dir : {PipeDir(gpu_uuid), LogDir(gpu_uuid)}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Unavailable("creating " + dir + ": " + ec.message());
  }
  if (Status s = Control(gpu_uuid, {"-d"}, ""); !s.ok()) return s;
  running_.insert(gpu_uuid);
  // Recorded even when no process is found (it may not have settled yet): a successor still quits it.
  std::string pids;
  for (pid_t p : ProcessesWithEnv("CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(gpu_uuid))) pids += std::to_string(p) + "\n";
  if (Status s = ReplaceFile(RecordPath(gpu_uuid), pids, 0644); !s.ok()) return s;
  return Status::Ok();
}

Status MpsControl::Stop(const std::string& gpu_uuid) {
  if (!Running(gpu_uuid)) return Status::Ok();
  if (Status s = Control(gpu_uuid, {}, "quit\n"); !s.ok()) return s;
  running_.erase(gpu_uuid);
  ::unlink(RecordPath(gpu_uuid).c_str());
  return Status::Ok();
}

int MpsControl::StopLeftovers(std::vector<std::string>* problems) {
  int stopped = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.state_dir + "/mps", ec)) {
    const std::string uuid = entry.path().filename().string();
    auto record = ReadText(RecordPath(uuid));
    if (!record || running_.count(uuid)) continue;
    if (Status s = Control(uuid, {}, "quit\n"); !s.ok()) problems->push_back(s.message());
    std::istringstream in(*record);
    for (pid_t pid; in >> pid;)
      if (HasEnv(pid, "CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(uuid))) ::kill(pid, SIGKILL);  // not a reused pid
    ::unlink(RecordPath(uuid).c_str());
    ++stopped;
  }
  return stopped;
}

Status MpsControl::SetDefaultActiveThreadPercentage(const std::string& gpu_uuid, int percentage) {
  if (percentage < 1 || percentage > 100)
    return InvalidArgument("active thread percentage " + std::to_string(percentage) + ": expected 1..100");
  if (!Running(gpu_uuid)) return FailedPrecondition("no MPS daemon started for " + gpu_uuid);
  return Control(gpu_uuid, {}, "set_default_active_thread_percentage " + std::to_string(percentage) + "\n");
}

Status MpsControl::SetDefaultPinnedMemLimit(const std::string& gpu_uuid, int device_index, int64_t mib) {
  if (mib < 1) return InvalidArgument("pinned memory limit " + std::to_string(mib) + " MiB: expected 1 or more");
  if (device_index < 0) return InvalidArgument("device index " + std::to_string(device_index) + ": expected 0 or more");
  if (!Running(gpu_uuid)) return FailedPrecondition("no MPS daemon started for " + gpu_uuid);
  return Control(gpu_uuid, {},
                 "set_default_device_pinned_mem_limit " + std::to_string(device_index) + " " +
                     std::to_string(mib) + "M\n");
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

Status MpsControl::SetServerActiveThreadPercentage(const std::string& gpu_uuid, uint32_t uid, int percentage) {
  if (percentage < 1 || percentage > 100)
    return InvalidArgument("active thread percentage " + std::to_string(percentage) + ": expected 1..100");
  if (!Running(gpu_uuid)) return FailedPrecondition("no MPS daemon started for " + gpu_uuid);
  std::string list;
  if (Status s = Control(gpu_uuid, {}, "get_server_list\n", &list); !s.ok()) return s;
  std::istringstream in(list);
  for (std::string word; in >> word;) {
    char* end = nullptr;
    long pid = std::strtol(word.c_str(), &end, 10);
    if (end == word.c_str() || *end != '\0' || pid <= 0) continue;  // not a PID line
    if (RealUid(static_cast<pid_t>(pid)) != uid) continue;
    return Control(gpu_uuid, {}, "set_active_thread_percentage " + word + " " + std::to_string(percentage) + "\n");
  }
  return NotFound("no MPS server of uid " + std::to_string(uid) + " runs on " + gpu_uuid);
}

}  // namespace allot
