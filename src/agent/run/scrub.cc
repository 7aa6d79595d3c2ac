#include "agent/run/scrub.h"

#include "agent/run/command.h"

namespace allot {

Result<ScrubRecord> RunScrub(const std::vector<std::string>& command,
                             const std::vector<std::string>& device_uuids, int64_t timeout_ms) {
  if (command.empty()) return Err(InvalidArgument("scrub command: empty"));
  std::string devices;
  for (const std::string& d : device_uuids) devices += (devices.empty() ? "" : ",") + d;
  CommandSpec spec;
  spec.argv = command;
  spec.env = {{"ALLOT_SCRUB_DEVICES", devices}};
  spec.timeout_ms = timeout_ms;
  auto r = RunCommand(spec);
  if (!r) return Err(FailedPrecondition("scrub of " + devices + " could not start: " + r.error().message()));
  std::string shown;
  for (const std::string& a : command) shown += (shown.empty() ? "" : " ") + a;
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return Err(FailedPrecondition("scrub '" + shown + "' of " + devices + " " + DescribeEnd(*r, timeout_ms) +
                                  "; output: " + r->output_tail));
  return ScrubRecord{command, r->exit_code, r->duration_ms, r->output_tail};
}

}  // namespace allot
