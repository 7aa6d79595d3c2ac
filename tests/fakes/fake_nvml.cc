// A fake libnvidia-ml.so for tests: the same C symbols, signatures and return codes as NVML for
// the subset allot calls (src/agent/nvml_api.h), over the world in fake_nvml_state.h. Loaded by
// the agent with a real dlopen, so the loading path, the ABI and the agent's logic are exercised
// together. Deterministic: handles encode (GPU, GI, CI) and IDs are the lowest free ones.
//
// Over 800 lines, on purpose: one short function per exported NVML symbol (about 45), kept in
// one file so the fake's whole ABI surface reads as one list beside src/agent/nvml_api.h.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "agent/nvml_api.h"
#include "fakes/fake_nvml_state.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using fake_nvml::Ci;
using fake_nvml::Gi;
using fake_nvml::Gpu;
using fake_nvml::Refusal;

// Handles are not pointers to anything: kind in the top byte, GPU index + 1, GI and CI IDs.
enum Kind : uint64_t { kDevice = 1, kGi = 2, kCi = 3, kMigDevice = 4, kEventSet = 5 };

struct Decoded {
  uint64_t kind;
  unsigned gpu, gi, ci;
};

template <class H>
H Encode(Kind kind, unsigned gpu, unsigned gi = 0, unsigned ci = 0) {
  uint64_t v = kind << 56 | uint64_t(gpu + 1) << 40 | uint64_t(gi & 0xFFFFF) << 20 | (ci & 0xFFFFF);
  return reinterpret_cast<H>(static_cast<uintptr_t>(v));
}

template <class H>
Decoded Decode(H h) {
  auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
  return {v >> 56, static_cast<unsigned>((v >> 40) & 0xFFFF) - 1, static_cast<unsigned>((v >> 20) & 0xFFFFF),
          static_cast<unsigned>(v & 0xFFFFF)};
}

std::mutex mu;
int inits = 0;
fake_nvml::Fake* fake = nullptr;
std::map<unsigned, std::deque<size_t>> event_sets;  // set → queued event indices
unsigned next_event_set = 1;

const char* Name(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    default: return "NVML_ERROR_OTHER";
  }
}

nvmlReturn_t FromRefusal(Refusal r) {
  switch (r) {
    case Refusal::kNone: return NVML_SUCCESS;
    case Refusal::kInvalidArgument: return NVML_ERROR_INVALID_ARGUMENT;
    case Refusal::kNotSupported: return NVML_ERROR_NOT_SUPPORTED;
    case Refusal::kInsufficientResources: return NVML_ERROR_INSUFFICIENT_RESOURCES;
    case Refusal::kInUse: return NVML_ERROR_IN_USE;
  }
  return NVML_ERROR_UNKNOWN;
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned len) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

// Resolves a device handle (a whole GPU, or with `mig` a MIG device too). Sets *r on failure.
Gpu* DeviceOf(nvmlDevice_t h, nvmlReturn_t* r, bool mig = false, Decoded* d = nullptr) {
  *r = NVML_ERROR_UNINITIALIZED;
  if (fake == nullptr) return nullptr;
  Decoded x = Decode(h);
  if (d != nullptr) *d = x;
  *r = NVML_ERROR_INVALID_ARGUMENT;
  if (!(x.kind == kDevice || (mig && x.kind == kMigDevice)) || x.gpu >= fake->world().gpus.size()) return nullptr;
  Gpu& g = fake->world().gpus[x.gpu];
  if (g.lost) {
    *r = NVML_ERROR_GPU_IS_LOST;
    return nullptr;
  }
  *r = NVML_SUCCESS;
  return &g;
}

Gi* GiOf(Gpu& g, unsigned id) {
  for (Gi& gi : g.gis) {
    if (gi.id == id) return &gi;
  }
  return nullptr;
}

Ci* CiOf(Gi& gi, unsigned id) {
  for (Ci& c : gi.cis) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// The GI (and its GPU) a GI handle names, if it still exists.
Gi* GpuInstanceOf(nvmlGpuInstance_t h, Gpu** g, unsigned* gpu_index, nvmlReturn_t* r) {
  *r = fake == nullptr ? NVML_ERROR_UNINITIALIZED : NVML_ERROR_INVALID_ARGUMENT;
  if (fake == nullptr) return nullptr;
  Decoded d = Decode(h);
  if (d.kind != kGi || d.gpu >= fake->world().gpus.size()) return nullptr;
  *g = &fake->world().gpus[d.gpu];
  *gpu_index = d.gpu;
  Gi* gi = GiOf(**g, d.gi);
  if (gi != nullptr) *r = NVML_SUCCESS;
  return gi;
}

// The MIG device handles of a GPU, in (GI ID, CI ID) order.
std::vector<std::pair<unsigned, unsigned>> MigDevices(const Gpu& g) {
  std::vector<std::pair<unsigned, unsigned>> out;
  for (const Gi& gi : g.gis) {
    for (const Ci& c : gi.cis) out.emplace_back(gi.id, c.id);
  }
  return out;
}

nvmlReturn_t Logged(nvmlReturn_t r, const std::string& call, const std::string& extra = "") {
  fake->Log(call + " -> " + Name(r) + (extra.empty() ? "" : " " + extra));
  if (r == NVML_SUCCESS) fake->SaveState();
  return r;
}

#define LOCKED std::lock_guard<std::mutex> lock(mu)

// The live file's telemetry (fake_nvml_state.h); a bad file is reported and the last good one kept.
void ReadLive() {
  std::string error;
  if (fake != nullptr && !fake->LoadLive(&error)) std::fprintf(stderr, "fake NVML: %s\n", error.c_str());
}

// The processes whose command line contains `match`, by pid.
std::vector<unsigned> ProcessesMatching(const std::string& match) {
  std::vector<unsigned> out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    unsigned long pid = std::strtoul(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    // read(2), not a stream: a process that exits between open and read makes read fail with
    // ESRCH, which libstdc++'s filebuf throws through an istreambuf_iterator, killing the agent
    // this library is loaded into.
    std::string cmdline;
    int fd = open((std::string("/proc/") + e->d_name + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) cmdline.append(buf, static_cast<size_t>(n));
    close(fd);
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (static_cast<pid_t>(pid) != getpid() && cmdline.find(match) != std::string::npos) out.push_back(static_cast<unsigned>(pid));
  }
  closedir(proc);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// --- Initialisation and errors -------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlInit_v2() {
  LOCKED;
  if (inits > 0) {
    ++inits;
    return NVML_SUCCESS;
  }
  const char* config = std::getenv("FAKE_NVML_CONFIG");
  if (config == nullptr) {
    std::fprintf(stderr, "fake NVML: FAKE_NVML_CONFIG is not set; acting as a machine without a driver\n");
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  auto* f = new fake_nvml::Fake();
  std::string error;
  if (!f->Load(config, &error)) {
    std::fprintf(stderr, "fake NVML: %s\n", error.c_str());
    delete f;
    return NVML_ERROR_UNKNOWN;
  }
  if (f->world().init_error != 0) {
    auto r = static_cast<nvmlReturn_t>(f->world().init_error);
    f->Log(std::string("nvmlInit_v2 -> ") + Name(r));
    delete f;
    return r;
  }
  fake = f;
  inits = 1;
  fake->Log("nvmlInit_v2 -> NVML_SUCCESS");
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown() {
  LOCKED;
  if (inits == 0) return NVML_ERROR_UNINITIALIZED;
  if (--inits == 0) {
    fake->Log("nvmlShutdown -> NVML_SUCCESS");
    delete fake;
    fake = nullptr;
    event_sets.clear();
  }
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources available";
    default: return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  return CopyString(fake->world().driver, version, length);
}

// --- Devices ---------------------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(fake->world().gpus.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= fake->world().gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = Encode<nvmlDevice_t>(kDevice, index);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, true, &d);
  if (g == nullptr) return r;
  if (d.kind == kDevice) return CopyString(g->name, name, length);
  Gi* gi = GiOf(*g, d.gi);
  if (gi == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, gi->profile);
  return CopyString(g->name + " MIG " + std::to_string(p->compute) + "g." + std::to_string(p->memory_mb / 1000) + "gb",
                    name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, true, &d);
  if (g == nullptr) return r;
  if (d.kind == kDevice) return CopyString(g->uuid, uuid, length);
  Gi* gi = GiOf(*g, d.gi);
  Ci* ci = gi != nullptr ? CiOf(*gi, d.ci) : nullptr;
  if (ci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;  // stale after a destroy, as NVML warns
  return CopyString(fake->MigUuid(*g, *gi, *ci), uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, true, &d);
  if (g == nullptr) return r;
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long used = g->used_bytes;
  for (const fake_nvml::Process& p : g->processes) {
    if (d.kind == kDevice || (p.gi == d.gi && p.ci == d.ci)) used += p.used_bytes;
  }
  unsigned long long total = g->memory_bytes;
  if (d.kind == kMigDevice) {
    Gi* gi = GiOf(*g, d.gi);
    if (gi == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    total = static_cast<unsigned long long>(fake->FindProfileById(*g, gi->profile)->memory_mb) << 20;
  }
  *memory = {total, total > used ? total - used : 0, used};
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = {};
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:00.0", 0u, g->bus_number);
  std::snprintf(pci->busId, sizeof pci->busId, "%s", g->bus.c_str());
  pci->bus = g->bus_number;
  pci->pciDeviceId = g->model != nullptr ? g->model->pci_device : 0x000010DE;
  pci->pciSubSystemId = 0x16C110DE;
  return NVML_SUCCESS;
}

// --- Telemetry -------------------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (util == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (g->mig_current) return NVML_ERROR_NOT_SUPPORTED;  // NVML-MIG.md §2
  ReadLive();
  g = DeviceOf(device, &r);
  *util = {g->util, g->mem_util};
  return NVML_SUCCESS;
}

// Every matching process gets one sample stamped now, newer than any lastSeenTimeStamp before it.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* samples,
                                                         unsigned int* count, unsigned long long last_seen_us) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  ReadLive();
  auto& gpus = fake->world().gpus;
  unsigned index = 0;
  while (index < gpus.size() && gpus[index].uuid != g->uuid) ++index;
  unsigned long long now_us = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::vector<nvmlProcessUtilizationSample_t> list;
  for (const fake_nvml::ProcUtil& u : fake->world().proc_utils) {
    if (u.gpu != index || now_us <= last_seen_us) continue;
    std::vector<unsigned> pids = u.match.empty() ? std::vector<unsigned>{u.pid} : ProcessesMatching(u.match);
    for (unsigned pid : pids) list.push_back({pid, now_us, u.sm, u.mem, 0, 0});
  }
  if (list.empty()) {
    *count = 0;
    return NVML_ERROR_NOT_FOUND;
  }
  if (samples == nullptr || *count < list.size()) {
    *count = static_cast<unsigned>(list.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(list.begin(), list.end(), samples);
  *count = static_cast<unsigned>(list.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                   unsigned int* temp) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (temp == nullptr || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = g->temp_c;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *minor = g->minor;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *major = g->model != nullptr ? g->model->arch : 0;
  *minor = g->model != nullptr ? g->model->cc_minor : 0;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (power == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *power = g->power_mw;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t type,
                                                     nvmlEccCounterType_t counter, unsigned long long* count) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (count == nullptr || type > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter > NVML_AGGREGATE_ECC) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!g->ecc) return NVML_ERROR_NOT_SUPPORTED;
  // The fake keeps one set of counters: volatile and aggregate read the same.
  *count = type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? g->ecc_corrected : g->ecc_uncorrected;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                                   unsigned int* count, unsigned long long* addresses) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // Page retirement is pre-Ampere; Ampere and newer remap rows instead (NVML-MIG.md §5).
  if (g->model == nullptr || g->model->arch >= 8) return NVML_ERROR_NOT_SUPPORTED;
  unsigned n = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? g->retired_dbe : g->retired_sbe;
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n && addresses != nullptr; ++i) addresses[i] = 0x1000ull * (i + 1);
  *count = n;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrected,
                                                   unsigned int* uncorrected, unsigned int* pending,
                                                   unsigned int* failed) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (!corrected || !uncorrected || !pending || !failed) return NVML_ERROR_INVALID_ARGUMENT;
  if (g->model == nullptr || g->model->arch < 8 || !g->gis.empty()) return NVML_ERROR_NOT_SUPPORTED;
  *corrected = g->remapped_corrected;
  *uncorrected = g->remapped_uncorrected;
  *pending = g->remap_pending;
  *failed = 0;
  return NVML_SUCCESS;
}

// _v2 and _v3 fill the same 24-byte record (NVML-MIG.md §2, §3).
static nvmlReturn_t Processes(nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, true, &d);
  if (g == nullptr) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<nvmlProcessInfo_t> list;
  for (const fake_nvml::Process& p : g->processes) {
    // The parent GPU sees every process; a MIG device only its own instance's.
    if (d.kind == kMigDevice && (p.gi != d.gi || p.ci != d.ci)) continue;
    list.push_back({p.pid, p.used_bytes, p.gi, p.ci});
  }
  if (d.kind != kMigDevice) {
    ReadLive();
    const unsigned index = static_cast<unsigned>(g - fake->world().gpus.data());
    for (const fake_nvml::ProcMem& m : fake->world().proc_mems) {
      if (m.gpu != index) continue;
      for (unsigned pid : ProcessesMatching(m.match)) list.push_back({pid, m.used_bytes, 0xFFFFFFFF, 0xFFFFFFFF});
    }
  }
  if (*count < list.size()) {
    *count = static_cast<unsigned>(list.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (!list.empty() && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < list.size(); ++i) infos[i] = list[i];
  *count = static_cast<unsigned>(list.size());
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  return Processes(device, count, infos);
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  return Processes(device, count, infos);
}

// --- MIG mode and MIG devices ----------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (g->model == nullptr || g->model->profiles == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *current = g->mig_current;
  *pending = g->mig_pending;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode, nvmlReturn_t* activation) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, false, &d);
  if (g == nullptr) return r;
  std::string call = "nvmlDeviceSetMigMode gpu=" + std::to_string(d.gpu) + " mode=" + std::to_string(mode);
  if (activation == nullptr || mode > NVML_DEVICE_MIG_ENABLE) return Logged(NVML_ERROR_INVALID_ARGUMENT, call);
  if (g->model == nullptr || g->model->profiles == nullptr) return Logged(NVML_ERROR_NOT_SUPPORTED, call);
  // Any GPU user refuses the change (NVML-MIG.md §5); so do instances left when disabling.
  if (!g->processes.empty() || (mode == NVML_DEVICE_MIG_DISABLE && !g->gis.empty())) {
    return Logged(NVML_ERROR_IN_USE, call);
  }
  g->mig_pending = mode == NVML_DEVICE_MIG_ENABLE;
  if (g->reset_blocked) {
    *activation = NVML_ERROR_RESET_REQUIRED;  // passthrough VM: pending until the VM reboots
  } else {
    g->mig_current = g->mig_pending;  // Hopper applies it now; Ampere resets the GPU to apply it
    *activation = NVML_SUCCESS;
  }
  return Logged(NVML_SUCCESS, call, std::string("activation=") + Name(*activation));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = g->mig_current ? g->model->compute_slices : 0;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                             nvmlDevice_t* mig) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, false, &d);
  if (g == nullptr) return r;
  if (mig == nullptr || !g->mig_current || index >= g->model->compute_slices) return NVML_ERROR_INVALID_ARGUMENT;
  auto devices = MigDevices(*g);
  if (index >= devices.size()) return NVML_ERROR_NOT_FOUND;
  *mig = Encode<nvmlDevice_t>(kMigDevice, d.gpu, devices[index].first, devices[index].second);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  if (DeviceOf(device, &r, true, &d) == nullptr) return r;
  if (id == nullptr || d.kind != kMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
  *id = d.gi;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  if (DeviceOf(device, &r, true, &d) == nullptr) return r;
  if (id == nullptr || d.kind != kMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
  *id = d.ci;
  return NVML_SUCCESS;
}

// --- GPU instances ---------------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int index,
                                                             nvmlGpuInstanceProfileInfo_t* info) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (info == nullptr || index >= NVML_GPU_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  if (g->model == nullptr || g->model->profiles == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  for (const fake_nvml::GiProfile& p : *g->model->profiles) {
    if (p.index != index) continue;
    *info = {};
    info->id = p.id;
    info->sliceCount = p.compute;
    info->instanceCount = p.max;
    info->multiprocessorCount = p.sms;
    info->copyEngineCount = p.compute;
    info->memorySizeMB = p.memory_mb;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_SUPPORTED;  // a kind this GPU lacks
}

#ifndef FAKE_NVML_OLD_DRIVER
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profile_id,
                                                                       nvmlGpuInstancePlacement_t* placements,
                                                                       unsigned int* count) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, profile_id);
  if (p == nullptr) return g->model->profiles == nullptr ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
  auto n = static_cast<unsigned>(p->starts.size());
  if (placements == nullptr) {  // the size query
    *count = n;
    return NVML_SUCCESS;
  }
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i) placements[i] = {p->starts[i], p->memory};
  *count = n;
  return NVML_SUCCESS;
}
#else
// Old drivers export only the unversioned call; the agent must refuse them, naming _v2.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements(nvmlDevice_t, unsigned int,
                                                                    nvmlGpuInstancePlacement_t*, unsigned int*) {
  return NVML_ERROR_NOT_SUPPORTED;
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device, unsigned int profile_id,
                                                                   unsigned int* count) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, profile_id);
  if (count == nullptr || p == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  *count = fake->Remaining(*g, *p);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profile_id,
                                                                  const nvmlGpuInstancePlacement_t* placement,
                                                                  nvmlGpuInstance_t* gpu_instance) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, false, &d);
  if (g == nullptr) return r;
  std::string call = "nvmlDeviceCreateGpuInstanceWithPlacement gpu=" + std::to_string(d.gpu) +
                     " profile=" + std::to_string(profile_id);
  if (placement == nullptr || gpu_instance == nullptr) return Logged(NVML_ERROR_INVALID_ARGUMENT, call);
  call += " start=" + std::to_string(placement->start) + " size=" + std::to_string(placement->size);
  if (g->model == nullptr || g->model->profiles == nullptr) return Logged(NVML_ERROR_NOT_SUPPORTED, call);
  unsigned id = 0;
  r = FromRefusal(fake->CreateGi(*g, profile_id, placement->start, placement->size, &id));
  if (r != NVML_SUCCESS) return Logged(r, call);
  *gpu_instance = Encode<nvmlGpuInstance_t>(kGi, d.gpu, id);
  return Logged(r, call, "gi=" + std::to_string(id));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profile_id,
                                                   nvmlGpuInstance_t* instances, unsigned int* count) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  Gpu* g = DeviceOf(device, &r, false, &d);
  if (g == nullptr) return r;
  if (count == nullptr || instances == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, profile_id);
  if (p == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // The array is sized to the profile's instanceCount (NVML-MIG.md §2); `count` is output only.
  unsigned n = 0;
  for (const Gi& gi : g->gis) {
    if (gi.profile == profile_id && n < p->max) instances[n++] = Encode<nvmlGpuInstance_t>(kGi, d.gpu, gi.id);
  }
  *count = n;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpu_instance, nvmlGpuInstanceInfo_t* info) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  unsigned gpu = 0;
  Gi* gi = GpuInstanceOf(gpu_instance, &g, &gpu, &r);
  if (gi == nullptr) return r;
  if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, gi->profile);
  *info = {Encode<nvmlDevice_t>(kDevice, gpu), gi->id, gi->profile, {gi->start, p->memory}};
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpu_instance) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  unsigned gpu = 0;
  Gi* gi = GpuInstanceOf(gpu_instance, &g, &gpu, &r);
  if (gi == nullptr) return r;
  unsigned id = gi->id;
  return Logged(FromRefusal(fake->DestroyGi(*g, id)),
                "nvmlGpuInstanceDestroy gpu=" + std::to_string(gpu) + " gi=" + std::to_string(id));
}

// --- Compute instances -----------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpu_instance,
                                                                      unsigned int index, unsigned int engine,
                                                                      nvmlComputeInstanceProfileInfo_t* info) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  unsigned gpu = 0;
  Gi* gi = GpuInstanceOf(gpu_instance, &g, &gpu, &r);
  if (gi == nullptr) return r;
  if (info == nullptr || index >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  const fake_nvml::GiProfile* p = fake->FindProfileById(*g, gi->profile);
  unsigned slices = fake_nvml::CiSlices(index);
  if (engine != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED || slices == 0 || slices > p->compute) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  *info = {};
  info->id = index;  // CI profile IDs equal the indices on A100/H100 (NVML-MIG.md §1)
  info->sliceCount = slices;
  info->instanceCount = p->compute / slices;
  info->multiprocessorCount = p->sms * slices / p->compute;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpu_instance, unsigned int profile_id,
                                                              nvmlComputeInstance_t* compute_instance) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  unsigned gpu = 0;
  Gi* gi = GpuInstanceOf(gpu_instance, &g, &gpu, &r);
  if (gi == nullptr) return r;
  std::string call = "nvmlGpuInstanceCreateComputeInstance gpu=" + std::to_string(gpu) + " gi=" +
                     std::to_string(gi->id) + " profile=" + std::to_string(profile_id);
  if (compute_instance == nullptr) return Logged(NVML_ERROR_INVALID_ARGUMENT, call);
  unsigned id = 0;
  r = FromRefusal(fake->CreateCi(*g, *gi, profile_id, &id));
  if (r != NVML_SUCCESS) return Logged(r, call);
  *compute_instance = Encode<nvmlComputeInstance_t>(kCi, gpu, gi->id, id);
  return Logged(r, call, "ci=" + std::to_string(id));
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpu_instance, unsigned int profile_id,
                                                            nvmlComputeInstance_t* instances, unsigned int* count) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  unsigned gpu = 0;
  Gi* gi = GpuInstanceOf(gpu_instance, &g, &gpu, &r);
  if (gi == nullptr) return r;
  if (instances == nullptr || count == nullptr || fake_nvml::CiSlices(profile_id) == 0) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  unsigned n = 0;
  for (const Ci& c : gi->cis) {
    if (c.profile == profile_id) instances[n++] = Encode<nvmlComputeInstance_t>(kCi, gpu, gi->id, c.id);
  }
  *count = n;
  return NVML_SUCCESS;
}

// The CI (and its GI and GPU) a CI handle names, if it still exists.
static Ci* ComputeInstanceOf(nvmlComputeInstance_t h, Gpu** g, Gi** gi, Decoded* d, nvmlReturn_t* r) {
  *r = fake == nullptr ? NVML_ERROR_UNINITIALIZED : NVML_ERROR_INVALID_ARGUMENT;
  if (fake == nullptr) return nullptr;
  *d = Decode(h);
  if (d->kind != kCi || d->gpu >= fake->world().gpus.size()) return nullptr;
  *g = &fake->world().gpus[d->gpu];
  *gi = GiOf(**g, d->gi);
  Ci* ci = *gi != nullptr ? CiOf(**gi, d->ci) : nullptr;
  if (ci != nullptr) *r = NVML_SUCCESS;
  return ci;
}

FAKE_EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t compute_instance,
                                                       nvmlComputeInstanceInfo_t* info) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  Gi* gi = nullptr;
  Decoded d;
  Ci* ci = ComputeInstanceOf(compute_instance, &g, &gi, &d, &r);
  if (ci == nullptr) return r;
  if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *info = {Encode<nvmlDevice_t>(kDevice, d.gpu), Encode<nvmlGpuInstance_t>(kGi, d.gpu, gi->id), ci->id, ci->profile,
           {ci->start, ci->size}};
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t compute_instance) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = nullptr;
  Gi* gi = nullptr;
  Decoded d;
  Ci* ci = ComputeInstanceOf(compute_instance, &g, &gi, &d, &r);
  if (ci == nullptr) return r;
  return Logged(FromRefusal(fake->DestroyCi(*g, *gi, ci->id)), "nvmlComputeInstanceDestroy gpu=" +
                std::to_string(d.gpu) + " gi=" + std::to_string(gi->id) + " ci=" + std::to_string(d.ci));
}

// --- NVLink ----------------------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* active) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (g->model == nullptr || g->model->nvlinks == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (active == nullptr || link >= g->model->nvlinks) return NVML_ERROR_INVALID_ARGUMENT;
  *active = link < g->links.size() ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                             nvmlPciInfo_t* pci) {
  LOCKED;
  nvmlReturn_t r;
  Gpu* g = DeviceOf(device, &r);
  if (g == nullptr) return r;
  if (g->model == nullptr || g->model->nvlinks == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (pci == nullptr || link >= g->model->nvlinks) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= g->links.size()) return NVML_ERROR_NOT_SUPPORTED;
  *pci = {};
  std::snprintf(pci->busId, sizeof pci->busId, "%s", g->links[link].remote_bus.c_str());
  pci->pciDeviceId = g->links[link].remote_device;  // pciSubSystemId is not filled (NVML-MIG.md §2)
  return NVML_SUCCESS;
}

// --- Events ----------------------------------------------------------------------------------

FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned id = next_event_set++;
  event_sets[id];
  *set = Encode<nvmlEventSet_t>(kEventSet, 0, 0, id);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  Decoded d = Decode(set);
  if (d.kind != kEventSet || event_sets.erase(d.ci) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  LOCKED;
  nvmlReturn_t r;
  Decoded d;
  if (DeviceOf(device, &r, false, &d) == nullptr) return r;
  Decoded s = Decode(set);
  auto it = event_sets.find(s.ci);
  if (s.kind != kEventSet || it == event_sets.end()) return NVML_ERROR_INVALID_ARGUMENT;
  // The config's events happened before any set existed; a set registered for them gets those
  // not yet taken by anyone (an agent restart does not see an XID twice).
  const fake_nvml::World& w = fake->world();
  for (size_t e = 0; e < w.events.size(); ++e) {
    if (w.events[e].gpu == d.gpu && (w.events[e].type & types) && !w.delivered[e]) it->second.push_back(e);
  }
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms) {
  (void)timeout_ms;  // the fake's queue never fills while waiting: it answers at once
  LOCKED;
  if (fake == nullptr) return NVML_ERROR_UNINITIALIZED;
  Decoded s = Decode(set);
  auto it = event_sets.find(s.ci);
  if (s.kind != kEventSet || it == event_sets.end() || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  fake_nvml::World& w = fake->world();
  while (!it->second.empty() && w.delivered[it->second.front()]) it->second.pop_front();
  if (it->second.empty()) return NVML_ERROR_TIMEOUT;
  size_t e = it->second.front();
  it->second.pop_front();
  w.delivered[e] = true;
  fake->SaveState();
  const fake_nvml::Event& ev = w.events[e];
  *data = {Encode<nvmlDevice_t>(kDevice, ev.gpu), ev.type, ev.data, ev.gi, ev.ci};
  return NVML_SUCCESS;
}
