// The fake NVML's world: tables from NVML-MIG.md §4, the config/state file format, MIG rules.
//
// Config (and state) format: one statement a line, `#` comments, `key=value` words (a value with
// spaces in "quotes"). Statements:
//   driver version=550.54.15
//   init_error code=9                         nvmlInit_v2 fails (9: DRIVER_NOT_LOADED)
//   gpus count=8 name="NVIDIA H100 80GB HBM3"  adds GPUs with derived UUID, bus id, NUMA
//   gpu index=3 mig=on ...                     sets fields of GPU 3: name uuid bus memory_mib used_mib
//        mig mig_pending util mem_util power_mw temp_c ecc ecc_corrected ecc_uncorrected
//        retired_sbe retired_dbe remapped_corrected remapped_uncorrected remap_pending lost
//        reset_blocked
//   nvswitch count=4                          every GPU's links spread over that many NVSwitches
//   nvlink a=0 b=1 links=2                    direct links between two GPUs
//   gi gpu=1 profile=9 start=4 [id=2] [ci=none]   a GPU instance (profile: NVML profile ID),
//                                                 with its full-size CI unless ci=none
//   ci gpu=1 gi=2 profile=2 [id=0]             a compute instance (profile: CI profile ID)
//   process gpu=0 pid=4242 used_mib=1024 [gi=2 ci=0]
//   xid gpu=5 xid=79 [gi=2 ci=0]              a queued XidCriticalError event
//   dbe gpu=5                                 a queued DoubleBitEccError event
//   delivered event=0                         (state only) event 0 was taken already
//   proc_util gpu=0 match="noisy" sm=90 mem=70  per-process utilization of every process whose
//                                             command line (NULs read as spaces) contains match
//                                             (or pid=N): what nvmlDeviceGetProcessUtilization gives
//   proc_mem gpu=0 match="big" used_mib=2048    a compute process on the GPU, with that memory, for
//                                             every process whose command line contains match
//
// Live file "<config>.live" (optional): re-read on every telemetry call, so a test scripts load
// over time. Only `gpu` (telemetry fields), `proc_util` and `proc_mem` statements; when the file
// exists its proc_util and proc_mem statements replace the config's.
//
// Where the fake guesses (no primary source in NVML-MIG.md; a real driver may differ):
// - GI IDs are the lowest free from 1, CI IDs from 0 (drivers use their own per-slot scheme;
//   the reference only says never to derive them from the placement).
// - A start the profile does not allow, or a wrong size, answers INVALID_ARGUMENT.
// - SetMigMode answers IN_USE while processes run or, when disabling, while GIs exist.
// - A CI goes first-fit at a multiple of its size inside its GI.
// - Retired pages: INSUFFICIENT_SIZE when *count is short (some drivers answer SUCCESS to the
//   count-0 query; the backend accepts both).
// - Config events are delivered once, to the first set registered for them in any process; real
//   events reach only the sets registered when they happen.
// - NVSwitch links are dealt round-robin (HGX H100 boards split 5/4/4/5); volatile and
//   aggregate ECC counters read the same; MIG device names are "<GPU name> MIG <n>g.<m>gb".
#include "fakes/fake_nvml_state.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fake_nvml {
namespace {

// NVML-MIG.md §4, the 7-compute / 8-memory-slice family (H100-80GB values for sizes and SMs).
const std::vector<GiProfile> kSeven = {
    {0x0, 19, 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}, 9856, 16},
    {0x7, 20, 1, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 9856, 16},
    {0x9, 15, 1, 2, 4, {0, 2, 4, 6}, 19968, 26},
    {0x1, 14, 2, 2, 3, {0, 2, 4}, 19968, 32},
    {0x2, 9, 3, 4, 2, {0, 4}, 40192, 60},
    {0x3, 5, 4, 4, 1, {0}, 40192, 64},
    {0x4, 0, 7, 8, 1, {0}, 80384, 132},
};
// A30-24GB: other profile IDs for the same indices, which is why IDs are read at run time.
const std::vector<GiProfile> kA30 = {
    {0x0, 14, 1, 1, 4, {0, 1, 2, 3}, 5836, 14},
    {0x7, 21, 1, 1, 1, {0, 1, 2, 3}, 5836, 14},
    {0x1, 5, 2, 2, 2, {0, 2}, 11672, 28},
    {0x8, 6, 2, 2, 1, {0, 2}, 11672, 28},
    {0x3, 0, 4, 4, 1, {0}, 23344, 56},
};

const std::vector<Model> kModels = {
    {"NVIDIA H100 80GB HBM3", 81559, 0x233010DE, 9, 18, 7, 8, &kSeven},
    {"NVIDIA H200", 143771, 0x233510DE, 9, 18, 7, 8, &kSeven},
    {"NVIDIA A100-SXM4-80GB", 81920, 0x20B210DE, 8, 12, 7, 8, &kSeven},
    {"NVIDIA A100-SXM4-40GB", 40960, 0x20B010DE, 8, 12, 7, 8, &kSeven},
    {"NVIDIA A30", 24576, 0x20B710DE, 8, 0, 4, 4, &kA30},
    {"NVIDIA L40S", 46068, 0x26B910DE, 8, 0, 0, 0, nullptr, 9},
    {"Tesla V100-SXM2-32GB", 32768, 0x1DB510DE, 7, 6, 0, 0, nullptr},
};

// HGX-like bus numbers for the first eight GPUs.
constexpr unsigned kBuses[] = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};
constexpr unsigned kNvSwitchDevice = 0x22A310DE;

std::string BusId(unsigned bus) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:00.0", 0u, bus);
  return buf;
}

std::string Hex(unsigned long long v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", width, v);
  return buf;
}

uint64_t Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Splits `key=value key="two words"` into a map; the first word is the statement.
bool Words(const std::string& line, std::string* verb, std::map<std::string, std::string>* kv) {
  size_t i = 0;
  auto skip = [&] { while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i; };
  skip();
  while (i < line.size() && line[i] != ' ' && line[i] != '\t') verb->push_back(line[i++]);
  for (skip(); i < line.size(); skip()) {
    size_t eq = line.find('=', i);
    if (eq == std::string::npos) return false;
    std::string key = line.substr(i, eq - i), value;
    i = eq + 1;
    if (i < line.size() && line[i] == '"') {
      size_t end = line.find('"', i + 1);
      if (end == std::string::npos) return false;
      value = line.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') value.push_back(line[i++]);
    }
    (*kv)[key] = value;
  }
  return true;
}

}  // namespace

const Model* FindModel(const std::string& name) {
  for (const Model& m : kModels) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

unsigned CiSlices(unsigned index) {
  // NVML_COMPUTE_INSTANCE_PROFILE_1/2/3/4/7_SLICE; 8, 6, REV1 and 7_NVL are not offered here.
  constexpr unsigned kSlices[] = {1, 2, 3, 4, 7};
  return index < 5 ? kSlices[index] : 0;
}

const GiProfile* Fake::FindProfileById(const Gpu& g, unsigned id) const {
  if (g.model == nullptr || g.model->profiles == nullptr) return nullptr;
  for (const GiProfile& p : *g.model->profiles) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

bool Fake::Fits(const Gpu& g, const GiProfile& p, unsigned start) const {
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) return false;
  unsigned compute = p.compute, same = 1, media = p.index == 0x7 || p.index == 0x8;
  for (const Gi& gi : g.gis) {
    const GiProfile* q = FindProfileById(g, gi.profile);
    if (gi.start < start + p.memory && start < gi.start + q->memory) return false;  // memory overlaps
    compute += q->compute;
    same += q->id == p.id;
    media += q->index == 0x7 || q->index == 0x8;
  }
  return compute <= g.model->compute_slices && same <= p.max && media <= 1;
}

Refusal Fake::CreateGi(Gpu& g, unsigned profile_id, unsigned start, unsigned size, unsigned* id) const {
  if (!g.mig_current) return Refusal::kNotSupported;
  const GiProfile* p = FindProfileById(g, profile_id);
  if (p == nullptr || size != p->memory ||
      std::find(p->starts.begin(), p->starts.end(), start) == p->starts.end()) {
    return Refusal::kInvalidArgument;
  }
  if (!Fits(g, *p, start)) return Refusal::kInsufficientResources;
  // Driver-assigned: the lowest free ID from 1, unrelated to the placement.
  unsigned next = 1;
  while (std::any_of(g.gis.begin(), g.gis.end(), [&](const Gi& gi) { return gi.id == next; })) ++next;
  Gi gi;
  gi.id = next;
  gi.profile = profile_id;
  gi.start = start;
  g.gis.push_back(gi);
  std::sort(g.gis.begin(), g.gis.end(), [](const Gi& a, const Gi& b) { return a.id < b.id; });
  *id = next;
  return Refusal::kNone;
}

Refusal Fake::DestroyGi(Gpu& g, unsigned gi_id) const {
  auto it = std::find_if(g.gis.begin(), g.gis.end(), [&](const Gi& gi) { return gi.id == gi_id; });
  if (it == g.gis.end()) return Refusal::kInvalidArgument;
  if (!it->cis.empty()) return Refusal::kInUse;  // compute instances first (NVML-MIG.md §2, §5)
  for (const Process& p : g.processes) {
    if (p.gi == gi_id) return Refusal::kInUse;
  }
  g.gis.erase(it);
  return Refusal::kNone;
}

Refusal Fake::CreateCi(Gpu& g, Gi& gi, unsigned ci_profile, unsigned* id) const {
  unsigned slices = CiSlices(ci_profile);
  const GiProfile* p = FindProfileById(g, gi.profile);
  if (slices == 0 || slices > p->compute) return Refusal::kInvalidArgument;
  // First fit, aligned to the CI's size, within the GI's compute slices.
  for (unsigned start = 0; start + slices <= p->compute; start += slices) {
    bool free = std::none_of(gi.cis.begin(), gi.cis.end(), [&](const Ci& c) {
      return c.start < start + slices && start < c.start + c.size;
    });
    if (!free) continue;
    unsigned next = 0;
    while (std::any_of(gi.cis.begin(), gi.cis.end(), [&](const Ci& c) { return c.id == next; })) ++next;
    gi.cis.push_back({next, ci_profile, start, slices});
    std::sort(gi.cis.begin(), gi.cis.end(), [](const Ci& a, const Ci& b) { return a.id < b.id; });
    *id = next;
    return Refusal::kNone;
  }
  return Refusal::kInsufficientResources;
}

Refusal Fake::DestroyCi(Gpu& g, Gi& gi, unsigned ci_id) const {
  auto it = std::find_if(gi.cis.begin(), gi.cis.end(), [&](const Ci& c) { return c.id == ci_id; });
  if (it == gi.cis.end()) return Refusal::kInvalidArgument;
  for (const Process& p : g.processes) {
    if (p.gi == gi.id && p.ci == ci_id) return Refusal::kInUse;
  }
  gi.cis.erase(it);
  return Refusal::kNone;
}

unsigned Fake::Remaining(const Gpu& g, const GiProfile& p) const {
  Gpu copy = g;
  copy.mig_current = true;
  unsigned n = 0, id = 0;
  for (unsigned start : p.starts) {
    if (CreateGi(copy, p.id, start, p.memory, &id) == Refusal::kNone) ++n;
  }
  return n;
}

std::string Fake::MigUuid(const Gpu& g, const Gi& gi, const Ci& ci) const {
  uint64_t h = Fnv(g.uuid + "/" + std::to_string(gi.id) + "/" + std::to_string(ci.id) + "/" +
                   std::to_string(gi.start) + "/" + std::to_string(gi.profile));
  return "MIG-" + Hex(h >> 32, 8) + "-" + Hex((h >> 16) & 0xFFFF, 4) + "-5" + Hex(h & 0xFFF, 3) + "-8" +
         Hex((h >> 20) & 0xFFF, 3) + "-" + Hex(h & 0xFFFFFFFFFFFFull, 12);
}

bool Fake::Apply(const std::string& file, int line_no, const std::string& line, std::string* error) {
  std::string verb;
  std::map<std::string, std::string> kv;
  auto fail = [&](const std::string& why) {
    *error = file + ":" + std::to_string(line_no) + ": " + why + " in '" + line + "'";
    return false;
  };
  if (!Words(line, &verb, &kv)) return fail("expected key=value words");
  auto num = [&](const char* key, unsigned long long fallback) -> unsigned long long {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : std::stoull(it->second, nullptr, 0);
  };
  auto gpu = [&](const char* key) -> Gpu* {
    unsigned long long i = num(key, ~0ull);
    return i < world_.gpus.size() ? &world_.gpus[i] : nullptr;
  };
  auto on = [&](const char* key, bool fallback) {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : (it->second == "on" || it->second == "yes" || it->second == "1");
  };
  try {
    if (verb == "driver") {
      world_.driver = kv["version"];
    } else if (verb == "init_error") {
      world_.init_error = static_cast<int>(num("code", 999));
    } else if (verb == "gpus" || verb == "gpu") {
      unsigned first = verb == "gpu" ? static_cast<unsigned>(num("index", ~0u)) : world_.gpus.size();
      unsigned count = verb == "gpu" ? 1 : static_cast<unsigned>(num("count", 1));
      if (first > world_.gpus.size()) return fail("GPU index past the GPUs defined so far");
      for (unsigned i = first; i < first + count; ++i) {
        if (i == world_.gpus.size()) {
          Gpu g;
          g.bus_number = i < 8 ? kBuses[i] : 0x10 + i;
          g.bus = BusId(g.bus_number);
          g.minor = i;
          g.uuid = "GPU-" + Hex(0x5eed0000u + i, 8) + "-0000-4000-8000-" + Hex(i, 12);
          g.power_mw = 70000;
          g.temp_c = 35;
          world_.gpus.push_back(g);
        }
        Gpu& g = world_.gpus[i];
        if (kv.count("name")) {
          g.name = kv["name"];
          g.model = FindModel(g.name);
          if (g.model != nullptr) g.memory_bytes = g.model->memory_mib << 20;
        }
        if (g.name.empty()) return fail("a GPU needs name=");
        if (kv.count("uuid")) g.uuid = kv["uuid"];
        if (kv.count("bus")) g.bus = kv["bus"];
        g.minor = static_cast<unsigned>(num("minor", g.minor));
        g.memory_bytes = num("memory_mib", g.memory_bytes >> 20) << 20;
        g.used_bytes = num("used_mib", g.used_bytes >> 20) << 20;
        g.mig_current = on("mig", g.mig_current);
        g.mig_pending = on("mig_pending", g.mig_current);
        if (g.mig_current && (g.model == nullptr || g.model->profiles == nullptr)) return fail("this GPU has no MIG");
        g.util = num("util", g.util);
        g.mem_util = num("mem_util", g.mem_util);
        g.power_mw = num("power_mw", g.power_mw);
        g.temp_c = num("temp_c", g.temp_c);
        g.ecc = on("ecc", g.ecc);
        g.ecc_corrected = num("ecc_corrected", g.ecc_corrected);
        g.ecc_uncorrected = num("ecc_uncorrected", g.ecc_uncorrected);
        g.retired_sbe = num("retired_sbe", g.retired_sbe);
        g.retired_dbe = num("retired_dbe", g.retired_dbe);
        g.remapped_corrected = num("remapped_corrected", g.remapped_corrected);
        g.remapped_uncorrected = num("remapped_uncorrected", g.remapped_uncorrected);
        g.remap_pending = on("remap_pending", g.remap_pending);
        g.lost = on("lost", g.lost);
        g.reset_blocked = on("reset_blocked", g.reset_blocked);
      }
    } else if (verb == "nvswitch") {
      unsigned switches = static_cast<unsigned>(num("count", 4));
      for (Gpu& g : world_.gpus) {
        unsigned links = g.model != nullptr ? g.model->nvlinks : 0;
        for (unsigned l = 0; l < links; ++l) g.links.push_back({BusId(0x05 + l % switches), kNvSwitchDevice});
      }
    } else if (verb == "nvlink") {
      Gpu *a = gpu("a"), *b = gpu("b");
      if (a == nullptr || b == nullptr) return fail("nvlink needs a= and b= naming GPUs");
      for (unsigned k = 0; k < num("links", 1); ++k) {
        a->links.push_back({b->bus, b->model != nullptr ? b->model->pci_device : 0});
        b->links.push_back({a->bus, a->model != nullptr ? a->model->pci_device : 0});
      }
    } else if (verb == "gi") {
      Gpu* g = gpu("gpu");
      if (g == nullptr) return fail("gi needs gpu= naming a GPU");
      const GiProfile* p = FindProfileById(*g, static_cast<unsigned>(num("profile", ~0u)));
      if (p == nullptr) return fail("no such GPU instance profile ID on this GPU");
      bool was = g->mig_current;
      g->mig_current = true;
      unsigned id = 0;
      Refusal r = CreateGi(*g, p->id, static_cast<unsigned>(num("start", ~0u)), p->memory, &id);
      g->mig_current = was;
      if (r != Refusal::kNone) return fail("this GPU instance does not fit (MIG rules, NVML-MIG.md §4)");
      for (Gi& gi : g->gis) {
        if (gi.id != id) continue;
        gi.id = static_cast<unsigned>(num("id", id));
        unsigned ci = 0;
        if (kv["ci"] != "none") CreateCi(*g, gi, p->compute == 7 ? 4 : p->compute - 1, &ci);
      }
      std::sort(g->gis.begin(), g->gis.end(), [](const Gi& a, const Gi& b) { return a.id < b.id; });
    } else if (verb == "ci") {
      Gpu* g = gpu("gpu");
      Gi* gi = nullptr;
      for (size_t k = 0; g != nullptr && k < g->gis.size(); ++k) {
        if (g->gis[k].id == num("gi", ~0u)) gi = &g->gis[k];
      }
      if (gi == nullptr) return fail("ci needs gpu= and gi= naming a GPU instance");
      unsigned id = 0;
      if (CreateCi(*g, *gi, static_cast<unsigned>(num("profile", ~0u)), &id) != Refusal::kNone) {
        return fail("this compute instance does not fit its GPU instance");
      }
      for (Ci& c : gi->cis) {
        if (c.id == id) c.id = static_cast<unsigned>(num("id", id));
      }
      std::sort(gi->cis.begin(), gi->cis.end(), [](const Ci& a, const Ci& b) { return a.id < b.id; });
    } else if (verb == "process") {
      Gpu* g = gpu("gpu");
      if (g == nullptr) return fail("process needs gpu=");
      g->processes.push_back({static_cast<unsigned>(num("pid", 0)), num("used_mib", 0) << 20,
                              static_cast<unsigned>(num("gi", 0xFFFFFFFF)), static_cast<unsigned>(num("ci", 0xFFFFFFFF))});
    } else if (verb == "xid" || verb == "dbe") {
      if (gpu("gpu") == nullptr) return fail(verb + " needs gpu=");
      world_.events.push_back({static_cast<unsigned>(num("gpu", 0)), verb == "xid" ? 0x8ull : 0x2ull,
                               verb == "xid" ? num("xid", 999) : 0, static_cast<unsigned>(num("gi", 0xFFFFFFFF)),
                               static_cast<unsigned>(num("ci", 0xFFFFFFFF))});
      world_.delivered.push_back(false);
    } else if (verb == "proc_util") {
      if (gpu("gpu") == nullptr) return fail("proc_util needs gpu= naming a GPU");
      if (!kv.count("match") && !kv.count("pid")) return fail("proc_util needs match= or pid=");
      world_.proc_utils.push_back({static_cast<unsigned>(num("gpu", 0)), kv["match"], static_cast<unsigned>(num("pid", 0)),
                                   static_cast<unsigned>(std::min<unsigned long long>(num("sm", 0), 100)),
                                   static_cast<unsigned>(std::min<unsigned long long>(num("mem", 0), 100))});
    } else if (verb == "proc_mem") {
      if (gpu("gpu") == nullptr) return fail("proc_mem needs gpu= naming a GPU");
      if (kv["match"].empty()) return fail("proc_mem needs match=");
      world_.proc_mems.push_back({static_cast<unsigned>(num("gpu", 0)), kv["match"], num("used_mib", 0) << 20});
    } else if (verb == "delivered") {
      unsigned long long e = num("event", ~0ull);
      if (e < world_.delivered.size()) world_.delivered[e] = true;
    } else {
      return fail("unknown statement '" + verb + "'");
    }
  } catch (const std::exception&) {
    return fail("expected a number");
  }
  return true;
}

bool Fake::Load(const std::string& config_path, std::string* error) {
  config_path_ = config_path;
  world_ = World{};
  auto read = [&](const std::string& path, bool must_exist) {
    std::ifstream in(path);
    if (!in) {
      if (must_exist) *error = "cannot read " + path;
      return !must_exist;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      line = line.substr(0, line.find('#'));
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (!Apply(path, n, line, error)) return false;
    }
    return true;
  };
  if (!read(config_path, true)) return false;
  std::ifstream state(config_path + ".state");
  if (!state) return true;
  // The state file replaces the config's MIG modes and instances.
  for (Gpu& g : world_.gpus) g.gis.clear();
  return read(config_path + ".state", false);
}

bool Fake::LoadLive(std::string* error) {
  const std::string path = config_path_ + ".live";
  std::ifstream in(path);
  if (!in) return true;
  world_.proc_utils.clear();
  world_.proc_mems.clear();
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    std::string verb = line.substr(start, line.find_first_of(" \t", start) - start);
    if (verb != "gpu" && verb != "proc_util" && verb != "proc_mem") {
      *error = path + ":" + std::to_string(n) + ": '" + verb + "' is not a live statement (expected gpu, proc_util or proc_mem)";
      return false;
    }
    if (!Apply(path, n, line, error)) return false;
  }
  return true;
}

void Fake::SaveState() const {
  std::ostringstream out;
  out << "# fake NVML state: MIG modes and instances, events taken (rewritten on every change)\n";
  for (size_t i = 0; i < world_.gpus.size(); ++i) {
    const Gpu& g = world_.gpus[i];
    out << "gpu index=" << i << " mig=" << (g.mig_current ? "on" : "off")
        << " mig_pending=" << (g.mig_pending ? "on" : "off") << "\n";
    for (const Gi& gi : g.gis) {
      out << "gi gpu=" << i << " profile=" << gi.profile << " start=" << gi.start << " id=" << gi.id << " ci=none\n";
      for (const Ci& c : gi.cis) out << "ci gpu=" << i << " gi=" << gi.id << " profile=" << c.profile << " id=" << c.id << "\n";
    }
  }
  for (size_t e = 0; e < world_.delivered.size(); ++e) {
    if (world_.delivered[e]) out << "delivered event=" << e << "\n";
  }
  // Write then rename, so a reader never sees half a file.
  std::string tmp = config_path_ + ".state.tmp";
  std::ofstream(tmp) << out.str();
  std::rename(tmp.c_str(), (config_path_ + ".state").c_str());
}

void Fake::Log(const std::string& line) const {
  std::ofstream(config_path_ + ".log", std::ios::app) << line << "\n";
}

}  // namespace fake_nvml
