#include "placement/requirements.h"

#include <map>

namespace allot {
namespace {

bool OfModel(const Node& n, const JobSpec& spec) {
  return spec.gpu_resource == kCpu || n.gpu_resource == spec.gpu_resource;
}

}  // namespace

RequireMatch MatchRequire(const Fleet& fleet, const JobSpec& spec) {
  RequireMatch m;
  for (const Node& n : fleet.nodes()) {
    if (!OfModel(n, spec) || !Satisfies(fleet.labels(n.id), spec.require)) continue;
    ++m.nodes;
    m.schedulable += n.schedulable();
  }
  return m;
}

std::string DescribeUnmetRequire(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names) {
  std::string model = spec.gpu_resource == kCpu ? std::string() : names.Name(spec.gpu_resource).substr(4) + " ";
  std::string out = "requires " + FormatRequirements(spec.require) + "; no " + model + "node satisfies it";
  // Per label the job names: each value the nodes of its model have, with how many (values in
  // order, the first 6), and how many lack the label.
  std::string have;
  std::string last;
  for (const Requirement& r : spec.require) {
    if (r.label == last) continue;
    last = r.label;
    std::map<std::string, int> values;
    int missing = 0;
    for (const Node& n : fleet.nodes()) {
      if (!OfModel(n, spec)) continue;
      const std::string* v = FindLabel(fleet.labels(n.id), r.label);
      v ? ++values[*v] : ++missing;
    }
    std::string part;
    int shown = 0;
    for (const auto& [v, count] : values) {
      if (shown++ == 6) {
        part += ", …";
        break;
      }
      part += (part.empty() ? "" : ", ") + v + " on " + std::to_string(count) + (count == 1 ? " node" : " nodes");
    }
    if (missing > 0) {
      part += (part.empty() ? "" : ", ") + std::string("none on ") + std::to_string(missing) +
              (missing == 1 ? " node" : " nodes");
    }
    have += (have.empty() ? "" : "; ") + r.label + ": " + part;
  }
  return have.empty() ? out : out + " (" + have + ")";
}

}  // namespace allot
