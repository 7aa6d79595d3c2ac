#include "agent/node/node_labels.h"

#include <algorithm>

namespace allot {

NodeLabels ReportedLabels(const GpuInventory& inventory, const NodeLabels& operator_labels,
                          std::optional<bool> isolation_complete) {
  NodeLabels out;
  if (CheckLabelValue("driver", inventory.driver_version).ok()) out.emplace_back("driver", inventory.driver_version);
  std::optional<std::vector<uint32_t>> lowest;
  std::string cuda;
  bool any_gpu = false, nvlink = false;
  for (const GpuInfo& g : inventory.gpus) {
    if (!g.problem.empty()) continue;
    any_gpu = true;
    nvlink |= !g.nvlink_peers.empty();
    auto v = ParseVersion(g.cuda_capability);
    if (v && (!lowest || CompareVersions(*v, *lowest) < 0)) {
      lowest = v;
      cuda = g.cuda_capability;
    }
  }
  if (!cuda.empty()) out.emplace_back("cuda", cuda);
  if (any_gpu) out.emplace_back("interconnect", nvlink ? "nvlink" : "pcie");
  if (isolation_complete) out.emplace_back("isolation", *isolation_complete ? "full" : "partial");
  for (const auto& [name, value] : operator_labels) {
    if (isolation_complete && name == "isolation") continue;  // the agent's own finding
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& l) { return l.first == name; });
    if (it != out.end()) {
      it->second = value;
    } else {
      out.emplace_back(name, value);
    }
  }
  SortLabels(out);
  return out;
}

Result<std::pair<std::string, std::string>> ParseLabelFlag(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    return Err(InvalidArgument("--label: '" + text + "' has no '='; expected NAME=VALUE, like interconnect=infiniband"));
  }
  std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  if (Status s = CheckLabelName("--label " + text + " (the name)", name); !s.ok()) return Err(s);
  if (Status s = CheckLabelValue("--label " + text + " (the value)", value); !s.ok()) return Err(s);
  return std::pair{name, value};
}

}  // namespace allot
