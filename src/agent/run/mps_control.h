// One MPS control daemon per GPU, each with its own pipe and log directory, so tasks sharing one
// GPU through MPS never reach another GPU's daemon. The daemon is NVIDIA's
// nvidia-cuda-mps-control: started with -d (it daemonizes), told things by running it again as a
// client with commands on stdin, stopped with "quit".
//
// Commands, as NVIDIA documents them for the control daemon's interactive shell
// (https://docs.nvidia.com/deploy/mps/latest/mpsv2-interface.html and the "Tools and Interface
// Reference" appendix, docs.nvidia.com/deploy/mps/appendix-tools-and-interface-reference.html):
//   set_default_active_thread_percentage <percentage>
//   set_default_device_pinned_mem_limit <dev> <value>   value: an integer and M or G ("2048M")
//   get_server_list                              the PIDs of the MPS servers running, one a line
//   set_active_thread_percentage <PID> <percentage>   that server's percentage from now on
//   quit
// Defaults apply to MPS servers started after them, so the agent sets them before a task's first
// CUDA call; the per-client environment variables (agent/run/task_env.h) can only narrow them.
//
// Daemons outlive their agent (they detach). Start records each one's processes — those whose
// environment names its pipe directory — in <state_dir>/mps/<uuid>/daemon.pids, Stop removes the
// record, and StopLeftovers lets a restarted agent stop what its previous run left.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

struct MpsOptions {
  std::string control_binary = "nvidia-cuda-mps-control";  // looked up in PATH unless it has a '/'
  std::string state_dir;        // daemons' directories: <state_dir>/mps/<uuid>/{pipe,log}
  int64_t timeout_ms = 10000;   // per control command
  EnvList extra_env;            // added to every command's environment (tests point the fake's log)
};

class MpsControl {
 public:
  explicit MpsControl(MpsOptions options) : options_(std::move(options)) {}

  // Starts the GPU's daemon (creating its directories). Idempotent while it runs.
  Status Start(const std::string& gpu_uuid);
  // Sends "quit". Idempotent: a GPU with no daemon started is Ok.
  Status Stop(const std::string& gpu_uuid);
  // The defaults for the GPU's next MPS server. Refuses a percentage outside 1..100, a limit
  // below 1 MiB, and a GPU whose daemon is not started.
  Status SetDefaultActiveThreadPercentage(const std::string& gpu_uuid, int percentage);
  Status SetDefaultPinnedMemLimit(const std::string& gpu_uuid, int device_index, int64_t mib);
  // The percentage of the running MPS server of `uid` on the GPU (MPS runs one server per uid;
  // the agent runs each tenant as its own uid, so this is one tenant's server). NVIDIA documents
  // it for clients that connect afterwards: a CUDA context already created keeps the percentage
  // it started with (docs/noisy-neighbour.md). NotFound when no server of that uid runs.
  Status SetServerActiveThreadPercentage(const std::string& gpu_uuid, uint32_t uid, int percentage);

  // The daemons a previous run of the agent recorded and did not stop: each is sent "quit", and
  // its recorded processes still alive (with that pipe directory) are then SIGKILLed. Returns how
  // many daemons it stopped; `problems` gets what could not be done.
  int StopLeftovers(std::vector<std::string>* problems);

  std::string PipeDir(const std::string& gpu_uuid) const;
  std::string LogDir(const std::string& gpu_uuid) const;
  bool Running(const std::string& gpu_uuid) const { return running_.count(gpu_uuid) > 0; }

 private:
  // Runs the control binary; `output` (if given) gets what it printed.
  Status Control(const std::string& gpu_uuid, const std::vector<std::string>& args, const std::string& input,
                 std::string* output = nullptr);
  std::string RecordPath(const std::string& gpu_uuid) const;

  MpsOptions options_;
  std::set<std::string> running_;
};

}  // namespace allot
