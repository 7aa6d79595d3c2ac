// NVML device names → catalog models. A table, not a parser: NVIDIA's names are not regular
// ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB"), and a GPU allot does
// not know must be refused rather than guessed (its MIG geometry and quota resource depend on it).
#include "agent/nvml.h"

#include "fleet/gpu_catalog.h"

namespace allot {
namespace {

struct NameRow {
  std::string_view nvml;
  std::string_view model;
};

// Names as nvmlDeviceGetName gives them on current drivers (R450-era drivers omit "NVIDIA ",
// which is stripped before the lookup).
constexpr NameRow kNames[] = {
    {"NVIDIA B200", "B200"},
    {"NVIDIA H200", "H200-141GB"},
    {"NVIDIA H200 NVL", "H200-141GB"},
    {"NVIDIA H100 NVL", "H100-94GB"},
    {"NVIDIA H100 80GB HBM3", "H100-80GB"},
    {"NVIDIA H100 PCIe", "H100-80GB"},
    {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
    {"NVIDIA A100 80GB PCIe", "A100-80GB"},
    {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
    {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
    {"NVIDIA A30", "A30-24GB"},
    {"NVIDIA L40S", "L40S-48GB"},
    {"NVIDIA A10", "A10-24GB"},
    {"Tesla T4", "T4-16GB"},
    {"Tesla V100-SXM2-32GB", "V100-32GB"},
    {"Tesla V100-PCIE-32GB", "V100-32GB"},
    {"Tesla V100S-PCIE-32GB", "V100-32GB"},
    {"Tesla P100-PCIE-16GB", "P100-16GB"},
    {"Tesla P100-SXM2-16GB", "P100-16GB"},
};

std::string_view WithoutVendor(std::string_view name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  return name.starts_with(kVendor) ? name.substr(kVendor.size()) : name;
}

}  // namespace

Result<std::string_view> CatalogModelForNvmlName(std::string_view nvml_name) {
  for (const NameRow& row : kNames) {
    if (WithoutVendor(row.nvml) == WithoutVendor(nvml_name)) {
      // Every row names a catalog model; a typo here is a bug the tests catch.
      ALLOT_CHECK(FindGpuModel(row.model) != nullptr);
      return row.model;
    }
  }
  std::string known;
  for (const NameRow& row : kNames) known += (known.empty() ? "" : ", ") + std::string(row.nvml);
  return Err(NotFound("GPU model '" + std::string(nvml_name) +
                      "' (NVML's name) is not in allot's catalog; expected one of " + known));
}

}  // namespace allot
