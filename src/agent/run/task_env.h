// The environment a task starts with: who it is in its job (rank, world, master), which devices it
// may use, its MPS share, and where to checkpoint. Pure: the runner adds PATH, HOME and LANG.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

// A task that shares its GPU through MPS rather than owning it.
struct MpsShare {
  std::string pipe_dir;              // the GPU's control daemon pipe directory (MpsControl::PipeDir)
  int active_thread_percentage = 100;  // 1..100
  int64_t pinned_mem_mib = 0;        // per-device memory cap; 0: none
};

struct TaskEnvInput {
  std::string job_name;
  std::string job_id;
  int task_index = 0;
  int world_size = 1;
  std::string master_addr;           // host of task 0
  std::vector<std::string> devices;  // "GPU-…" or "MIG-…" UUIDs; empty for a CPU-only task
  std::optional<MpsShare> mps;
  std::string checkpoint_dir;
  std::string preempt_file;
  int32_t array_index = -1;  // an array element's index (ALLOT_ARRAY_INDEX); -1: none
  int64_t frame = -1;        // a frame array's frame (ALLOT_FRAME); -1: none
};

// The ALLOT_*, CUDA and NVIDIA variables, in a fixed order (ALLOT_ARRAY_INDEX and ALLOT_FRAME
// only for array elements). Devices are named by UUID, never by
// index: CUDA's index order differs from NVML's. A CPU-only task gets NVIDIA_VISIBLE_DEVICES=void
// and an empty CUDA_VISIBLE_DEVICES so no runtime falls back to "all GPUs". The MPS memory cap is
// given for every visible device in CUDA's "<index>=<N>M" form, indices as the task sees them
// (0..n-1, in the order of `devices`). Refuses malformed UUIDs, a rank outside the world and an
// MPS share without a device, naming the field.
Result<EnvList> BuildTaskEnv(const TaskEnvInput& in);

}  // namespace allot
