// One MPS control daemon per GPU and tenant uid, each with its own pipe and log directory, so
// tasks sharing one GPU through MPS never reach another GPU's daemon or another tenant's. A daemon
// runs one uid's MPS server at a time: a client of a second uid waits, unserved, until the first
// uid's clients have all gone (seen on an H200: the second tenant's job waited 26 s, its time
// running). Two daemons on one GPU, one a uid, serve both at once, each uid's clients in its own
// server, the servers time-sliced (docs/real-gpu.md). The daemon is NVIDIA's
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
// environment names its pipe directory — in <state_dir>/mps/<uuid>/<uid>/daemon.pids, Stop removes
// the record, and StopLeftovers lets a restarted agent stop what its previous run left. The agent
// stops a tenant's daemon on a GPU once no task of the tenant runs there (StopAllBut): an idle MPS
// server keeps a context on the GPU, and a node sees many tenants over its life.
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

struct MpsOptions {
  std::string control_binary = "nvidia-cuda-mps-control";  // looked up in PATH unless it has a '/'
  std::string state_dir;        // daemons' logs and records: <state_dir>/mps/<uuid>/<uid>/{log,daemon.pids}
  // Pipe directories, <pipe_root>/<uuid>/<uid>/pipe, apart from the state: the daemon's sockets in
  // them must fit 107 bytes (CheckPipeDir), which a deep --work-dir does not.
  std::string pipe_root = "/run/allot-agent/mps";
  int64_t timeout_ms = 10000;   // per control command
  EnvList extra_env;            // added to every command's environment (tests point the fake's log)
};

// A daemon: the GPU it serves and the tenant uid whose clients it serves.
struct MpsDaemon {
  std::string gpu_uuid;
  uint32_t uid = 0;
  auto operator<=>(const MpsDaemon&) const = default;
};

class MpsControl {
 public:
  explicit MpsControl(MpsOptions options) : options_(std::move(options)) {}

  // Starts the daemon (creating its directories). Idempotent while it runs. Refuses (as
  // CheckPipeDir) a pipe directory too long for the daemon's sockets.
  Status Start(const MpsDaemon& d);
  // Sends "quit". Idempotent: a daemon not started is Ok.
  Status Stop(const MpsDaemon& d);
  // Stops every running daemon not in `in_use`; returns those stopped, `problems` gets failures.
  std::vector<MpsDaemon> StopAllBut(const std::set<MpsDaemon>& in_use, std::vector<std::string>* problems);
  // The daemon makes Unix sockets in the pipe directory, the longest `control_privileged`, and a
  // socket's path holds at most 107 bytes: on a longer one the real daemon exits 1 without a word
  // in its log (seen on an H200, docs/real-gpu.md). Names the directory, the socket's length and
  // the cure (a shorter --mps-pipe-dir).
  Status CheckPipeDir(const MpsDaemon& d) const;
  // The defaults for the daemon's next MPS server. Refuses a percentage outside 1..100, a limit
  // below 1 MiB, and a daemon not started.
  Status SetDefaultActiveThreadPercentage(const MpsDaemon& d, int percentage);
  Status SetDefaultPinnedMemLimit(const MpsDaemon& d, int device_index, int64_t mib);
  // The percentage of the daemon's running MPS server (its uid's: one tenant's). NVIDIA documents
  // it for clients that connect afterwards: a CUDA context already created keeps the percentage
  // it started with (docs/noisy-neighbour.md). NotFound when no server of that uid runs.
  Status SetServerActiveThreadPercentage(const MpsDaemon& d, int percentage);

  // The daemons a previous run of the agent recorded and did not stop: each is sent "quit", and
  // its recorded processes still alive (with that pipe directory) are then SIGKILLed. Returns how
  // many daemons it stopped; `problems` gets what could not be done.
  int StopLeftovers(std::vector<std::string>* problems);

  std::string PipeDir(const MpsDaemon& d) const;
  std::string LogDir(const MpsDaemon& d) const;
  bool Running(const MpsDaemon& d) const { return running_.count(d) > 0; }

 private:
  // Runs the control binary; `output` (if given) gets what it printed.
  Status Control(const MpsDaemon& d, const std::vector<std::string>& args, const std::string& input,
                 std::string* output = nullptr);
  std::string RecordPath(const MpsDaemon& d) const;

  MpsOptions options_;
  std::set<MpsDaemon> running_;
};

}  // namespace allot
