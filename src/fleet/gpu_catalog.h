// The GPU model catalog: data, not ifs. Sharing levels (MIG profiles, MPS) extend these rows.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace allot {

struct GpuModelInfo {
  std::string_view name;    // "H100-80GB": also the quota resource "gpu/H100-80GB"
  int64_t memory_mib;
  bool nvlink;              // GPUs of one node share an NVLink fabric
  bool mig_capable;
};

// Every model allot knows, in a fixed order.
std::span<const GpuModelInfo> GpuCatalog();
// nullptr when the model is unknown.
const GpuModelInfo* FindGpuModel(std::string_view name);

}  // namespace allot
