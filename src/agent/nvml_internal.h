// Inside the NVML backend: the resolved symbol table and the class the three .cc files share
// (nvml.cc: loading and discovery; nvml_mig.cc: MIG management; nvml_telemetry.cc: sampling).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/gpu_backend.h"
#include "agent/nvml.h"
#include "agent/nvml_api.h"
#include "fleet/mig.h"

namespace allot::nvml_internal {

namespace api = ::allot::nvml_api;

// Every function the backend calls, resolved by its versioned name (see kSymbols in nvml.cc).
struct NvmlFunctions {
  api::InitFn init = nullptr;
  api::ShutdownFn shutdown = nullptr;
  api::ErrorStringFn error_string = nullptr;
  api::SystemGetDriverVersionFn driver_version = nullptr;
  api::DeviceGetCountFn count = nullptr;
  api::DeviceGetHandleByIndexFn handle_by_index = nullptr;
  api::DeviceGetStringFn name = nullptr;
  api::DeviceGetStringFn uuid = nullptr;
  api::DeviceGetMemoryInfoFn memory = nullptr;
  api::DeviceGetPciInfoFn pci = nullptr;
  api::DeviceGetUintFn minor_number = nullptr;
  // Optional (resolved apart from the required symbols): without it no `cuda` label.
  api::DeviceGetCudaComputeCapabilityFn cuda_capability = nullptr;
  api::DeviceGetUtilizationRatesFn utilization = nullptr;
  api::DeviceGetTemperatureFn temperature = nullptr;
  api::DeviceGetUintFn power = nullptr;
  api::DeviceGetTotalEccErrorsFn ecc = nullptr;
  api::DeviceGetRetiredPagesFn retired_pages = nullptr;
  api::DeviceGetRemappedRowsFn remapped_rows = nullptr;
  api::DeviceGetProcessesFn processes = nullptr;  // _v3, else _v2 (same record)
  // Optional: without it no per-process utilization (tasks sharing a GPU are not told apart).
  api::DeviceGetProcessUtilizationFn process_utilization = nullptr;
  api::DeviceGetMigModeFn mig_mode = nullptr;
  api::DeviceSetMigModeFn set_mig_mode = nullptr;
  api::DeviceGetUintFn max_mig_devices = nullptr;
  api::DeviceGetMigDeviceHandleByIndexFn mig_device_by_index = nullptr;
  api::DeviceGetUintFn mig_gpu_instance_id = nullptr;
  api::DeviceGetUintFn mig_compute_instance_id = nullptr;
  api::DeviceGetGpuInstanceProfileInfoFn gi_profile_info = nullptr;
  api::DeviceGetGpuInstancePossiblePlacementsFn gi_placements = nullptr;
  api::DeviceGetGpuInstanceRemainingCapacityFn gi_remaining = nullptr;
  api::DeviceCreateGpuInstanceWithPlacementFn gi_create = nullptr;
  api::DeviceGetGpuInstancesFn gi_list = nullptr;
  api::GpuInstanceGetInfoFn gi_info = nullptr;
  api::GpuInstanceDestroyFn gi_destroy = nullptr;
  api::GpuInstanceGetComputeInstanceProfileInfoFn ci_profile_info = nullptr;
  api::GpuInstanceCreateComputeInstanceFn ci_create = nullptr;
  api::GpuInstanceGetComputeInstancesFn ci_list = nullptr;
  api::ComputeInstanceGetInfoFn ci_info = nullptr;
  api::ComputeInstanceDestroyFn ci_destroy = nullptr;
  api::DeviceGetNvLinkStateFn nvlink_state = nullptr;
  api::DeviceGetNvLinkRemotePciInfoFn nvlink_remote = nullptr;
  api::EventSetCreateFn event_set_create = nullptr;
  api::EventSetFreeFn event_set_free = nullptr;
  api::DeviceRegisterEventsFn register_events = nullptr;
  api::EventSetWaitFn event_wait = nullptr;
};

// "NVML_ERROR_IN_USE"
const char* ReturnName(nvmlReturn_t r);
// How a caller should react to an NVML error, as a Status code.
Code CodeFor(nvmlReturn_t r);

// A GPU instance as NVML lists it, with the handles MIG management needs.
struct RawGpuInstance {
  MigGpuInstanceInfo info;
  nvmlGpuInstance_t handle = nullptr;
  std::vector<nvmlComputeInstance_t> compute;  // parallel to info.compute
};

// One GPU-instance profile NVML offers on a GPU (walked by index).
struct NvmlGiProfile {
  unsigned index = 0;
  nvmlGpuInstanceProfileInfo_t info{};
};

class NvmlBackend final : public GpuBackend {
 public:
  struct Gpu {
    int index = 0;
    nvmlDevice_t handle = nullptr;
    std::string uuid;
    std::string problem;  // set at Open when the GPU cannot be used at all
    unsigned long long utilization_seen_us = 0;  // the newest process sample taken
  };

  NvmlBackend(void* library, std::string path, NvmlFunctions fns, std::string sysfs_root);
  ~NvmlBackend() override;
  NvmlBackend(const NvmlBackend&) = delete;
  NvmlBackend& operator=(const NvmlBackend&) = delete;

  // Enumerates the GPUs and registers for XID/ECC events; called once by OpenNvml.
  Status Start();

  Result<GpuInventory> Discover() override;
  Result<MigGpuInstanceInfo> CreateMigInstance(std::string_view gpu_uuid, std::string_view profile,
                                               int start) override;
  Status DestroyMigInstance(std::string_view gpu_uuid, std::string_view profile, int start) override;
  Status SetMigMode(std::string_view gpu_uuid, bool enabled) override;
  Result<std::vector<GpuSample>> Sample() override;

 private:
  // "In use by another client (NVML_ERROR_IN_USE)"
  std::string Describe(nvmlReturn_t r) const;
  // A Status for a failed call: "nvmlX(GPU 1 GPU-…) failed: <Describe>"
  Status Fail(nvmlReturn_t r, std::string_view call, const Gpu& gpu) const;
  std::string Name(const Gpu& gpu) const;  // "GPU 1 (GPU-…)"
  Result<const Gpu*> FindGpu(std::string_view uuid) const;
  Result<GpuInfo> DescribeGpu(const Gpu& gpu) const;
  Result<std::vector<NvmlGiProfile>> GiProfiles(const Gpu& gpu) const;
  Result<std::vector<RawGpuInstance>> ListMig(const Gpu& gpu, const std::string& model) const;
  Result<std::vector<NvLinkInfo>> NvLinks(const Gpu& gpu) const;
  int NumaNode(const std::string& bus_id) const;
  Result<std::string> ModelOf(const Gpu& gpu) const;
  Status SampleGpu(const Gpu& gpu, GpuSample& out) const;
  Result<std::vector<GpuProcess>> Processes(const Gpu& gpu) const;
  // The per-process samples since the previous call (Gpu::utilization_seen_us).
  Result<std::vector<ProcessUtilization>> ProcessUtilizations(Gpu& gpu) const;
  void DrainEvents(std::vector<GpuSample>& samples);

  void* library_;
  std::string path_;
  NvmlFunctions nvml_;
  std::string sysfs_root_;
  std::vector<Gpu> gpus_;
  nvmlEventSet_t events_ = nullptr;
};

// The catalog profile a GPU instance of NVML profile `index` with `compute`/`memory` slices is
// (index 0x7/0x8 are the "+me" kinds); nullptr when allot has none.
const MigProfile* CatalogProfile(const MigGeometry* g, unsigned index, int compute, int memory);

}  // namespace allot::nvml_internal
