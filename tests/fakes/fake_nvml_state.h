// The fake NVML's world: GPUs, MIG instances, links, processes and queued events, read from the
// file named by FAKE_NVML_CONFIG, with MIG state kept in "<config>.state" (so a second process —
// an agent restart — sees instances created before) and every mutating call appended to
// "<config>.log" (what the fake was told). Plain C++, no NVML types: fake_nvml.cc adapts it.
//
// The MIG tables and rules are written from ../shared/reference/NVML-MIG.md §4 alone, not from
// src/fleet/mig.h, so the backend's use of the catalog is checked against an independent copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fake_nvml {

struct GiProfile {
  unsigned index;          // NVML_GPU_INSTANCE_PROFILE_* (what GetGpuInstanceProfileInfo takes)
  unsigned id;             // the profile ID (what placement/create/list calls take)
  unsigned compute;        // compute slices
  unsigned memory;         // memory slices (placement size)
  unsigned max;            // per GPU
  std::vector<unsigned> starts;
  unsigned memory_mb;
  unsigned sms;
};

struct Model {
  std::string name;        // NVML's name
  unsigned long long memory_mib;
  unsigned pci_device;     // device ID << 16 | 0x10DE
  int arch;                // 7 Volta, 8 Ampere, 9 Hopper (MIG mode needs a reset before Hopper)
  unsigned nvlinks;        // links the GPU has (0: no NVLink)
  unsigned compute_slices; // 0: no MIG
  unsigned memory_slices;
  const std::vector<GiProfile>* profiles;
  int cc_minor = 0;        // CUDA compute capability is arch.cc_minor (8.9 for Ada)
};

struct Ci {
  unsigned id = 0, profile = 0, start = 0, size = 0;
};

struct Gi {
  unsigned id = 0, profile = 0, start = 0;
  std::vector<Ci> cis;
};

struct Link {
  std::string remote_bus;
  unsigned remote_device = 0;
};

struct Process {
  unsigned pid = 0;
  unsigned long long used_bytes = 0;
  unsigned gi = 0xFFFFFFFF, ci = 0xFFFFFFFF;
};

// Per-process utilization (nvmlDeviceGetProcessUtilization) for the processes whose command line
// contains `match` (or the one with `pid`): a test attributes load to a task by its command.
struct ProcUtil {
  unsigned gpu = 0;
  std::string match;
  unsigned pid = 0;
  unsigned sm = 0, mem = 0;
};

// GPU memory (nvmlDeviceGetComputeRunningProcesses) of every process whose command line contains
// `match`: a test makes a task use more memory than its stated vram.
struct ProcMem {
  unsigned gpu = 0;
  std::string match;
  unsigned long long used_bytes = 0;
};

struct Event {
  unsigned gpu = 0;
  unsigned long long type = 0, data = 0;
  unsigned gi = 0xFFFFFFFF, ci = 0xFFFFFFFF;
};

struct Gpu {
  const Model* model = nullptr;
  std::string name, uuid, bus;
  unsigned bus_number = 0;
  unsigned minor = 0;      // /dev/nvidia<minor>; the index unless the config says minor=
  unsigned long long memory_bytes = 0, used_bytes = 0;
  bool mig_current = false, mig_pending = false;
  std::vector<Gi> gis;     // by id
  std::vector<Link> links;
  std::vector<Process> processes;
  unsigned util = 0, mem_util = 0, power_mw = 0, temp_c = 0;
  bool ecc = true;
  unsigned long long ecc_corrected = 0, ecc_uncorrected = 0;
  unsigned retired_sbe = 0, retired_dbe = 0;
  unsigned remapped_corrected = 0, remapped_uncorrected = 0;
  bool remap_pending = false;
  bool lost = false;
  bool reset_blocked = false;  // a passthrough VM: a MIG mode change stays pending
};

struct World {
  std::string driver = "550.54.15";
  int init_error = 0;      // nvmlInit_v2 returns this when set
  std::vector<Gpu> gpus;
  std::vector<Event> events;        // from the config, in order
  std::vector<bool> delivered;      // per event: taken by an event set already (any process)
  std::vector<ProcUtil> proc_utils;
  std::vector<ProcMem> proc_mems;
};

// The reason a MIG request is refused, as NVML's return code would say it.
enum class Refusal { kNone, kInvalidArgument, kNotSupported, kInsufficientResources, kInUse };

class Fake {
 public:
  // Reads the config, then the state file if there is one. False with `error` set on a bad file.
  bool Load(const std::string& config_path, std::string* error);
  void SaveState() const;
  // Re-reads "<config>.live" if it exists: its `gpu` and `proc_util` statements replace the
  // telemetry read so far (a test changes load while the agent runs). False with `error` set.
  bool LoadLive(std::string* error);
  void Log(const std::string& line) const;

  World& world() { return world_; }
  const GiProfile* FindProfileById(const Gpu& g, unsigned id) const;
  // Creates a GPU instance; on success `*id` is its driver-assigned ID.
  Refusal CreateGi(Gpu& g, unsigned profile_id, unsigned start, unsigned size, unsigned* id) const;
  Refusal DestroyGi(Gpu& g, unsigned gi_id) const;
  Refusal CreateCi(Gpu& g, Gi& gi, unsigned ci_profile, unsigned* id) const;
  Refusal DestroyCi(Gpu& g, Gi& gi, unsigned ci_id) const;
  // How many more GIs of the profile fit now.
  unsigned Remaining(const Gpu& g, const GiProfile& p) const;
  std::string MigUuid(const Gpu& g, const Gi& gi, const Ci& ci) const;

 private:
  bool Apply(const std::string& file, int line_no, const std::string& line, std::string* error);
  bool Fits(const Gpu& g, const GiProfile& p, unsigned start) const;

  std::string config_path_;
  World world_;
};

// Compute slices of CI profile `index`; 0 when it is not a CI profile the fake offers.
unsigned CiSlices(unsigned index);
const Model* FindModel(const std::string& name);

}  // namespace fake_nvml
