#include "spec/placement_view.h"

#include <nlohmann/json.hpp>

#include "core/quantity.h"
#include "fleet/mig.h"

namespace allot {

using Json = nlohmann::json;

// Per task: node, GPU indices (whole GPUs) or GPU index (a share), the MIG instance or MPS
// share, and what the task is charged in milli-GPU.
std::string PlacementJson(const ClusterState& st, const Job& j) {
  std::string out = "[";
  size_t k = 0;
  for (const TaskGroup& g : j.spec.groups) {
    int64_t share = GpuMilli(g.gpu);
    for (int i = 0; i < g.count && k < j.placement.size(); ++i, ++k) {
      const TaskPlacement& p = j.placement[k];
      const Node& node = st.fleet().node(p.node);
      if (k > 0) out += ", ";
      out += "{\"node\": " + Json(node.name).dump();
      // gpu: the (first) GPU index; whole-GPU tasks also list every GPU they hold.
      out += ", \"gpu\": " + std::to_string(p.gpu_mask == 0 ? -1 : p.gpu_index());
      if (p.share.kind == ShareKind::kWhole) {
        out += ", \"gpus\": [";
        bool first = true;
        for (int b = 0; b < node.gpu_count; ++b) {
          if (!((p.gpu_mask >> b) & 1)) continue;
          out += (first ? "" : ", ") + std::to_string(b);
          first = false;
        }
        out += "]";
      }
      if (p.share.kind == ShareKind::kMig) {
        out += ", \"mig\": \"" + std::string(node.pool.mig->profiles[p.share.mig.profile].name) + "@" +
               std::to_string(p.share.mig.start) + "\"";
      }
      if (p.share.kind == ShareKind::kMps) {
        out += ", \"mps\": {\"percent\": " + std::to_string(p.share.percent) + ", \"memory\": \"" +
               FormatMemoryMiB(p.share.memory) + "\"}";
      }
      if (p.share.kind == ShareKind::kTimeslice) out += ", \"timeslice\": true";
      out += ", \"share\": " + std::to_string(share) + "}";
    }
  }
  return out + "]";
}

}  // namespace allot
