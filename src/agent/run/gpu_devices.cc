#include "agent/run/gpu_devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <set>
#include <sstream>

#include "agent/run/sys_files.h"

namespace allot {
namespace {

std::string CapsDir(const DriverRoots& roots, int minor, const MigSlice& mig) {
  return roots.proc_driver + "/capabilities/gpu" + std::to_string(minor) + "/mig/gi" + std::to_string(mig.gpu_instance);
}

}  // namespace

std::string ProcBusId(const std::string& nvml_bus_id) {
  // NVML: 8-digit domain, upper case; the driver's proc tree: 4-digit domain, lower case.
  std::string id = nvml_bus_id.size() == 16 ? nvml_bus_id.substr(4) : nvml_bus_id;
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

Result<DeviceNode> StatDevice(const std::string& host_path, const std::string& sandbox_path) {
  struct stat st {};
  if (::stat(host_path.c_str(), &st) != 0) {
    const int e = errno;
    return Err(Status(e == ENOENT ? Code::kNotFound : Code::kUnavailable, "device node " + host_path + ": " + ErrnoText(e)));
  }
  if (!S_ISCHR(st.st_mode))
    return Err(FailedPrecondition("device node " + host_path + ": expected a character device"));
  return DeviceNode{host_path, sandbox_path, 'c', major(st.st_rdev), minor(st.st_rdev)};
}

Result<unsigned> ReadCapMinor(const std::string& access_file) {
  auto text = ReadText(access_file);
  if (!text) return Err(text.error());
  std::istringstream in(*text);
  std::string key;
  unsigned minor = 0;
  while (in >> key) {
    if (key == "DeviceFileMinor:" && in >> minor) return minor;
  }
  return Err(FailedPrecondition(access_file + ": no 'DeviceFileMinor: N' line"));
}

Result<std::vector<DeviceNode>> TaskDeviceNodes(const DriverRoots& roots, const std::vector<TaskGpu>& gpus) {
  std::vector<DeviceNode> nodes;
  if (gpus.empty()) return nodes;
  auto add = [&](const std::string& name, bool required) -> Status {
    auto node = StatDevice(roots.dev + "/" + name, "/dev/" + name);
    if (node) {
      nodes.push_back(*node);
      return Status::Ok();
    }
    if (!required && node.error().code() == Code::kNotFound) return Status::Ok();
    return node.error();
  };
  if (Status s = add("nvidiactl", true); !s.ok()) return Err(s);
  if (Status s = add("nvidia-uvm", false); !s.ok()) return Err(s);
  if (Status s = add("nvidia-uvm-tools", false); !s.ok()) return Err(s);
  std::set<int> seen;
  for (const TaskGpu& g : gpus) {
    if (g.minor < 0) return Err(FailedPrecondition("GPU " + g.pci_bus_id + ": its minor number is unknown"));
    if (seen.insert(g.minor).second) {
      if (Status s = add("nvidia" + std::to_string(g.minor), true); !s.ok()) return Err(s);
    }
    if (!g.mig) continue;
    const std::string gi = CapsDir(roots, g.minor, *g.mig);
    for (const std::string& access : {gi + "/access", gi + "/ci" + std::to_string(g.mig->compute_instance) + "/access"}) {
      auto cap = ReadCapMinor(access);
      if (!cap) return Err(Status(cap.error().code(), "MIG capability of GPU " + std::to_string(g.minor) + ": " + cap.error().message()));
      if (Status s = add("nvidia-caps/nvidia-cap" + std::to_string(*cap), true); !s.ok()) return Err(s);
    }
  }
  return nodes;
}

std::vector<DeviceRule> TaskDeviceRules(const std::vector<DeviceNode>& nodes) {
  std::vector<DeviceRule> rules = DefaultDeviceRules();
  for (const DeviceNode& n : nodes) rules.push_back({n.type, n.major, n.minor, "rw"});
  return rules;
}

std::string ParamsWithoutDeviceFileChanges(const std::string& params) {
  std::istringstream in(params);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("ModifyDeviceFiles:", 0) == 0) line = "ModifyDeviceFiles: 0";
    out += line + "\n";
  }
  return out;
}

std::vector<Bind> ProcDriverBinds(const DriverRoots& roots, const std::vector<TaskGpu>& gpus,
                                  const std::string& params_copy) {
  const std::string inside = "/proc/driver/nvidia";
  std::vector<Bind> binds;
  if (Exists(roots.proc_driver + "/version")) binds.emplace_back(roots.proc_driver + "/version", inside + "/version");
  if (!params_copy.empty()) binds.emplace_back(params_copy, inside + "/params");
  std::set<std::string> seen;
  for (const TaskGpu& g : gpus) {
    const std::string bus = ProcBusId(g.pci_bus_id);
    if (!bus.empty() && seen.insert(bus).second && Exists(roots.proc_driver + "/gpus/" + bus))
      binds.emplace_back(roots.proc_driver + "/gpus/" + bus, inside + "/gpus/" + bus);
    if (!g.mig || g.minor < 0) continue;
    const std::string gi = CapsDir(roots, g.minor, *g.mig);
    const std::string rel = gi.substr(roots.proc_driver.size());
    const std::string ci = "/ci" + std::to_string(g.mig->compute_instance) + "/access";
    for (const std::string& file : {std::string("/access"), ci})
      if (Exists(gi + file)) binds.emplace_back(gi + file, inside + rel + file);
  }
  return binds;
}

}  // namespace allot
