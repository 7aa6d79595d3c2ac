#include "fleet/gpu_catalog.h"

namespace allot {
namespace {

constexpr int64_t kGi = 1024;

constexpr GpuModelInfo kCatalog[] = {
    {"B200", 180 * kGi, true, true},
    {"H200-141GB", 141 * kGi, true, true},
    {"H100-94GB", 94 * kGi, true, true},
    {"H100-80GB", 80 * kGi, true, true},
    {"A100-80GB", 80 * kGi, true, true},
    {"A100-40GB", 40 * kGi, true, true},
    {"A30-24GB", 24 * kGi, false, true},
    {"L40S-48GB", 48 * kGi, false, false},
    {"A10-24GB", 24 * kGi, false, false},
    {"T4-16GB", 16 * kGi, false, false},
    {"V100-32GB", 32 * kGi, true, false},
    {"P100-16GB", 16 * kGi, false, false},
    // Models named by code in Alibaba's openb trace.
    {"G2", 16 * kGi, false, false},
    {"G3", 32 * kGi, false, false},
};

}  // namespace

std::span<const GpuModelInfo> GpuCatalog() { return kCatalog; }

const GpuModelInfo* FindGpuModel(std::string_view name) {
  for (const GpuModelInfo& m : kCatalog) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace allot
