// A service as a scenario file or an API body writes it (docs/services.md): a job's fields for
// its replica template, plus replicas, spread, port, the rolling update's limits and autoscaling.
// `kind: service`, or `kind: inference` with replicas, min_replicas or max_replicas (the alias).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "spec/field_reader.h"
#include "spec/job_spec.h"
#include "state/service.h"

namespace allot {

struct ScenarioService {
  ServiceSpec spec;     // spec.replica is replica.spec once resolved
  ScenarioJob replica;  // the template, its tenant and GPU model still names
  // Simulator only: the total load the replicas report from each time on, (at, thousandths).
  std::vector<std::pair<int64_t, int64_t>> load;
  int64_t submit_ms = 0;  // scenario: when it is created
  int line = 0;
};

// Whether the object is a service rather than a job.
bool IsServiceObject(const YAML::Node& n);
// `simulated`: a scenario's service (may script `load`); an API body may not.
Result<ScenarioService> ReadService(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated);
Result<ScenarioService> ReadServiceObject(const YAML::Node& root, const std::string& source,
                                         const TemplateCatalog* templates = nullptr);
// Resolves the template (tenant, GPU model, MIG profiles, sizing) as ResolveJob does.
Status ResolveService(ScenarioService& s, const ClusterState& state, const std::string& where);

}  // namespace allot
