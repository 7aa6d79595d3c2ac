#include "spec/require_reader.h"

namespace allot {

Result<NodeLabels> ReadLabels(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return Err(rd.Error(n, path, "expected a mapping of label names to values, like {interconnect: infiniband}"));
  NodeLabels labels;
  for (const auto& kv : n) {
    std::string name = kv.first.as<std::string>();
    TRY_STATUS(rd.At(kv.first, CheckLabelName(path + " (a label name)", name)));
    std::string value;
    TRY_ASSIGN(value, rd.Scalar(kv.second, YamlReader::Join(path, name)));
    TRY_STATUS(rd.At(kv.second, CheckLabelValue(YamlReader::Join(path, name), value)));
    labels.emplace_back(std::move(name), std::move(value));
  }
  SortLabels(labels);
  TRY_STATUS(rd.At(n, CheckLabels(path, labels)));
  return labels;
}

Result<Requirements> ReadRequire(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    auto req = ParseRequirementList(path, n.Scalar());
    if (!req) return Err(rd.At(n, req.error()));
    return *req;
  }
  if (!n.IsMap()) {
    return Err(rd.Error(n, path, "expected a mapping of label names to conditions, like {driver: \">=550\", interconnect: nvlink}"));
  }
  Requirements req;
  for (const auto& kv : n) {
    std::string name = kv.first.as<std::string>();
    std::string condition;
    TRY_ASSIGN(condition, rd.Scalar(kv.second, YamlReader::Join(path, name)));
    auto r = ParseRequirement(path, name, condition);
    if (!r) return Err(rd.At(kv.second, r.error()));
    req.push_back(std::move(*r));
  }
  TRY_STATUS(rd.At(n, NormalizeRequirements(path, req)));
  return req;
}

}  // namespace allot
