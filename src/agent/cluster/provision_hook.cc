#include "agent/cluster/provision_hook.h"

#include "agent/run/command.h"
#include "core/calendar.h"
#include "core/names.h"
#include "core/strings.h"

namespace allot {
namespace {

// The last `n` non-empty lines of `text`, each ending in '\n'.
std::string LastLines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  for (const std::string& l : Split(text, '\n'))
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace

const char* HookPhaseName(HookPhase phase) { return phase == HookPhase::kStart ? "start" : "end"; }

Result<EnvList> HookEnvironment(const ProvisionWindow& w) {
  if (w.reservation.empty()) return Err(InvalidArgument("reservation: empty; expected the reservation's name"));
  if (w.tenant.empty()) return Err(InvalidArgument("tenant: empty; expected the tenant's path"));
  if (w.nodes.empty()) return Err(InvalidArgument("nodes: empty; expected at least one booked node"));
  if (w.end_ms <= w.start_ms) {
    return Err(InvalidArgument("window: ends at " + FormatRfc3339(w.end_ms) + ", not after its start " +
                               FormatRfc3339(w.start_ms) + "; expected an end after the start"));
  }
  std::string nodes;
  for (size_t i = 0; i < w.nodes.size(); ++i) {
    if (Status s = CheckName("nodes[" + std::to_string(i) + "]", w.nodes[i]); !s.ok()) return Err(s);
    nodes += (i ? "," : "") + w.nodes[i];
  }
  return EnvList{{"ALLOT_RESERVATION", w.reservation},
                 {"ALLOT_TENANT", w.tenant},
                 {"ALLOT_WINDOW_START", FormatRfc3339(w.start_ms)},
                 {"ALLOT_WINDOW_END", FormatRfc3339(w.end_ms)},
                 {"ALLOT_NODES", nodes}};
}

Result<HookAnswer> RunProvisionHook(const ProvisionHookOptions& options, HookPhase phase, const ProvisionWindow& window) {
  auto env = HookEnvironment(window);
  if (!env) return Err(env.error());
  const std::string name = "provision hook " + options.executable + " " + HookPhaseName(phase);
  CommandSpec c;
  c.argv = {options.executable, HookPhaseName(phase)};
  c.env = *env;
  c.timeout_ms = options.timeout_ms;
  c.keep_output = 64 * 1024;
  c.split_stderr = true;
  auto r = RunCommand(c);
  if (!r) return Err(r.error().code() == Code::kNotFound ? NotFound(name + ": " + r.error().message())
                                                         : Unavailable(name + ": " + r.error().message()));
  if (r->timed_out) {
    return Err(Unavailable(name + " timed out after " + std::to_string(options.timeout_ms) +
                           " ms and was killed; its stderr ended:\n" + LastLines(r->error_tail, options.error_lines)));
  }
  if (r->signal != 0 || r->exit_code != 0) {
    return Err(Unavailable(name + " " + DescribeEnd(*r, options.timeout_ms) + "; its stderr ended:\n" +
                           LastLines(r->error_tail, options.error_lines)));
  }
  return HookAnswer{LastLines(r->output_tail, options.answer_lines), r->duration_ms};
}

}  // namespace allot
