// Which NVIDIA device nodes and driver proc files a GPU task gets, found on the host. The task's
// sandbox has a fresh /dev: only these nodes are bound into it, and its device cgroup allows
// only these (device_cgroup.h), so the allocation is enforced by what exists and what the kernel
// lets open, not by CUDA_VISIBLE_DEVICES (which a task may overwrite).
//
//   every GPU task   /dev/nvidiactl (195:255); /dev/nvidia-uvm and /dev/nvidia-uvm-tools when
//                    the host has them (CUDA needs UVM; their major is dynamic)
//   each of its GPUs /dev/nvidiaN, N = the GPU's minor number from NVML (not its index)
//   a MIG slice      its parent GPU's /dev/nvidiaN and the two capability nodes of its GPU
//                    instance and compute instance: /dev/nvidia-caps/nvidia-capM, M read from
//                    <proc>/capabilities/gpuN/mig/giX/access and .../giX/ciY/access
//                    ("DeviceFileMinor: M"); the access files are shown to the task too, since
//                    CUDA reads them to find its caps
//   never            /dev/nvidia-modeset (display), other GPUs' nodes, other slices' caps
//
// Major and minor numbers come from stat() of each node, so the device cgroup rule matches the
// node the task sees, including the dynamic majors of nvidia-uvm and nvidia-caps. Paths come
// from DriverRoots, so tests use nodes they made with mknod and a fake driver proc tree.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/run/device_cgroup.h"
#include "core/status.h"

namespace allot {

struct DriverRoots {
  std::string dev = "/dev";                          // allot-agent --device-root
  std::string proc_driver = "/proc/driver/nvidia";   // allot-agent --proc-driver-root
};

struct DeviceNode {
  std::string host_path;      // under DriverRoots::dev
  std::string sandbox_path;   // where the task sees it: /dev/…
  char type = 'c';
  unsigned major = 0, minor = 0;
  bool operator==(const DeviceNode&) const = default;
};

struct MigSlice {
  unsigned gpu_instance = 0;      // driver-assigned ids, as NVML reports them
  unsigned compute_instance = 0;
};

// One GPU (or MIG slice) of a task.
struct TaskGpu {
  int minor = -1;             // nvmlDeviceGetMinorNumber
  std::string pci_bus_id;     // NVML's form, "00000000:18:00.0"
  std::optional<MigSlice> mig;
};

// A file or directory bound read-only into the sandbox: host path → sandbox path.
using Bind = std::pair<std::string, std::string>;

// The task's device nodes, in a stable order (control nodes, then per GPU). Empty for a task
// with no GPUs. Fails naming the node that is missing or is not a character device.
Result<std::vector<DeviceNode>> TaskDeviceNodes(const DriverRoots& roots, const std::vector<TaskGpu>& gpus);

// The device cgroup rules for a task with `nodes`: DefaultDeviceRules() plus "rw" on each node.
std::vector<DeviceRule> TaskDeviceRules(const std::vector<DeviceNode>& nodes);

// What the task sees under /proc/driver/nvidia: version and params (when the host has them)
// and, of gpus/<bus id>/ and capabilities/, only its own GPUs' entries. `params_copy`: the host's
// params with ModifyDeviceFiles set to 0 (so the driver never recreates nodes inside), or "".
std::vector<Bind> ProcDriverBinds(const DriverRoots& roots, const std::vector<TaskGpu>& gpus,
                                  const std::string& params_copy);

// A node as stat() shows it. NotFound when absent; FailedPrecondition when not a char device.
Result<DeviceNode> StatDevice(const std::string& host_path, const std::string& sandbox_path);
// "DeviceFileMinor: 12" from a MIG access file.
Result<unsigned> ReadCapMinor(const std::string& access_file);
// The host's params text with "ModifyDeviceFiles: 1" turned into 0.
std::string ParamsWithoutDeviceFileChanges(const std::string& params);
// NVML's "00000000:18:00.0" as the driver's proc names it, "0000:18:00.0".
std::string ProcBusId(const std::string& nvml_bus_id);

}  // namespace allot
