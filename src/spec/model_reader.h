// A task group's `model:` (docs/sizing.md), read strictly: every error names the field, the
// value and what was expected.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/status.h"
#include "spec/field_reader.h"
#include "state/sizing.h"

namespace allot {

// The context a model is sized for when neither the job nor the catalogue says.
inline constexpr int64_t kDefaultModelContext = 4096;

// `n` is the mapping under `path` ("job.tasks.model"). Fills what the catalogue knows for a
// named model; refuses a shape written beside a name, an unknown name, layers without hidden
// (or the reverse), full fine-tuning of int8/int4 weights, and an estimate past 1 PiB.
Result<ModelWorkload> ReadModel(const YamlReader& rd, const YAML::Node& n, const std::string& path);

}  // namespace allot
