// The scrub step: before a GPU passes from one tenant to another, a configurable command clears
// what the last tenant may have left in it (memory, persistence settings, MPS state). A GPU whose
// scrub failed or hung must not be handed on, so both are errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

struct ScrubRecord {
  std::vector<std::string> command;
  int exit_code = 0;
  int64_t duration_ms = 0;
  std::string output_tail;     // last 4 KiB of stdout+stderr
};

// Runs `command` with ALLOT_SCRUB_DEVICES set to the comma-joined UUIDs (plus PATH and LANG) and
// waits up to `timeout_ms`. FailedPrecondition when it exits non-zero, is killed, or times out
// (then its process group is SIGKILLed); the message has the command, how it ended and its output.
Result<ScrubRecord> RunScrub(const std::vector<std::string>& command,
                             const std::vector<std::string>& device_uuids, int64_t timeout_ms);

}  // namespace allot
