// The range of every quantity a job or a tenant writes (docs/scenario.md, "Ranges"), checked
// where it is read so that nothing later adds, multiplies or schedules a value that wraps:
// 3650d in ms, times 100000 tasks, still fits 64 bits many times over.
#pragma once

#include <cstdint>

#include "core/resources.h"

namespace allot {

inline constexpr int64_t kDayMs = 86400000;
inline constexpr int64_t kMaxDurationMs = 3650 * kDayMs;  // duration, time_limit, submit, min_runtime, checkpoint.interval
inline constexpr int64_t kMaxGraceMs = kDayMs;            // grace, checkpoint.grace
inline constexpr int64_t kMinGpuShare = kGpuUnit / 1000;  // 0.001 GPU: the smallest share the scheduler places
inline constexpr int64_t kMaxTaskCpuMilli = 10000 * 1000;            // 10000 CPUs per task
inline constexpr int64_t kMaxTaskMemoryMiB = int64_t{64} * 1024 * 1024;  // 64Ti per task
inline constexpr int64_t kMaxMpsMemoryMiB = 1024 * 1024;             // 1Ti of GPU memory
inline constexpr int64_t kMaxQuotaGpus = 1000000;                    // per tenant and GPU model
inline constexpr int64_t kMaxQuotaCpuMilli = int64_t{100000000} * 1000;  // 10^8 CPUs
inline constexpr int64_t kMaxQuotaMemoryMiB = int64_t{1} << 40;          // 1048576Ti
inline constexpr int64_t kMaxWeightMilli = int64_t{1000000} * 1000;     // 10^6
inline constexpr int32_t kMaxPriority = 1000000;                      // priority from -10^6 to 10^6

}  // namespace allot
