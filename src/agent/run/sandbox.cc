#include "agent/run/sandbox.h"

#include <unistd.h>

namespace allot {

std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::vector<std::string>& command) {
  std::vector<std::string> a = {spec.bwrap_path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
                                "/proc", "--tmpfs", "/tmp"};
  // Later mounts stack on earlier ones: hide the root first, then bind this task's dirs back.
  if (!spec.work_root.empty()) a.insert(a.end(), {"--tmpfs", spec.work_root});
  for (const std::string& root : spec.hidden_roots) a.insert(a.end(), {"--tmpfs", root});
  a.insert(a.end(), {"--bind", spec.work_dir, spec.work_dir});
  if (!spec.checkpoint_dir.empty() && spec.checkpoint_dir != spec.work_dir)
    a.insert(a.end(), {"--bind", spec.checkpoint_dir, spec.checkpoint_dir});
  for (const std::string& d : spec.read_only_dirs) a.insert(a.end(), {"--ro-bind", d, d});
  a.insert(a.end(), {"--unshare-all"});
  if (spec.network) a.push_back("--share-net");
  a.insert(a.end(), {"--new-session", "--die-with-parent", "--cap-drop", "ALL", "--chdir", spec.work_dir, "--"});
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

Result<bool> ResolveSandbox(SandboxMode mode, const std::string& bwrap_path) {
  if (mode == SandboxMode::kNone) return false;
  bool found = !bwrap_path.empty() && ::access(bwrap_path.c_str(), X_OK) == 0;
  if (mode == SandboxMode::kBwrap && !found)
    return Err(FailedPrecondition("sandbox mode bwrap: '" + bwrap_path + "' is not an executable file"));
  return found;
}

}  // namespace allot
