// GpuBackend on NVIDIA's NVML, loaded at run time with dlopen so allot builds and runs where no
// NVIDIA software is installed (there, Open refuses with the reason and the agent registers no
// GPUs). Tests point `library` at the in-tree fake (tests/fakes/fake_nvml.cc).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "agent/gpu_backend.h"
#include "core/status.h"

namespace allot {

struct NvmlOptions {
  std::string library = "libnvidia-ml.so.1";  // the agent's --nvml
  std::string sysfs_root = "/sys";             // where NUMA nodes are read; tests use a scratch dir
};

// Loads the library, resolves every symbol the backend calls and runs nvmlInit_v2. Fails
// (unavailable) naming the library and what is missing: the file, a symbol, or the driver.
Result<std::unique_ptr<GpuBackend>> OpenNvml(const NvmlOptions& options = {});

// The catalog model (fleet/gpu_catalog.h) for NVML's device name: "NVIDIA H100 80GB HBM3" →
// "H100-80GB". Not found names the GPU's name and lists the names allot knows.
Result<std::string_view> CatalogModelForNvmlName(std::string_view nvml_name);

}  // namespace allot
