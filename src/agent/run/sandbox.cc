#include "agent/run/sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agent/run/native_sandbox.h"

namespace allot {

std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::vector<std::string>& command,
                                   bool host_proc_driver) {
  std::vector<std::string> a = {spec.bwrap_path};
  if (!spec.root.empty() || spec.host_root.empty()) {
    a.insert(a.end(), {"--ro-bind", spec.root.empty() ? "/" : spec.root, "/"});
  } else {
    for (const RootEntry& e : spec.host_root) {
      if (e.link_target.empty()) a.insert(a.end(), {"--ro-bind", "/" + e.name, "/" + e.name});
      else a.insert(a.end(), {"--symlink", e.link_target, "/" + e.name});
    }
  }
  a.insert(a.end(), {"--dev", "/dev"});
  // Into the fresh /dev: the task's own device nodes and nothing else of the host's.
  for (const DeviceNode& d : spec.devices) a.insert(a.end(), {"--dev-bind", d.host_path, d.sandbox_path});
  if (spec.shm_size_mib > 0)
    a.insert(a.end(), {"--size", std::to_string(spec.shm_size_mib * 1024 * 1024), "--tmpfs", "/dev/shm"});
  a.insert(a.end(), {"--proc", "/proc"});
  // The driver's proc tree lists every GPU of the node: cover it, then show the task's own.
  if (host_proc_driver) a.insert(a.end(), {"--tmpfs", "/proc/driver"});
  if (host_proc_driver)
    for (const auto& [host, inside] : spec.proc_driver) a.insert(a.end(), {"--ro-bind", host, inside});
  a.insert(a.end(), {"--tmpfs", "/tmp"});
  // Later mounts stack on earlier ones: hide the root first, then bind this task's dirs back.
  if (!spec.work_root.empty()) a.insert(a.end(), {"--tmpfs", spec.work_root});
  for (const std::string& root : spec.hidden_roots) a.insert(a.end(), {"--tmpfs", root});
  a.insert(a.end(), {"--bind", spec.work_dir, spec.work_dir});
  if (!spec.checkpoint_dir.empty() && spec.checkpoint_dir != spec.work_dir)
    a.insert(a.end(), {"--bind", spec.checkpoint_dir, spec.checkpoint_dir});
  for (const std::string& d : spec.read_only_dirs) a.insert(a.end(), {"--ro-bind", d, d});
  for (const auto& [host, inside] : spec.read_only_binds) a.insert(a.end(), {"--ro-bind", host, inside});
  for (const auto& [host, inside] : spec.writable_binds) a.insert(a.end(), {"--bind", host, inside});
  a.insert(a.end(), {"--unshare-all"});
  if (spec.network) a.push_back("--share-net");
  a.insert(a.end(), {"--new-session", "--die-with-parent", "--cap-drop", "ALL", "--chdir", spec.work_dir, "--"});
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

std::vector<RootEntry> HostRootEntries(const std::string& root) {
  std::vector<RootEntry> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "proc" || name == "dev" || name == "tmp") continue;
    if (e.is_symlink(ec)) {
      out.push_back({name, std::filesystem::read_symlink(e.path(), ec).string()});
    } else if (e.is_directory(ec) || e.is_regular_file(ec)) {
      out.push_back({name, ""});
    }
  }
  std::sort(out.begin(), out.end(), [](const RootEntry& a, const RootEntry& b) { return a.name < b.name; });
  return out;
}

Result<bool> ResolveSandbox(SandboxMode mode, const std::string& bwrap_path) {
  if (mode == SandboxMode::kNone) return false;
  bool found = !bwrap_path.empty() && ::access(bwrap_path.c_str(), X_OK) == 0;
  if (mode == SandboxMode::kBwrap && !found)
    return Err(FailedPrecondition("sandbox mode bwrap: '" + bwrap_path + "' is not an executable file"));
  return found;
}

Result<SandboxKind> ResolveSandboxKind(SandboxMode mode, const std::string& bwrap_path, const std::string& init_path,
                                       bool root) {
  const bool init = !init_path.empty() && ::access(init_path.c_str(), X_OK) == 0;
  // The host is asked (a trial child) only where allot's own sandbox could be the answer.
  if (mode == SandboxMode::kNative) {
    if (!root) return Err(FailedPrecondition("sandbox mode native: the agent makes the namespaces itself and needs root"));
    if (!init) return Err(FailedPrecondition("sandbox mode native: allot-init '" + init_path + "' is not an executable file"));
    if (const std::string& lacks = NativeSandboxHostLacks(); !lacks.empty())
      return Err(FailedPrecondition("sandbox mode native: this host lacks " + lacks));
    return SandboxKind::kNative;
  }
  if (mode == SandboxMode::kAuto && root && init && NativeSandboxHostLacks().empty()) return SandboxKind::kNative;
  auto bwrap = ResolveSandbox(mode, bwrap_path);
  if (!bwrap) return Err(bwrap.error());
  return *bwrap ? SandboxKind::kBwrap : SandboxKind::kNone;
}

}  // namespace allot
