// MIG through NVML: listing, creating and destroying GPU and compute instances, and the MIG mode
// (../shared/reference/NVML-MIG.md §1, §4, §5). Profile IDs and placements are read from NVML at
// run time, never assumed; the catalog (fleet/mig.h) only names them.
#include <algorithm>
#include <map>

#include "agent/nvml_internal.h"

namespace allot::nvml_internal {
namespace {

constexpr unsigned kNoId = 0xFFFFFFFF;

std::string Slices(int start, int size) {
  return size == 1 ? std::to_string(start) : std::to_string(start) + "–" + std::to_string(start + size - 1);
}

std::string Starts(const std::vector<nvmlGpuInstancePlacement_t>& placements) {
  std::string out;
  for (const nvmlGpuInstancePlacement_t& p : placements) out += (out.empty() ? "" : ", ") + std::to_string(p.start);
  return out.empty() ? "none" : out;
}

std::string Label(const MigGpuInstanceInfo& gi) {
  return "GI " + std::to_string(gi.id) + " (" + (gi.profile.empty() ? "profile " + std::to_string(gi.nvml_profile_id) : gi.profile) +
         " at memory slices " + Slices(gi.start, gi.size) + ")";
}

}  // namespace

Result<std::vector<NvmlGiProfile>> NvmlBackend::GiProfiles(const Gpu& gpu) const {
  std::vector<NvmlGiProfile> out;
  // Walk indices until INVALID_ARGUMENT (the count grew from 6 to 18 across headers); a
  // NOT_SUPPORTED index is a kind this GPU lacks. The bound only guards against a broken library.
  for (unsigned index = 0; index < 64; ++index) {
    NvmlGiProfile p{index, {}};
    nvmlReturn_t r = nvml_.gi_profile_info(gpu.handle, index, &p.info);
    if (r == NVML_ERROR_INVALID_ARGUMENT) break;
    if (r == NVML_ERROR_NOT_SUPPORTED) continue;
    if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlDeviceGetGpuInstanceProfileInfo", gpu));
    out.push_back(p);
  }
  return out;
}

Result<std::vector<RawGpuInstance>> NvmlBackend::ListMig(const Gpu& gpu, const std::string& model) const {
  const MigGeometry* geometry = FindMigGeometry(model);
  auto profiles = GiProfiles(gpu);
  if (!profiles) return Err(profiles.error());
  // MIG device UUIDs, by (GPU instance, compute instance): the CI's info names only its parent GPU.
  std::map<std::pair<unsigned, unsigned>, std::string> uuids;
  unsigned max_devices = 0;
  if (nvmlReturn_t r = nvml_.max_mig_devices(gpu.handle, &max_devices); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetMaxMigDeviceCount", gpu));
  }
  for (unsigned i = 0; i < max_devices; ++i) {
    nvmlDevice_t mig = nullptr;
    nvmlReturn_t r = nvml_.mig_device_by_index(gpu.handle, i, &mig);
    if (r == NVML_ERROR_NOT_FOUND) continue;  // an empty slot
    if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlDeviceGetMigDeviceHandleByIndex", gpu));
    unsigned gi = kNoId, ci = kNoId;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if ((r = nvml_.mig_gpu_instance_id(mig, &gi)) != NVML_SUCCESS ||
        (r = nvml_.mig_compute_instance_id(mig, &ci)) != NVML_SUCCESS ||
        (r = nvml_.uuid(mig, uuid, sizeof uuid)) != NVML_SUCCESS) {
      return Err(Fail(r, "reading MIG device " + std::to_string(i), gpu));
    }
    uuids[{gi, ci}] = uuid;
  }
  std::vector<RawGpuInstance> out;
  for (const NvmlGiProfile& p : *profiles) {
    if (p.info.instanceCount == 0) continue;
    std::vector<nvmlGpuInstance_t> handles(p.info.instanceCount);
    unsigned count = p.info.instanceCount;
    if (nvmlReturn_t r = nvml_.gi_list(gpu.handle, p.info.id, handles.data(), &count); r != NVML_SUCCESS) {
      return Err(Fail(r, "nvmlDeviceGetGpuInstances(profile " + std::to_string(p.info.id) + ")", gpu));
    }
    for (unsigned k = 0; k < count && k < handles.size(); ++k) {
      nvmlGpuInstanceInfo_t gi{};
      if (nvmlReturn_t r = nvml_.gi_info(handles[k], &gi); r != NVML_SUCCESS) {
        return Err(Fail(r, "nvmlGpuInstanceGetInfo", gpu));
      }
      RawGpuInstance raw;
      raw.handle = handles[k];
      raw.info.id = gi.id;
      raw.info.nvml_profile_id = gi.profileId;
      raw.info.start = static_cast<int>(gi.placement.start);
      raw.info.size = static_cast<int>(gi.placement.size);
      raw.info.compute_slices = static_cast<int>(p.info.sliceCount);
      if (const MigProfile* c = CatalogProfile(geometry, p.index, raw.info.compute_slices, raw.info.size)) {
        raw.info.profile = std::string(c->name);
      }
      for (unsigned ci_index = 0; ci_index < 64; ++ci_index) {
        nvmlComputeInstanceProfileInfo_t cp{};
        nvmlReturn_t r = nvml_.ci_profile_info(handles[k], ci_index, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cp);
        if (r == NVML_ERROR_INVALID_ARGUMENT) break;
        if (r == NVML_ERROR_NOT_SUPPORTED || cp.instanceCount == 0) continue;
        if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlGpuInstanceGetComputeInstanceProfileInfo", gpu));
        std::vector<nvmlComputeInstance_t> cis(cp.instanceCount);
        unsigned n = cp.instanceCount;
        if ((r = nvml_.ci_list(handles[k], cp.id, cis.data(), &n)) != NVML_SUCCESS) {
          return Err(Fail(r, "nvmlGpuInstanceGetComputeInstances", gpu));
        }
        for (unsigned j = 0; j < n && j < cis.size(); ++j) {
          nvmlComputeInstanceInfo_t ci{};
          if ((r = nvml_.ci_info(cis[j], &ci)) != NVML_SUCCESS) return Err(Fail(r, "nvmlComputeInstanceGetInfo_v2", gpu));
          auto uuid = uuids.find({gi.id, ci.id});
          raw.info.compute.push_back({ci.id, ci.profileId, static_cast<int>(ci.placement.start),
                                      static_cast<int>(ci.placement.size), uuid == uuids.end() ? "" : uuid->second});
          raw.compute.push_back(cis[j]);
        }
      }
      // Order the compute instances by (start, id), keeping the handles beside them.
      std::vector<size_t> order(raw.compute.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const MigComputeInstanceInfo &x = raw.info.compute[a], &y = raw.info.compute[b];
        return x.start != y.start ? x.start < y.start : x.id < y.id;
      });
      RawGpuInstance sorted = raw;
      for (size_t i = 0; i < order.size(); ++i) {
        sorted.info.compute[i] = raw.info.compute[order[i]];
        sorted.compute[i] = raw.compute[order[i]];
      }
      out.push_back(std::move(sorted));
    }
  }
  // 1. first memory slice (unique: instances never overlap); 2. id, for a broken driver's sake.
  std::sort(out.begin(), out.end(), [](const RawGpuInstance& a, const RawGpuInstance& b) {
    return a.info.start != b.info.start ? a.info.start < b.info.start : a.info.id < b.info.id;
  });
  return out;
}

Result<MigGpuInstanceInfo> NvmlBackend::CreateMigInstance(std::string_view gpu_uuid, std::string_view profile,
                                                          int start) {
  auto found = FindGpu(gpu_uuid);
  if (!found) return Err(found.error());
  const Gpu& gpu = **found;
  if (!gpu.problem.empty()) return Err(Unavailable(Name(gpu) + " cannot be used: " + gpu.problem));
  auto name = ModelOf(gpu);
  if (!name) return Err(name.error());
  auto model = CatalogModelForNvmlName(*name);
  if (!model) return Err(model.error());
  const MigGeometry* g = FindMigGeometry(*model);
  if (g == nullptr) return Err(FailedPrecondition(Name(gpu) + " is a " + std::string(*model) + ", which has no MIG"));
  int pi = g->Find(profile);
  if (pi < 0) {
    std::string known;
    for (const MigProfile& q : g->profiles) known += (known.empty() ? "" : ", ") + std::string(q.name);
    return Err(InvalidArgument("MIG profile '" + std::string(profile) + "' does not exist on " + std::string(*model) +
                               "; expected one of " + known));
  }
  const MigProfile& want = g->profiles[pi];
  unsigned current = 0, pending = 0;
  if (nvmlReturn_t r = nvml_.mig_mode(gpu.handle, &current, &pending); r != NVML_SUCCESS) {
    return Err(Fail(r, "nvmlDeviceGetMigMode", gpu));
  }
  if (current != NVML_DEVICE_MIG_ENABLE) {
    return Err(FailedPrecondition("MIG is off on " + Name(gpu) + "; enable it before creating " + std::string(profile)));
  }
  // 1. The NVML profile that is this catalog profile, and where NVML lets it start.
  auto profiles = GiProfiles(gpu);
  if (!profiles) return Err(profiles.error());
  const NvmlGiProfile* nvml_profile = nullptr;
  std::vector<nvmlGpuInstancePlacement_t> placements;
  for (const NvmlGiProfile& p : *profiles) {
    unsigned n = 0;
    if (nvmlReturn_t r = nvml_.gi_placements(gpu.handle, p.info.id, nullptr, &n); r != NVML_SUCCESS) {
      return Err(Fail(r, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", gpu));
    }
    std::vector<nvmlGpuInstancePlacement_t> list(n);
    if (nvmlReturn_t r = nvml_.gi_placements(gpu.handle, p.info.id, list.data(), &n); r != NVML_SUCCESS) {
      return Err(Fail(r, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", gpu));
    }
    list.resize(std::min<size_t>(n, list.size()));
    int size = list.empty() ? 0 : static_cast<int>(list[0].size);
    if (CatalogProfile(g, p.index, static_cast<int>(p.info.sliceCount), size) == &want) {
      nvml_profile = &p;
      placements = std::move(list);
      break;
    }
  }
  if (nvml_profile == nullptr) {
    return Err(FailedPrecondition("NVML on " + Name(gpu) + " offers no profile for " + std::string(profile) + " (" +
                                  std::to_string(want.compute_slices) + " compute, " +
                                  std::to_string(want.memory_slices) + " memory slices)"));
  }
  auto allowed = std::find_if(placements.begin(), placements.end(),
                              [&](const nvmlGpuInstancePlacement_t& p) { return static_cast<int>(p.start) == start; });
  if (allowed == placements.end()) {
    return Err(InvalidArgument("MIG profile " + std::string(profile) + " cannot start at memory slice " +
                               std::to_string(start) + " on " + Name(gpu) + ": NVML allows starts " + Starts(placements)));
  }
  // 2. The GPU instance, at exactly that placement (driver-chosen placement depends on order, §4).
  nvmlGpuInstance_t gi = nullptr;
  if (nvmlReturn_t r = nvml_.gi_create(gpu.handle, nvml_profile->info.id, &*allowed, &gi); r != NVML_SUCCESS) {
    if (r != NVML_ERROR_INSUFFICIENT_RESOURCES) return Err(Fail(r, "nvmlDeviceCreateGpuInstanceWithPlacement", gpu));
    std::string why;
    if (auto existing = ListMig(gpu, std::string(*model))) {
      for (const RawGpuInstance& e : *existing) {
        if (e.info.start < start + static_cast<int>(allowed->size) && start < e.info.start + e.info.size) {
          why += (why.empty() ? "it overlaps " : ", ") + Label(e.info);
        }
      }
    }
    if (why.empty()) {
      why = "the GPU's compute slices or the profile's count (at most " + std::to_string(want.max_count) +
            ") are used up";
    }
    return Err(Conflict("MIG profile " + std::string(profile) + " at memory slices " +
                        Slices(start, static_cast<int>(allowed->size)) + " does not fit on " + Name(gpu) + ": " + why +
                        " (" + Describe(r) + ")"));
  }
  // 3. Its full-size compute instance (CUDA needs a GI and a CI, §5); undo the GI if that fails.
  Status ci_status = FailedPrecondition("NVML offers no " + std::to_string(nvml_profile->info.sliceCount) +
                                        "-slice compute instance profile in " + std::string(profile));
  for (unsigned ci_index = 0; ci_index < 64; ++ci_index) {
    nvmlComputeInstanceProfileInfo_t cp{};
    nvmlReturn_t r = nvml_.ci_profile_info(gi, ci_index, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cp);
    if (r == NVML_ERROR_INVALID_ARGUMENT) break;
    if (r != NVML_SUCCESS || cp.sliceCount != nvml_profile->info.sliceCount) continue;
    nvmlComputeInstance_t ci = nullptr;
    r = nvml_.ci_create(gi, cp.id, &ci);
    ci_status = r == NVML_SUCCESS ? Status::Ok() : Fail(r, "nvmlGpuInstanceCreateComputeInstance", gpu);
    break;
  }
  if (!ci_status.ok()) {
    nvml_.gi_destroy(gi);
    return Err(ci_status);
  }
  nvmlGpuInstanceInfo_t created{};
  if (nvmlReturn_t r = nvml_.gi_info(gi, &created); r != NVML_SUCCESS) return Err(Fail(r, "nvmlGpuInstanceGetInfo", gpu));
  auto listed = ListMig(gpu, std::string(*model));
  if (!listed) return Err(listed.error());
  for (RawGpuInstance& e : *listed) {
    if (e.info.id == created.id) return std::move(e.info);
  }
  return Err(Internal("GI " + std::to_string(created.id) + " was created on " + Name(gpu) + " but NVML does not list it"));
}

Status NvmlBackend::DestroyMigInstance(std::string_view gpu_uuid, std::string_view profile, int start) {
  auto found = FindGpu(gpu_uuid);
  if (!found) return found.error();
  const Gpu& gpu = **found;
  if (!gpu.problem.empty()) return Unavailable(Name(gpu) + " cannot be used: " + gpu.problem);
  auto name = ModelOf(gpu);
  if (!name) return name.error();
  auto model = CatalogModelForNvmlName(*name);
  auto listed = ListMig(gpu, model ? std::string(*model) : std::string());
  if (!listed) return listed.error();
  const RawGpuInstance* target = nullptr;
  std::string present;
  for (const RawGpuInstance& e : *listed) {
    present += (present.empty() ? "" : ", ") + Label(e.info);
    if (e.info.start == start) target = &e;
  }
  if (target == nullptr) {
    return NotFound("no MIG instance starts at memory slice " + std::to_string(start) + " on " + Name(gpu) +
                    "; present: " + (present.empty() ? "none" : present));
  }
  if (target->info.profile != profile) {
    return Conflict("the MIG instance at memory slice " + std::to_string(start) + " on " + Name(gpu) + " is " +
                    Label(target->info) + ", not " + std::string(profile));
  }
  // Compute instances first, then the GPU instance (§5); either is IN_USE while processes run.
  auto in_use = [&](const std::string& what) {
    std::string pids;
    if (auto procs = Processes(gpu)) {
      for (const GpuProcess& p : *procs) {
        if (p.gpu_instance_id == target->info.id) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
      }
    }
    return FailedPrecondition(Label(target->info) + " on " + Name(gpu) + " is in use: " + what +
                              (pids.empty() ? "" : " (processes " + pids + ")") + "; stop its processes first");
  };
  for (size_t i = 0; i < target->compute.size(); ++i) {
    const MigComputeInstanceInfo& ci = target->info.compute[i];
    nvmlReturn_t r = nvml_.ci_destroy(target->compute[i]);
    std::string what = "compute instance " + std::to_string(ci.id) + (ci.uuid.empty() ? "" : " (" + ci.uuid + ")");
    if (r == NVML_ERROR_IN_USE) return in_use(what + " still runs work");
    if (r != NVML_SUCCESS) return Fail(r, "nvmlComputeInstanceDestroy(" + what + ")", gpu);
  }
  nvmlReturn_t r = nvml_.gi_destroy(target->handle);
  if (r == NVML_ERROR_IN_USE) return in_use("NVML refuses to destroy it (" + Describe(r) + ")");
  if (r != NVML_SUCCESS) return Fail(r, "nvmlGpuInstanceDestroy(" + Label(target->info) + ")", gpu);
  return Status::Ok();
}

Status NvmlBackend::SetMigMode(std::string_view gpu_uuid, bool enabled) {
  auto found = FindGpu(gpu_uuid);
  if (!found) return found.error();
  const Gpu& gpu = **found;
  if (!gpu.problem.empty()) return Unavailable(Name(gpu) + " cannot be used: " + gpu.problem);
  const char* mode = enabled ? "enabled" : "disabled";
  nvmlReturn_t activation = NVML_SUCCESS;
  nvmlReturn_t r = nvml_.set_mig_mode(gpu.handle, enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &activation);
  if (r == NVML_ERROR_IN_USE) {
    return FailedPrecondition("MIG mode on " + Name(gpu) + " cannot be " + mode + ": " + Describe(r) +
                              "; stop every GPU client (jobs, dcgm, nvsm) and destroy its MIG instances, then retry");
  }
  if (r != NVML_SUCCESS) return Fail(r, std::string("nvmlDeviceSetMigMode(") + mode + ")", gpu);
  unsigned current = 0, pending = 0;
  if ((r = nvml_.mig_mode(gpu.handle, &current, &pending)) != NVML_SUCCESS) return Fail(r, "nvmlDeviceGetMigMode", gpu);
  if ((current == NVML_DEVICE_MIG_ENABLE) != enabled) {
    // Ampere resets the GPU to apply it; a busy GPU or a passthrough VM leaves it pending (§5).
    return FailedPrecondition("MIG mode on " + Name(gpu) + " is " + mode + " only after a GPU reset: " +
                              Describe(activation));
  }
  return Status::Ok();
}

}  // namespace allot::nvml_internal
