// A command job's environment as a scenario file or an API body writes it (image, mounts, env,
// shm_size), checked as it is read: every refusal names the field, the value and what was
// expected. Used by the job reader (spec/job_spec.cc).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/status.h"
#include "spec/field_reader.h"
#include "state/job.h"

namespace allot {

// Reads the job `n`'s image, mounts, env and shm_size under `path` ("job", "jobs[3]") into
// spec.environment. `tenant` is the job's tenant path as written: a mount's volume names it or
// one of its ancestors, lexically ("research" for "research/nlp"), so whether another tenant
// exists never shows.
// REQUIRES: spec.command and spec.groups already read (only a command job may have an
// environment; shm_size is held to each task's memory).
Status ReadJobEnvironment(const YamlReader& rd, const YAML::Node& n, const std::string& path, const std::string& tenant,
                          JobSpec& spec);

}  // namespace allot
