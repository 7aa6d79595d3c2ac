// What the node agent asks the runner to start, and what the runner reports when it ends. Plain
// values: the agent builds a TaskLaunch from the control plane's assignment, the runner turns it
// into an isolated process and, when that process is gone, into a TaskExit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/run/gpu_devices.h"

namespace allot {

// Ordered name → value pairs; order is kept so a task's environment is reproducible.
using EnvList = std::vector<std::pair<std::string, std::string>>;

struct TaskLaunch {
  // Unique while running, e.g. "train-7.0.e3" (job, task, epoch). Names the task's cgroup, so it
  // may hold only [A-Za-z0-9._-].
  std::string key;
  std::vector<std::string> argv;     // argv[0] is looked up in the task's PATH unless it has a '/'
  EnvList env;                       // added to PATH, HOME (= work_dir) and LANG=C.UTF-8
  std::string tenant;                // "research/nlp": picks the tenant's uid when the agent is root
  std::string work_dir;              // absolute; the tenant's writable directory; created
  std::string checkpoint_dir;        // absolute; survives requeue; created, writable
  std::string log_path;              // stdout and stderr are appended here
  std::string preempt_file;          // absolute; written by Preempt; see runner.h for its format
  int64_t cpu_millis = 0;            // 0: no CPU limit
  int64_t memory_mib = 0;            // 0: no memory limit
  int64_t pids_max = 0;              // 0: no process limit
  int64_t time_limit_ms = 0;         // 0: no time limit
  bool network = false;              // false: the task sees only its own loopback
  // The device nodes of the task's GPUs (gpu_devices.h): the only ones bound into its sandbox
  // and, with the defaults, the only ones its device cgroup lets it open. Empty: no GPU.
  std::vector<DeviceNode> devices;
  std::vector<Bind> proc_driver;     // /proc/driver/nvidia as the task sees it
  // "": the host's root filesystem, read-only. Else an image's root filesystem (image_root.h),
  // never written: the task runs on an overlay of it made for the task, argv[0] looked up
  // inside. Needs the sandbox.
  std::string image_rootfs;
  // Added to that overlay where the image has nothing there: in-root path → link target (the
  // driver's libcuda.so → libcuda.so.1); and written over it: in-root path → content.
  std::vector<std::pair<std::string, std::string>> image_links;
  std::vector<std::pair<std::string, std::string>> image_files;
  std::vector<Bind> read_only_binds; // host → sandbox path: driver files, shared volumes
  std::vector<Bind> writable_binds;  // host → sandbox path: the tenant's own volumes
  int64_t shm_size_mib = 0;          // > 0: /dev/shm is a tmpfs of this size
};

struct TaskExit {
  std::string key;
  int exit_code = -1;                // -1 when killed by a signal
  int signal = 0;                    // 0 when it exited
  bool oom_killed = false;
  bool time_limit_exceeded = false;
  bool preempted = false;            // ended after Preempt, by itself or at the deadline
  int64_t started_ms = 0;            // the runner's clock
  int64_t ended_ms = 0;
  std::string reason;                // "exited with code 3", "killed: time limit 10 s exceeded", …
};

}  // namespace allot
