// A usage interval: one job holding resources on one node over [start_ms, end_ms) with nothing
// about it changing — the unit of metering (DESIGN.md, "Usage interval").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "state/job.h"

namespace allot {

// How the interval is billed: guaranteed (under the tenant's floor), burstable (borrowed idle
// capacity) or best effort (time-slice replicas: always burstable, never guaranteed).
// kReserved: a run inside a reservation, whose window is billed as its own line (a floor), so
// the run itself is priced at 0.
enum class UsageClass : uint8_t { kGuaranteed, kBurstable, kBestEffort, kReserved };
inline constexpr int kUsageClasses = 4;
const char* UsageClassName(UsageClass c);  // "guaranteed", "burstable", "best-effort", "reserved"

struct UsageInterval {
  JobId job;
  TenantId tenant;  // the job's leaf; a moved subtree keeps its ids, so usage moves with it
  NodeId node;
  ResourceId gpu_resource = kCpu;  // the GPU model (kCpu when the job holds no GPU)
  UsageClass usage_class = UsageClass::kGuaranteed;
  Topology topology = Topology::kNone;
  // Held on this node, summed over the job's tasks there. GPU in GPU units (kGpuUnit per GPU:
  // whole GPUs, MIG compute slices / 7, MPS percent, time-slice 1/N are all exact), so pricing
  // by share needs no rounding; GpuMilli(gpu) is the milli-GPU people read.
  int64_t gpu = 0;
  int64_t cpu = 0;     // millicores
  int64_t memory = 0;  // MiB
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  bool operator==(const UsageInterval&) const = default;
};

// The first period boundary strictly after t_ms for a tenant's org (INT64_MAX: none).
using NextBoundary = std::function<int64_t(TenantId, int64_t t_ms)>;

// Appends [start, end) of `iv` to `out`, cut at every boundary inside it.
void AppendSplit(const UsageInterval& iv, const NextBoundary& next, std::vector<UsageInterval>& out);

}  // namespace allot
