// The fields of arrays and pipelines in a job spec (docs/arrays.md): `array:` (count or frames,
// parallel), `retries:`, `after:` and the simulator's `fail:`; the expansion of an array into its
// elements; and the order a batch of jobs is submitted in (dependencies first, cycles refused).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "spec/field_reader.h"
#include "state/job.h"

namespace allot {

struct ScenarioJob;

// An array as written: its element count, the frames ("1-240:2" → 1, 3, …, 239) when a frame
// array, and how many run at once.
struct ArraySpec {
  int32_t count = 0;
  std::vector<int64_t> frames;  // empty: a counted array
  int32_t parallel = 0;
};

// "1-240:2", "1-10,20-30:5", "7": ascending ranges, each FIRST[-LAST[:STEP]], frames 0 to 10^9;
// at most kMaxArrayElements frames in all.
Result<std::vector<int64_t>> ParseFrames(const std::string& text);
Result<ArraySpec> ReadArray(const YamlReader& rd, const YAML::Node& n, const std::string& path);
// `after:` as a list of {job: NAME, state: succeeded|finished|failed} or bare NAMEs.
Result<std::vector<Dependency>> ReadAfter(const YamlReader& rd, const YAML::Node& n, const std::string& path);
// The simulator's failure injection (`fail: {runs: N, elements: [i, …], after: 30s}`) into the
// job's `fail_runs` / `fail_after_ms`, per element when it is an array.
Status ReadFail(const YamlReader& rd, const YAML::Node& n, const std::string& path, std::vector<ScenarioJob>& jobs);
// The elements of `job` (named NAME-i), each with its ArrayElement.
std::vector<ScenarioJob> ExpandArray(const ScenarioJob& job, const ArraySpec& array);

// Orders a batch of jobs so that each follows the jobs and arrays of the batch it depends on
// (stable otherwise; an array's elements stay together and in order);
// errors read "[FILE:LINE: ]jobs[NAME].after[i].job: …" (FILE: a scenario's). Refuses a cycle,
// naming its jobs in order ("a → b → a"). With `all_in_batch` (a scenario), a dependency must
// name a job or array of the batch of the same tenant, submitted no later than its dependent.
Status OrderByDependencies(std::vector<ScenarioJob>& jobs, bool all_in_batch, const std::string& file);

}  // namespace allot
