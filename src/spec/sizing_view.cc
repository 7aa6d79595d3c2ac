#include "spec/sizing_view.h"

#include "core/quantity.h"
#include "spec/model_catalog.h"

namespace allot {

nlohmann::json SizingJson(const JobSpec& spec) {
  nlohmann::json out = nlohmann::json::array();
  for (const GroupSizing& s : spec.sizing) {
    const ModelWorkload& m = s.model;
    nlohmann::json model = {{"parameters", FormatParameterCount(m.parameters)},
                            {"precision", ModelPrecisionName(m.precision)},
                            {"mode", ModelModeName(m.mode)},
                            {"context", m.context},
                            {"batch", m.batch}};
    if (!m.name.empty()) model["name"] = m.name;
    if (m.layers > 0) model["layers"] = m.layers;
    if (m.hidden > 0) model["hidden"] = m.hidden;
    if (m.override) model["override"] = true;
    const MemoryEstimate& e = s.estimate;
    nlohmann::json estimate = {{"total", FormatMemoryMiB(e.total_mib())},
                               {"total_mib", e.total_mib()},
                               {"weights", FormatMemoryMiB(e.weights_mib)},
                               {"kv_cache", FormatMemoryMiB(e.kv_cache_mib)},
                               {"training", FormatMemoryMiB(e.training_mib)},
                               {"overhead", FormatMemoryMiB(e.overhead_mib)}};
    out.push_back({{"group", s.group}, {"model", std::move(model)}, {"estimate", std::move(estimate)},
                   {"allocation", s.allocation}, {"why", s.why}});
  }
  return out;
}

}  // namespace allot
