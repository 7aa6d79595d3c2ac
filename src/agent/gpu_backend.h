// The node agent's view of its GPUs: discovery, MIG management and telemetry behind one narrow
// interface, so the agent's logic is tested against a fake and runs on NVML in production
// (agent/nvml.h). Everything here is plain data; NVML handles never leave the backend.
//
// GPUs are named by UUID in every call: NVML's index order may change across reboots and differs
// from CUDA's (../shared/reference/NVML-MIG.md §2). MIG instances are named as the scheduler's plan
// names them, by profile ("3g.40gb", fleet/mig.h) and first memory slice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace allot {

struct MigComputeInstanceInfo {
  unsigned id = 0;               // driver-assigned, unique within its GPU instance
  unsigned nvml_profile_id = 0;
  int start = 0;                 // first compute slice within the GPU instance
  int size = 0;                  // compute slices
  std::string uuid;              // "MIG-…": what CUDA_VISIBLE_DEVICES takes; empty if NVML gave none
};

struct MigGpuInstanceInfo {
  unsigned id = 0;               // driver-assigned; never derived from the placement
  unsigned nvml_profile_id = 0;  // NVML's profile ID (19 for 1g on H100), read at run time
  std::string profile;           // the catalog's name ("3g.40gb"); empty when allot has no such profile
  int start = 0;                 // first memory slice
  int size = 0;                  // memory slices
  int compute_slices = 0;
  std::vector<MigComputeInstanceInfo> compute;  // by start, then id
};

struct NvLinkInfo {
  int link = 0;
  std::string remote_bus_id;     // the GPU or NVSwitch at the other end
  int peer_gpu = -1;             // the GPU's index when the remote is a GPU of this node
};

struct GpuInfo {
  int index = 0;                 // NVML's index in this process; the UUID is the stable key
  std::string uuid;
  std::string name;              // NVML's name: "NVIDIA H100 80GB HBM3"
  std::string model;             // the catalog's model: "H100-80GB"; empty when unknown (see problem)
  uint64_t memory_bytes = 0;
  std::string pci_bus_id;        // "00000000:18:00.0"
  int minor = -1;                // /dev/nvidia<minor> (nvmlDeviceGetMinorNumber); -1 when unknown
  std::string cuda_capability;   // "9.0" (nvmlDeviceGetCudaComputeCapability); empty when unknown
  // From sysfs (/sys/bus/pci/devices/<bus id>/numa_node): NVML's calls in the reference give no
  // NUMA node. -1 when unknown or the machine has one node.
  int numa_node = -1;
  bool mig_capable = false;
  bool mig_enabled = false;      // current mode
  bool mig_pending = false;      // mode after the next reset (Ampere) or now (Hopper+)
  std::vector<MigGpuInstanceInfo> mig;  // by start
  std::vector<NvLinkInfo> nvlinks;      // active links only
  // GPUs this one reaches over NVLink, directly or through a shared NVSwitch; ascending.
  std::vector<int> nvlink_peers;
  // Why this GPU must not be registered (lost, unknown model); empty when it is usable.
  std::string problem;
};

struct GpuInventory {
  std::string driver_version;
  std::vector<GpuInfo> gpus;     // by index
};

struct XidEvent {
  uint64_t xid = 0;              // 999: NVML could not tell which Xid
  std::optional<unsigned> gpu_instance_id;   // when NVML attributes it to a MIG instance
  std::optional<unsigned> compute_instance_id;
};

struct GpuProcess {
  unsigned pid = 0;
  std::optional<uint64_t> used_bytes;        // absent when NVML cannot tell (e.g. unprivileged)
  std::optional<unsigned> gpu_instance_id;   // set on MIG GPUs
  std::optional<unsigned> compute_instance_id;
};

// One process's share of a GPU over the samples NVML buffered since the previous reading
// (nvmlDeviceGetProcessUtilization): the highest of its samples, so a short burst is not averaged away.
struct ProcessUtilization {
  unsigned pid = 0;
  unsigned sm_percent = 0;
  unsigned memory_percent = 0;   // of memory bandwidth
};

struct RemappedRows {
  unsigned corrected = 0;
  unsigned uncorrected = 0;
  bool pending = false;          // a GPU reset is needed to apply a remap
  bool failed = false;
};

// One reading per GPU. A field NVML does not support there is absent, not zero: utilization on a
// MIG GPU, ECC with ECC off, retired pages on Ampere and newer (they remap rows instead).
struct GpuSample {
  int index = 0;
  std::string uuid;
  Status status;                 // not ok: nothing could be read (e.g. the GPU is lost)
  std::optional<unsigned> utilization_percent;
  std::optional<unsigned> memory_utilization_percent;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<unsigned> power_mw;
  std::optional<unsigned> temperature_c;
  std::optional<uint64_t> ecc_corrected;     // volatile counters: since the last driver load
  std::optional<uint64_t> ecc_uncorrected;
  std::optional<unsigned> retired_pages;
  std::optional<RemappedRows> remapped_rows;
  std::vector<XidEvent> xids;                // since the previous sample
  unsigned double_bit_ecc_events = 0;        // since the previous sample
  std::vector<GpuProcess> processes;
  std::vector<ProcessUtilization> process_utilization;  // by pid; empty where NVML has none
  std::vector<std::string> notes;            // readings refused for a reason other than "not supported"
};

// REQUIRES: one caller at a time (the agent's GPU thread).
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  virtual Result<GpuInventory> Discover() = 0;
  // Creates a GPU instance of `profile` at memory slice `start` and its full-size compute
  // instance (what CUDA needs). A start the profile does not allow, or slices already taken, is
  // refused with the reason and nothing is created.
  virtual Result<MigGpuInstanceInfo> CreateMigInstance(std::string_view gpu_uuid, std::string_view profile,
                                                       int start) = 0;
  // Destroys the instance of `profile` at `start`: its compute instances, then the GPU instance.
  // Refused (failed precondition) while processes run on it.
  virtual Status DestroyMigInstance(std::string_view gpu_uuid, std::string_view profile, int start) = 0;
  // Ok once the mode is current; an error naming why when it is only pending or refused.
  virtual Status SetMigMode(std::string_view gpu_uuid, bool enabled) = 0;
  virtual Result<std::vector<GpuSample>> Sample() = 0;
};

}  // namespace allot
