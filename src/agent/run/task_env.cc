#include "agent/run/task_env.h"

#include <cctype>
#include <string>

namespace allot {
namespace {

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

bool ValidUuid(const std::string& u) {
  if (u.rfind("GPU-", 0) != 0 && u.rfind("MIG-", 0) != 0) return false;
  if (u.size() == 4) return false;
  // A comma would split the list; anything but [0-9A-Za-z/-] is not a UUID CUDA knows.
  for (char c : u)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '/')) return false;
  return true;
}

}  // namespace

Result<EnvList> BuildTaskEnv(const TaskEnvInput& in) {
  if (in.world_size < 1)
    return Err(InvalidArgument("world_size " + std::to_string(in.world_size) + ": expected at least 1"));
  if (in.task_index < 0 || in.task_index >= in.world_size)
    return Err(InvalidArgument("task_index " + std::to_string(in.task_index) + ": expected 0.." +
                               std::to_string(in.world_size - 1) + " (world_size " +
                               std::to_string(in.world_size) + ")"));
  for (const std::string& d : in.devices)
    if (!ValidUuid(d))
      return Err(InvalidArgument("device '" + d + "': expected a GPU-… or MIG-… UUID"));
  if (in.mps) {
    if (in.devices.empty()) return Err(InvalidArgument("mps: an MPS share needs a device"));
    if (in.mps->active_thread_percentage < 1 || in.mps->active_thread_percentage > 100)
      return Err(InvalidArgument("mps.active_thread_percentage " +
                                 std::to_string(in.mps->active_thread_percentage) + ": expected 1..100"));
    if (in.mps->pinned_mem_mib < 0)
      return Err(InvalidArgument("mps.pinned_mem_mib " + std::to_string(in.mps->pinned_mem_mib) +
                                 ": expected 0 (none) or more"));
    if (in.mps->pipe_dir.empty()) return Err(InvalidArgument("mps.pipe_dir: empty"));
  }

  EnvList env;
  env.emplace_back("ALLOT_JOB_ID", in.job_id);
  env.emplace_back("ALLOT_JOB_NAME", in.job_name);
  env.emplace_back("ALLOT_TASK_INDEX", std::to_string(in.task_index));
  env.emplace_back("ALLOT_WORLD_SIZE", std::to_string(in.world_size));
  env.emplace_back("ALLOT_MASTER_ADDR", in.master_addr);
  env.emplace_back("ALLOT_CHECKPOINT_DIR", in.checkpoint_dir);
  env.emplace_back("ALLOT_PREEMPT_FILE", in.preempt_file);
  if (in.array_index >= 0) env.emplace_back("ALLOT_ARRAY_INDEX", std::to_string(in.array_index));
  if (in.frame >= 0) env.emplace_back("ALLOT_FRAME", std::to_string(in.frame));
  env.emplace_back("CUDA_VISIBLE_DEVICES", Join(in.devices, ","));
  env.emplace_back("NVIDIA_VISIBLE_DEVICES", in.devices.empty() ? "void" : Join(in.devices, ","));
  if (in.mps) {
    env.emplace_back("CUDA_MPS_PIPE_DIRECTORY", in.mps->pipe_dir);
    env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(in.mps->active_thread_percentage));
    if (in.mps->pinned_mem_mib > 0) {
      std::vector<std::string> limits;
      for (size_t i = 0; i < in.devices.size(); ++i)
        limits.push_back(std::to_string(i) + "=" + std::to_string(in.mps->pinned_mem_mib) + "M");
      env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", Join(limits, ","));
    }
  }
  return env;
}

}  // namespace allot
