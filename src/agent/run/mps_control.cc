#include "agent/run/mps_control.h"

#include <filesystem>
#include <system_error>

#include "agent/run/command.h"

namespace allot {

std::string MpsControl::PipeDir(const std::string& gpu_uuid) const {
  return options_.state_dir + "/mps/" + gpu_uuid + "/pipe";
}

std::string MpsControl::LogDir(const std::string& gpu_uuid) const {
  return options_.state_dir + "/mps/" + gpu_uuid + "/log";
}

Status MpsControl::Control(const std::string& gpu_uuid, const std::vector<std::string>& args,
                           const std::string& input) {
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
  return Status::Ok();
}

Status MpsControl::Stop(const std::string& gpu_uuid) {
  if (!Running(gpu_uuid)) return Status::Ok();
  if (Status s = Control(gpu_uuid, {}, "quit\n"); !s.ok()) return s;
  running_.erase(gpu_uuid);
  return Status::Ok();
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
