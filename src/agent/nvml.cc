// Loading NVML and discovering GPUs (../shared/reference/NVML-MIG.md §1–2).
#include "agent/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <type_traits>

#include "agent/nvml_internal.h"
#include "fleet/gpu_catalog.h"

namespace allot {
namespace nvml_internal {
namespace {

constexpr std::string_view kRefusal = "; the agent will not register GPUs";

// One row per symbol: the versioned name the reference says to use, and where it goes. A
// missing symbol refuses the library, except where an older equivalent is named as `fallback`.
struct Symbol {
  const char* name;
  void (*set)(NvmlFunctions&, void*);
  const char* fallback;
};

// dlsym gives void*; POSIX guarantees it converts to the function's type.
template <auto Member>
void Set(NvmlFunctions& f, void* fn) {
  f.*Member = reinterpret_cast<std::remove_reference_t<decltype(f.*Member)>>(fn);
}

const std::vector<Symbol>& Symbols() {
  using F = NvmlFunctions;
  static const std::vector<Symbol> kSymbols = {
      {"nvmlInit_v2", &Set<&F::init>, nullptr},
      {"nvmlShutdown", &Set<&F::shutdown>, nullptr},
      {"nvmlErrorString", &Set<&F::error_string>, nullptr},
      {"nvmlSystemGetDriverVersion", &Set<&F::driver_version>, nullptr},
      {"nvmlDeviceGetCount_v2", &Set<&F::count>, nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", &Set<&F::handle_by_index>, nullptr},
      {"nvmlDeviceGetName", &Set<&F::name>, nullptr},
      {"nvmlDeviceGetUUID", &Set<&F::uuid>, nullptr},
      {"nvmlDeviceGetMemoryInfo", &Set<&F::memory>, nullptr},
      {"nvmlDeviceGetPciInfo_v3", &Set<&F::pci>, nullptr},
      {"nvmlDeviceGetMinorNumber", &Set<&F::minor_number>, nullptr},
      {"nvmlDeviceGetUtilizationRates", &Set<&F::utilization>, nullptr},
      {"nvmlDeviceGetTemperature", &Set<&F::temperature>, nullptr},
      {"nvmlDeviceGetPowerUsage", &Set<&F::power>, nullptr},
      {"nvmlDeviceGetTotalEccErrors", &Set<&F::ecc>, nullptr},
      {"nvmlDeviceGetRetiredPages", &Set<&F::retired_pages>, nullptr},
      {"nvmlDeviceGetRemappedRows", &Set<&F::remapped_rows>, nullptr},
      // _v3 is in headers since R515; _v2 fills the same 24-byte record (§2).
      {"nvmlDeviceGetComputeRunningProcesses_v3", &Set<&F::processes>, "nvmlDeviceGetComputeRunningProcesses_v2"},
      {"nvmlDeviceGetMigMode", &Set<&F::mig_mode>, nullptr},
      {"nvmlDeviceSetMigMode", &Set<&F::set_mig_mode>, nullptr},
      {"nvmlDeviceGetMaxMigDeviceCount", &Set<&F::max_mig_devices>, nullptr},
      {"nvmlDeviceGetMigDeviceHandleByIndex", &Set<&F::mig_device_by_index>, nullptr},
      {"nvmlDeviceGetGpuInstanceId", &Set<&F::mig_gpu_instance_id>, nullptr},
      {"nvmlDeviceGetComputeInstanceId", &Set<&F::mig_compute_instance_id>, nullptr},
      {"nvmlDeviceGetGpuInstanceProfileInfo", &Set<&F::gi_profile_info>, nullptr},
      {"nvmlDeviceGetGpuInstancePossiblePlacements_v2", &Set<&F::gi_placements>, nullptr},
      {"nvmlDeviceGetGpuInstanceRemainingCapacity", &Set<&F::gi_remaining>, nullptr},
      {"nvmlDeviceCreateGpuInstanceWithPlacement", &Set<&F::gi_create>, nullptr},
      {"nvmlDeviceGetGpuInstances", &Set<&F::gi_list>, nullptr},
      {"nvmlGpuInstanceGetInfo", &Set<&F::gi_info>, nullptr},
      {"nvmlGpuInstanceDestroy", &Set<&F::gi_destroy>, nullptr},
      {"nvmlGpuInstanceGetComputeInstanceProfileInfo", &Set<&F::ci_profile_info>, nullptr},
      {"nvmlGpuInstanceCreateComputeInstance", &Set<&F::ci_create>, nullptr},
      {"nvmlGpuInstanceGetComputeInstances", &Set<&F::ci_list>, nullptr},
      {"nvmlComputeInstanceGetInfo_v2", &Set<&F::ci_info>, nullptr},
      {"nvmlComputeInstanceDestroy", &Set<&F::ci_destroy>, nullptr},
      {"nvmlDeviceGetNvLinkState", &Set<&F::nvlink_state>, nullptr},
      {"nvmlDeviceGetNvLinkRemotePciInfo_v2", &Set<&F::nvlink_remote>, nullptr},
      {"nvmlEventSetCreate", &Set<&F::event_set_create>, nullptr},
      {"nvmlEventSetFree", &Set<&F::event_set_free>, nullptr},
      {"nvmlDeviceRegisterEvents", &Set<&F::register_events>, nullptr},
      {"nvmlEventSetWait_v2", &Set<&F::event_wait>, nullptr},
  };
  return kSymbols;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* ReturnName(nvmlReturn_t r) {
  static constexpr std::array<const char*, 31> kNames = {
      "NVML_SUCCESS", "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_INVALID_ARGUMENT", "NVML_ERROR_NOT_SUPPORTED",
      "NVML_ERROR_NO_PERMISSION", "NVML_ERROR_ALREADY_INITIALIZED", "NVML_ERROR_NOT_FOUND",
      "NVML_ERROR_INSUFFICIENT_SIZE", "NVML_ERROR_INSUFFICIENT_POWER", "NVML_ERROR_DRIVER_NOT_LOADED",
      "NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE", "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_FUNCTION_NOT_FOUND",
      "NVML_ERROR_CORRUPTED_INFOROM", "NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED",
      "NVML_ERROR_OPERATING_SYSTEM", "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_IN_USE", "NVML_ERROR_MEMORY",
      "NVML_ERROR_NO_DATA", "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "NVML_ERROR_INSUFFICIENT_RESOURCES",
      "NVML_ERROR_FREQ_NOT_SUPPORTED", "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "NVML_ERROR_DEPRECATED",
      "NVML_ERROR_NOT_READY", "NVML_ERROR_GPU_NOT_FOUND", "NVML_ERROR_INVALID_STATE",
      "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED"};
  auto i = static_cast<size_t>(r);
  return i < kNames.size() ? kNames[i] : "NVML_ERROR_UNKNOWN";
}

Code CodeFor(nvmlReturn_t r) {
  switch (r) {
    case NVML_ERROR_INVALID_ARGUMENT: return Code::kInvalidArgument;
    case NVML_ERROR_NOT_FOUND: return Code::kNotFound;
    case NVML_ERROR_NO_PERMISSION: return Code::kPermissionDenied;
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return Code::kConflict;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_RESET_REQUIRED:
    case NVML_ERROR_INVALID_STATE: return Code::kFailedPrecondition;
    default: return Code::kUnavailable;  // lost GPU, driver trouble, timeouts: retry or repair
  }
}

const MigProfile* CatalogProfile(const MigGeometry* g, unsigned index, int compute, int memory) {
  // Only the plain and "+me" kinds have catalog rows; GFX, NO_ME and ALL_ME kinds (0xA and up)
  // and 8/6-slice profiles do not.
  if (g == nullptr || index > NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2) return nullptr;
  bool media = index == NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 || index == NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1;
  for (const MigProfile& p : g->profiles) {
    if (p.compute_slices == compute && p.memory_slices == memory && p.media_extensions == media) return &p;
  }
  return nullptr;
}

NvmlBackend::NvmlBackend(void* library, std::string path, NvmlFunctions fns, std::string sysfs_root)
    : library_(library), path_(std::move(path)), nvml_(fns), sysfs_root_(std::move(sysfs_root)) {}

NvmlBackend::~NvmlBackend() {
  if (events_ != nullptr) nvml_.event_set_free(events_);
  nvml_.shutdown();  // one per nvmlInit_v2 (NVML counts them)
  dlclose(library_);
}

std::string NvmlBackend::Describe(nvmlReturn_t r) const {
  const char* text = nvml_.error_string(r);
  return std::string(text != nullptr ? text : "?") + " (" + ReturnName(r) + ")";
}

std::string NvmlBackend::Name(const Gpu& gpu) const {
  return "GPU " + std::to_string(gpu.index) + (gpu.uuid.empty() ? "" : " (" + gpu.uuid + ")");
}

Status NvmlBackend::Fail(nvmlReturn_t r, std::string_view call, const Gpu& gpu) const {
  return {CodeFor(r), std::string(call) + " on " + Name(gpu) + " failed: " + Describe(r)};
}

Result<const NvmlBackend::Gpu*> NvmlBackend::FindGpu(std::string_view uuid) const {
  for (const Gpu& g : gpus_) {
    if (g.uuid == uuid && !uuid.empty()) return &g;
  }
  std::string known;
  for (const Gpu& g : gpus_) known += (known.empty() ? "" : ", ") + g.uuid;
  return Err(NotFound("no GPU with UUID '" + std::string(uuid) + "' on this node; expected one of " + known));
}

Status NvmlBackend::Start() {
  unsigned count = 0;
  if (nvmlReturn_t r = nvml_.count(&count); r != NVML_SUCCESS) {
    return Unavailable("NVML at " + path_ + ": nvmlDeviceGetCount_v2 failed: " + Describe(r) + std::string(kRefusal));
  }
  if (nvmlReturn_t r = nvml_.event_set_create(&events_); r != NVML_SUCCESS) {
    events_ = nullptr;  // run without XID/ECC events; Sample notes it
  }
  for (unsigned i = 0; i < count; ++i) {
    Gpu gpu;
    gpu.index = static_cast<int>(i);
    // No-permission devices are counted by _v2 and refused here: keep them, with the reason.
    if (nvmlReturn_t r = nvml_.handle_by_index(i, &gpu.handle); r != NVML_SUCCESS) {
      gpu.handle = nullptr;
      gpu.problem = "nvmlDeviceGetHandleByIndex_v2 failed: " + Describe(r);
    } else {
      char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      if (nvmlReturn_t r = nvml_.uuid(gpu.handle, uuid, sizeof uuid); r != NVML_SUCCESS) {
        gpu.problem = "nvmlDeviceGetUUID failed: " + Describe(r);
      }
      gpu.uuid = uuid;
    }
    if (gpu.problem.empty() && events_ != nullptr) {
      nvmlReturn_t r = nvml_.register_events(
          gpu.handle, nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError, events_);
      // NOT_SUPPORTED: nothing registered for this GPU, the set is still usable. UNKNOWN (or
      // anything else): the reference says to free the set; the agent then samples without events.
      if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED) {
        nvml_.event_set_free(events_);
        events_ = nullptr;
      }
    }
    gpus_.push_back(std::move(gpu));
  }
  return Status::Ok();
}

int NvmlBackend::NumaNode(const std::string& bus_id) const {
  // NVML's "00000000:18:00.0" is sysfs's "0000:18:00.0" (4-digit domain, lower case).
  if (bus_id.size() < 12) return -1;
  std::string name = bus_id.substr(4);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::ifstream in(sysfs_root_ + "/bus/pci/devices/" + name + "/numa_node");
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

Result<std::string> NvmlBackend::ModelOf(const Gpu& gpu) const {
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (nvmlReturn_t r = nvml_.name(gpu.handle, name, sizeof name); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetName", gpu));
  }
  return std::string(name);
}

Result<std::vector<NvLinkInfo>> NvmlBackend::NvLinks(const Gpu& gpu) const {
  std::vector<NvLinkInfo> links;
  // Probe from link 0: the header's NVML_NVLINK_MAX_LINKS grew from 12 to 36 (§1).
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t state = NVML_FEATURE_DISABLED;
    nvmlReturn_t r = nvml_.nvlink_state(gpu.handle, link, &state);
    if (r == NVML_ERROR_INVALID_ARGUMENT || r == NVML_ERROR_NOT_SUPPORTED) break;  // no such link
    if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlDeviceGetNvLinkState(link " + std::to_string(link) + ")", gpu));
    if (state != NVML_FEATURE_ENABLED) continue;
    nvmlPciInfo_t remote{};
    if (nvmlReturn_t rr = nvml_.nvlink_remote(gpu.handle, link, &remote); rr != NVML_SUCCESS) {
      return Err(Fail(rr, "nvmlDeviceGetNvLinkRemotePciInfo_v2(link " + std::to_string(link) + ")", gpu));
    }
    links.push_back({static_cast<int>(link), Upper(remote.busId), -1});
  }
  return links;
}

Result<GpuInfo> NvmlBackend::DescribeGpu(const Gpu& gpu) const {
  GpuInfo info;
  info.index = gpu.index;
  info.uuid = gpu.uuid;
  if (!gpu.problem.empty()) {
    info.problem = gpu.problem;
    return info;
  }
  auto name = ModelOf(gpu);
  if (!name) return Err(name.error());
  info.name = *name;
  if (auto model = CatalogModelForNvmlName(info.name)) {
    info.model = std::string(*model);
  } else {
    info.problem = model.error().message();
  }
  nvmlMemory_t memory{};
  if (nvmlReturn_t r = nvml_.memory(gpu.handle, &memory); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetMemoryInfo", gpu));
  }
  info.memory_bytes = memory.total;
  nvmlPciInfo_t pci{};
  if (nvmlReturn_t r = nvml_.pci(gpu.handle, &pci); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetPciInfo_v3", gpu));
  }
  info.pci_bus_id = Upper(pci.busId);
  // The node's `cuda` label; a driver without the call just gives none.
  int cc_major = 0, cc_minor = 0;
  if (nvml_.cuda_capability != nullptr && nvml_.cuda_capability(gpu.handle, &cc_major, &cc_minor) == NVML_SUCCESS &&
      cc_major > 0) {
    info.cuda_capability = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  }
  // /dev/nvidiaN's N: not the NVML index, which follows PCI order and may differ.
  unsigned minor = 0;
  if (nvmlReturn_t r = nvml_.minor_number(gpu.handle, &minor); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetMinorNumber", gpu));
  }
  info.minor = static_cast<int>(minor);
  info.numa_node = NumaNode(info.pci_bus_id);
  unsigned current = 0, pending = 0;
  nvmlReturn_t r = nvml_.mig_mode(gpu.handle, &current, &pending);
  if (r == NVML_SUCCESS) {
    info.mig_capable = true;
    info.mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
    info.mig_pending = pending == NVML_DEVICE_MIG_ENABLE;
  } else if (r != NVML_ERROR_NOT_SUPPORTED) {
    return Err(Fail(r, "nvmlDeviceGetMigMode", gpu));
  }
  if (info.mig_enabled) {
    auto mig = ListMig(gpu, info.model);
    if (!mig) return Err(mig.error());
    for (RawGpuInstance& gi : *mig) info.mig.push_back(std::move(gi.info));
  }
  auto links = NvLinks(gpu);
  if (!links) return Err(links.error());
  info.nvlinks = std::move(*links);
  return info;
}

Result<GpuInventory> NvmlBackend::Discover() {
  GpuInventory inv;
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (nvmlReturn_t r = nvml_.driver_version(version, sizeof version); r != NVML_SUCCESS) {
    return Err(Status(CodeFor(r), "nvmlSystemGetDriverVersion failed: " + Describe(r)));
  }
  inv.driver_version = version;
  for (const Gpu& gpu : gpus_) {
    auto info = DescribeGpu(gpu);
    if (!info) {
      // One GPU that cannot be read (lost since Open, a driver error) is reported with the
      // reason and left out of registration; the node's other GPUs still are.
      GpuInfo lost;
      lost.index = gpu.index;
      lost.uuid = gpu.uuid;
      lost.problem = info.error().message();
      inv.gpus.push_back(std::move(lost));
      continue;
    }
    inv.gpus.push_back(std::move(*info));
  }
  // NVLink peers: a link whose far end is another GPU joins the two; a link to anything else is
  // an NVSwitch, and every GPU on one switch reaches every other (HGX boards).
  std::map<std::string, int> gpu_by_bus;
  for (const GpuInfo& g : inv.gpus) {
    if (!g.pci_bus_id.empty()) gpu_by_bus[g.pci_bus_id] = g.index;
  }
  std::map<std::string, std::set<int>> on_switch;
  for (GpuInfo& g : inv.gpus) {
    for (NvLinkInfo& l : g.nvlinks) {
      auto it = gpu_by_bus.find(l.remote_bus_id);
      if (it != gpu_by_bus.end()) {
        l.peer_gpu = it->second;
      } else {
        on_switch[l.remote_bus_id].insert(g.index);
      }
    }
  }
  for (GpuInfo& g : inv.gpus) {
    std::set<int> peers;
    for (const NvLinkInfo& l : g.nvlinks) {
      if (l.peer_gpu >= 0) peers.insert(l.peer_gpu);
      else peers.insert(on_switch[l.remote_bus_id].begin(), on_switch[l.remote_bus_id].end());
    }
    peers.erase(g.index);
    g.nvlink_peers.assign(peers.begin(), peers.end());
  }
  return inv;
}

}  // namespace nvml_internal

Result<std::unique_ptr<GpuBackend>> OpenNvml(const NvmlOptions& options) {
  using nvml_internal::kRefusal;
  const std::string& path = options.library;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Err(Unavailable("no NVML at " + path + ": " + (why != nullptr ? why : "dlopen failed") +
                           std::string(kRefusal)));
  }
  nvml_internal::NvmlFunctions fns;
  std::vector<std::string> missing;
  for (const nvml_internal::Symbol& s : nvml_internal::Symbols()) {
    void* fn = dlsym(lib, s.name);
    if (fn == nullptr && s.fallback != nullptr) fn = dlsym(lib, s.fallback);
    if (fn == nullptr) {
      missing.push_back(std::string(s.name) + (s.fallback != nullptr ? std::string(" (or ") + s.fallback + ")" : ""));
    }
    s.set(fns, fn);
  }
  fns.cuda_capability = reinterpret_cast<nvml_internal::api::DeviceGetCudaComputeCapabilityFn>(
      dlsym(lib, "nvmlDeviceGetCudaComputeCapability"));
  fns.process_utilization = reinterpret_cast<nvml_internal::api::DeviceGetProcessUtilizationFn>(
      dlsym(lib, "nvmlDeviceGetProcessUtilization"));
  if (!missing.empty()) {
    dlclose(lib);
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    return Err(Unavailable("NVML at " + path + " lacks " + list +
                           " (expected every versioned symbol of NVML-MIG.md §2, driver R515 or newer)" +
                           std::string(kRefusal)));
  }
  if (nvmlReturn_t r = fns.init(); r != NVML_SUCCESS) {
    const char* text = fns.error_string(r);
    std::string why = std::string(text != nullptr ? text : "?") + " (" + nvml_internal::ReturnName(r) + ")";
    dlclose(lib);
    return Err(Unavailable("NVML at " + path + ": nvmlInit_v2 failed: " + why + std::string(kRefusal)));
  }
  auto backend = std::make_unique<nvml_internal::NvmlBackend>(lib, path, fns, options.sysfs_root);
  if (Status s = backend->Start(); !s.ok()) return Err(s);
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace allot
