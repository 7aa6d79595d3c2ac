// An operator's own provisioning for a dedicated cluster (issue 16): instead of (or beside) a
// private Slurm, an executable the operator configures brings up whatever the tenant booked
// (Kubernetes, Ray, a scheduler of their own) at the window's start and takes it down at its end.
//
// The contract (docs/dedicated-clusters.md):
//   argv         [hook, "start"] or [hook, "end"]
//   environment  only PATH, LANG=C.UTF-8 and
//                ALLOT_RESERVATION    the reservation's name
//                ALLOT_TENANT         the tenant's path ("research/nlp")
//                ALLOT_WINDOW_START   RFC 3339 UTC ("2026-12-01T09:00:00Z")
//                ALLOT_WINDOW_END     RFC 3339 UTC
//                ALLOT_NODES          the booked nodes, comma-separated ("gpu-01,gpu-02")
//   stdin        empty; cwd "/"; it runs as the agent's user (root on a node)
//   stdout       its last lines (at most options.answer_lines) are the login details handed to
//                the tenant at "start"; what "end" prints is kept too
//   exit 0       done; any other code is an error naming the hook, the phase, the code and the
//                last lines of its stderr
//   timeout      its whole process group is SIGKILLed and the error says it timed out
// It should be idempotent: "end" may follow a "start" that failed halfway, and an agent that
// restarts during a window may run "start" again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

enum class HookPhase { kStart, kEnd };
const char* HookPhaseName(HookPhase phase);  // "start", "end"

struct ProvisionWindow {
  std::string reservation;
  std::string tenant;
  int64_t start_ms = 0;            // Unix milliseconds
  int64_t end_ms = 0;
  std::vector<std::string> nodes;  // at least one
};

struct ProvisionHookOptions {
  std::string executable;          // absolute path, or looked up in PATH
  int64_t timeout_ms = 300000;
  size_t answer_lines = 20;        // stdout lines kept as the login details
  size_t error_lines = 10;         // stderr lines quoted in an error
};

struct HookAnswer {
  std::string login_details;       // stdout's last lines, each ending in '\n'
  int64_t duration_ms = 0;
};

// The environment the hook gets for `window` (ALLOT_* only; PATH and LANG are added on the way).
// InvalidArgument naming the field for an empty reservation or tenant, no node, a node name that
// is not a name (core/names.h, so it holds no comma), or an end not after the start.
Result<EnvList> HookEnvironment(const ProvisionWindow& window);

// Runs the hook for `phase` and waits for it (at most options.timeout_ms). NotFound when the
// executable is missing; Unavailable when it fails, is killed or times out.
Result<HookAnswer> RunProvisionHook(const ProvisionHookOptions& options, HookPhase phase, const ProvisionWindow& window);

}  // namespace allot
