// Telemetry through NVML: one sample per GPU, plus the XID and ECC events queued since the last
// sample (../shared/reference/NVML-MIG.md §2, §5).
#include <algorithm>

#include "agent/nvml_internal.h"

namespace allot::nvml_internal {
namespace {

constexpr unsigned kNoId = 0xFFFFFFFF;
// Slack for processes that start between the size query and the read (§2: "add slack").
constexpr unsigned kProcessSlack = 8;
// A bound on events taken per sample, so an event storm cannot stall the agent's loop.
constexpr int kMaxEventsPerSample = 4096;

// Readings NVML declines on this GPU (no MIG utilization, ECC off, page retirement on Ampere+).
bool Absent(nvmlReturn_t r) {
  return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_NO_PERMISSION || r == NVML_ERROR_NO_DATA;
}

}  // namespace

Result<std::vector<GpuProcess>> NvmlBackend::Processes(const Gpu& gpu) const {
  unsigned count = 0;
  nvmlReturn_t r = nvml_.processes(gpu.handle, &count, nullptr);
  if (r == NVML_SUCCESS) return std::vector<GpuProcess>{};
  std::vector<nvmlProcessInfo_t> records;
  // The list can grow between calls; retry a few times, then report.
  for (int attempt = 0; attempt < 3 && r == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    count += kProcessSlack;
    records.assign(count, nvmlProcessInfo_t{});
    r = nvml_.processes(gpu.handle, &count, records.data());
  }
  if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlDeviceGetComputeRunningProcesses_v3", gpu));
  records.resize(std::min<size_t>(count, records.size()));
  std::vector<GpuProcess> out;
  for (const nvmlProcessInfo_t& p : records) {
    GpuProcess proc;
    proc.pid = p.pid;
    if (p.usedGpuMemory != static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE)) proc.used_bytes = p.usedGpuMemory;
    if (p.gpuInstanceId != kNoId) proc.gpu_instance_id = p.gpuInstanceId;
    if (p.computeInstanceId != kNoId) proc.compute_instance_id = p.computeInstanceId;
    out.push_back(proc);
  }
  return out;
}

Result<std::vector<ProcessUtilization>> NvmlBackend::ProcessUtilizations(Gpu& gpu) const {
  if (nvml_.process_utilization == nullptr) return std::vector<ProcessUtilization>{};
  unsigned count = 0;
  nvmlReturn_t r = nvml_.process_utilization(gpu.handle, nullptr, &count, gpu.utilization_seen_us);
  // NOT_FOUND: no process ran since the last sample; SUCCESS with no buffer: none buffered.
  if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && count == 0) || Absent(r)) {
    return std::vector<ProcessUtilization>{};
  }
  std::vector<nvmlProcessUtilizationSample_t> records;
  for (int attempt = 0; attempt < 3 && (r == NVML_ERROR_INSUFFICIENT_SIZE || r == NVML_SUCCESS); ++attempt) {
    count += kProcessSlack;
    records.assign(count, nvmlProcessUtilizationSample_t{});
    r = nvml_.process_utilization(gpu.handle, records.data(), &count, gpu.utilization_seen_us);
    if (r != NVML_ERROR_INSUFFICIENT_SIZE) break;
  }
  if (r == NVML_ERROR_NOT_FOUND) return std::vector<ProcessUtilization>{};
  if (r != NVML_SUCCESS) return Err(Fail(r, "nvmlDeviceGetProcessUtilization", gpu));
  records.resize(std::min<size_t>(count, records.size()));
  // NVML gives one record per sample; a process busy in any of them counts at its busiest.
  std::vector<ProcessUtilization> out;
  for (const nvmlProcessUtilizationSample_t& rec : records) {
    gpu.utilization_seen_us = std::max(gpu.utilization_seen_us, rec.timeStamp);
    auto it = std::find_if(out.begin(), out.end(), [&](const ProcessUtilization& p) { return p.pid == rec.pid; });
    if (it == out.end()) it = out.insert(std::upper_bound(out.begin(), out.end(), rec.pid,
                                                          [](unsigned pid, const ProcessUtilization& p) { return pid < p.pid; }),
                                         ProcessUtilization{rec.pid, 0, 0});
    it->sm_percent = std::max(it->sm_percent, std::min(rec.smUtil, 100u));
    it->memory_percent = std::max(it->memory_percent, std::min(rec.memUtil, 100u));
  }
  return out;
}

Status NvmlBackend::SampleGpu(const Gpu& gpu, GpuSample& s) const {
  // Each reading: set it, leave it absent, or note why it failed. A lost GPU stops the sample.
  auto read = [&](nvmlReturn_t r, const char* call) {
    if (r == NVML_SUCCESS) return true;
    if (r == NVML_ERROR_GPU_IS_LOST) return false;
    if (!Absent(r)) s.notes.push_back(std::string(call) + " failed: " + Describe(r));
    return false;
  };
  auto lost = [&](nvmlReturn_t r, const char* call) { return r == NVML_ERROR_GPU_IS_LOST ? Fail(r, call, gpu) : Status::Ok(); };

  nvmlMemory_t memory{};
  nvmlReturn_t r = nvml_.memory(gpu.handle, &memory);
  if (r == NVML_ERROR_GPU_IS_LOST) return lost(r, "nvmlDeviceGetMemoryInfo");
  if (read(r, "nvmlDeviceGetMemoryInfo")) s.memory_used_bytes = memory.used;
  nvmlUtilization_t util{};
  if (read(r = nvml_.utilization(gpu.handle, &util), "nvmlDeviceGetUtilizationRates")) {
    s.utilization_percent = util.gpu;
    s.memory_utilization_percent = util.memory;
  }
  unsigned value = 0;
  if (read(r = nvml_.power(gpu.handle, &value), "nvmlDeviceGetPowerUsage")) s.power_mw = value;
  if (read(r = nvml_.temperature(gpu.handle, NVML_TEMPERATURE_GPU, &value), "nvmlDeviceGetTemperature")) {
    s.temperature_c = value;
  }
  unsigned long long errors = 0;
  if (read(r = nvml_.ecc(gpu.handle, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &errors),
           "nvmlDeviceGetTotalEccErrors")) {
    s.ecc_corrected = errors;
  }
  if (read(r = nvml_.ecc(gpu.handle, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &errors),
           "nvmlDeviceGetTotalEccErrors")) {
    s.ecc_uncorrected = errors;
  }
  // Retired pages, both causes; count = 0 is the size query, answered with SUCCESS or
  // INSUFFICIENT_SIZE depending on the driver, both with the count set.
  unsigned pages = 0;
  bool have_pages = true;
  for (nvmlPageRetirementCause_t cause :
       {NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR}) {
    unsigned n = 0;
    r = nvml_.retired_pages(gpu.handle, cause, &n, nullptr);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) r = NVML_SUCCESS;
    if (!read(r, "nvmlDeviceGetRetiredPages")) have_pages = false;
    pages += n;
  }
  if (have_pages) s.retired_pages = pages;
  unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
  if (read(r = nvml_.remapped_rows(gpu.handle, &corrected, &uncorrected, &pending, &failed),
           "nvmlDeviceGetRemappedRows")) {
    s.remapped_rows = RemappedRows{corrected, uncorrected, pending != 0, failed != 0};
  }
  if (r == NVML_ERROR_GPU_IS_LOST) return lost(r, "nvmlDeviceGetRemappedRows");
  auto procs = Processes(gpu);
  if (procs) {
    s.processes = std::move(*procs);
  } else {
    s.notes.push_back(procs.error().message());
  }
  return Status::Ok();
}

void NvmlBackend::DrainEvents(std::vector<GpuSample>& samples) {
  if (events_ == nullptr) {
    for (GpuSample& s : samples) s.notes.push_back("no NVML event set: XID and ECC events are not watched");
    return;
  }
  for (int n = 0; n < kMaxEventsPerSample; ++n) {
    nvmlEventData_t data{};
    // Timeout 0: take what is queued, never wait; TIMEOUT means the queue is empty.
    nvmlReturn_t r = nvml_.event_wait(events_, &data, 0);
    if (r == NVML_ERROR_TIMEOUT) return;
    if (r != NVML_SUCCESS) {
      for (GpuSample& s : samples) s.notes.push_back("nvmlEventSetWait_v2 failed: " + Describe(r));
      return;
    }
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (gpus_[i].handle != data.device) continue;
      GpuSample& s = samples[i];
      if (data.eventType & nvmlEventTypeXidCriticalError) {
        XidEvent x;
        x.xid = data.eventData;
        if (data.gpuInstanceId != kNoId) x.gpu_instance_id = data.gpuInstanceId;
        if (data.computeInstanceId != kNoId) x.compute_instance_id = data.computeInstanceId;
        s.xids.push_back(x);
      }
      if (data.eventType & nvmlEventTypeDoubleBitEccError) ++s.double_bit_ecc_events;
    }
  }
}

Result<std::vector<GpuSample>> NvmlBackend::Sample() {
  std::vector<GpuSample> samples(gpus_.size());
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const Gpu& gpu = gpus_[i];
    GpuSample& s = samples[i];
    s.index = gpu.index;
    s.uuid = gpu.uuid;
    if (!gpu.problem.empty()) {
      s.status = Unavailable(Name(gpu) + " cannot be used: " + gpu.problem);
      continue;
    }
    if (Status st = SampleGpu(gpu, s); !st.ok()) {
      GpuSample failed;
      failed.index = s.index;
      failed.uuid = s.uuid;
      failed.status = st;
      s = std::move(failed);
      continue;
    }
    if (auto util = ProcessUtilizations(gpus_[i])) {
      s.process_utilization = std::move(*util);
    } else {
      s.notes.push_back(util.error().message());
    }
  }
  DrainEvents(samples);
  return samples;
}

}  // namespace allot::nvml_internal
