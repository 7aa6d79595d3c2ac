// The labels an agent registers its node with (fleet/labels.h): what it reads from NVML, then
// the operator's --label flags, which win on the same name.
//
//   driver        the driver version (nvmlSystemGetDriverVersion), "550.54.15"
//   cuda          the lowest CUDA compute capability of the node's usable GPUs, "9.0"
//   interconnect  "nvlink" when a usable GPU has an active NVLink to another, else "pcie"
//
//   isolation     "full" when the agent confines tasks in every way, else "partial"
//                 (`isolation_complete`, when given: the agent's finding wins over --label)
//
// A node without GPUs gets only `driver` (when NVML answered) and the operator's labels.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/gpu_backend.h"
#include "fleet/labels.h"

namespace allot {

NodeLabels ReportedLabels(const GpuInventory& inventory, const NodeLabels& operator_labels,
                          std::optional<bool> isolation_complete = std::nullopt);

// "NAME=VALUE" (the agent's --label) → the label, or an error naming the flag and the value.
Result<std::pair<std::string, std::string>> ParseLabelFlag(const std::string& text);

}  // namespace allot
