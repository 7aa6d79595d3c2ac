// Running a short helper command to completion (a GPU scrub, an MPS control command): clean
// environment, stdin from a string, stdout+stderr captured (the tail kept), a timeout after which
// its whole process group is SIGKILLed. Blocks the caller for at most the timeout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] looked up in PATH (kTaskPath unless env sets PATH)
  EnvList env;                    // PATH and LANG=C.UTF-8 are added unless given
  std::string stdin_text;
  int64_t timeout_ms = 10000;
  size_t keep_output = 4096;      // bytes of output kept, from the end (each stream's)
  // stderr kept apart in CommandResult::error_tail (a hook's stdout is its answer, its stderr
  // the explanation); otherwise both streams go to output_tail.
  bool split_stderr = false;
  // After the command exits, SIGKILL what it left in its process group (a scrub must leave
  // nothing behind). Off for commands whose point is to leave a daemon (mps-control -d).
  bool kill_leftovers = true;
};

struct CommandResult {
  int exit_code = -1;             // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  int64_t duration_ms = 0;
  std::string output_tail;
  std::string error_tail;         // only with split_stderr
};

// Errors only when the command cannot be started (not found, fork failed); how it ended is in the
// result. The wait ends when the command's own process exits: a daemon it leaves behind holding
// the output pipe does not keep the caller waiting.
Result<CommandResult> RunCommand(const CommandSpec& spec);

// "exited with code 2", "killed by SIGKILL", "timed out after 500 ms".
std::string DescribeEnd(const CommandResult& r, int64_t timeout_ms);

}  // namespace allot
