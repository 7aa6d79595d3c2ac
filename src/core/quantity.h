// Parsing and printing of quantities people write: "0.46" GPUs, "96" CPUs, "512Gi", "2h".
// Decimals are parsed from the string (never through a double) and rounded half-up to the
// fixed-point unit, never truncated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

// "2", "0.46", "1.5" → milli-units (2000, 460, 1500). Negative or non-numeric is an error.
Result<int64_t> ParseMilli(std::string_view text);
// "2", "0.46" GPUs → GPU units (kGpuUnit per GPU), rounded half-up to a unit.
Result<int64_t> ParseGpus(std::string_view text);
// "512Mi", "1024Gi", "1.5Ti" → MiB. A unit is required.
Result<int64_t> ParseMemoryMiB(std::string_view text);
// "90s", "15m", "2h", "1d", "1.5h", "0s" → milliseconds. A unit is required.
Result<int64_t> ParseDurationMs(std::string_view text);

std::string FormatMilli(int64_t milli);        // 2000 → "2", 460 → "0.46"
// GPU units → milli-GPU, rounded half away from zero (a 1g MIG instance, 3000 units, is 143).
int64_t GpuMilli(int64_t units);
std::string FormatGpus(int64_t units);       // 42000 → "2", 3000 → "0.143" (at most 3 decimals)
std::string FormatMemoryMiB(int64_t mib);      // 1048576 → "1Ti", 2048 → "2Gi", 1536 → "1536Mi"
std::string FormatSeconds(int64_t ms);         // 1500 → "1.5", 7200000 → "7200"
std::string FormatDuration(int64_t ms);        // in the largest unit that is exact: "2d", "90m", "1.5s"

}  // namespace allot
