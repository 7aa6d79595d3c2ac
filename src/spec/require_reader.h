// Node labels and requirements as people write them (fleet/labels.h):
//
//   labels:  {interconnect: infiniband, rack_power: "a"}        a node (fleet and scenario files)
//   require: {driver: ">=550", cuda: ">=8.0", interconnect: nvlink}   a job or a reservation
//
// A requirement may also be one string, "driver>=550,cuda>=9.0" (the query and CLI form).
// Errors name the field, the value as written and what was expected.
#pragma once

#include <string>

#include "fleet/labels.h"
#include "spec/field_reader.h"

namespace allot {

Result<NodeLabels> ReadLabels(const YamlReader& rd, const YAML::Node& n, const std::string& path);
Result<Requirements> ReadRequire(const YamlReader& rd, const YAML::Node& n, const std::string& path);

}  // namespace allot
