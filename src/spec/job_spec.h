// A job as a scenario file or an API body writes it (name, tenant, tasks, duration or command,
// environment, …): read and checked (field, value and what was expected in every error), then
// resolved against the state (tenant, GPU model, MIG profiles).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "spec/field_reader.h"
#include "state/cluster_state.h"
#include "state/job.h"
#include "tenancy/quota_tree.h"

namespace allot {

// "none", "nvlink", "rack" or "zone" → the topology; nullopt otherwise. Jobs, reservations
// and availability queries read a topology the same way.
std::optional<Topology> ParseTopology(std::string_view text);

struct ScenarioJob {
  JobSpec spec;            // spec.tenant and spec.gpu_resource resolved when the state is built
  std::string tenant;
  std::string gpu_model;   // empty: the fleet's only model, or none when no GPUs are asked
  std::vector<std::string> mig;  // per task group: the MIG profile asked ("" when none)
  int line = 0;
  bool in_jobs_file = false;  // read from the scenario's jobs_file: `line` is a line of that file
  // The simulator's failure injection (scenario `fail:`): the first fail_runs runs exit
  // unsuccessfully fail_after_ms after they start (0: when the run would have finished).
  int32_t fail_runs = 0;
  int64_t fail_after_ms = 0;
};

// One job object under `path`; a scenario's `repeat: N` makes N copies, and `array:` its elements
// (spec/array_reader.h). `template: NAME` is resolved against rd.templates() first. `simulated`: a scenario's job, which needs a duration (and may say how
// it fails); an API job may name a command instead.
Result<std::vector<ScenarioJob>> ReadJob(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated);
// `service`: the object is a service (spec/service_reader.h); the job read is its replica
// template: the service's fields are allowed (and left to the caller), there is no duration.
Result<std::vector<ScenarioJob>> ReadJob(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated,
                                         bool service);
// One job from YAML text, as a scenario writes it. Tenant and GPU model stay names; ResolveJob
// resolves them. `source` names the text in errors. An API body is read by
// server/body_reader.h (strict JSON, or YAML) and handed to ReadJobObject.
Result<ScenarioJob> ParseJob(const std::string& text, const std::string& source);
Result<ScenarioJob> ReadJobObject(const YAML::Node& root, const std::string& source);
// What `POST /v1/jobs` takes: one job object (an array expands into its elements) or a list of
// them (a pipeline), in submission order: dependencies first, cycles refused.
// `templates`: what a job's `template:` may name (spec/job_template.h); none when null.
Result<std::vector<ScenarioJob>> ReadJobBatch(const YAML::Node& root, const std::string& source,
                                              const TemplateCatalog* templates = nullptr);
// Resolves a job's tenant path, GPU model and MIG profile names against `state`. Errors read
// "<where>FIELD: what was wrong; expected what" (where: "jobs[name]." in a scenario, "" in the API).
Status ResolveJob(ScenarioJob& job, const ClusterState& state, const std::string& where);

}  // namespace allot
