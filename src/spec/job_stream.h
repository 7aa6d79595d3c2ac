// Jobs read from a stream, one record at a time: JSON Lines (one job object a line, the fields
// of a scenario job) or CSV (a header row naming columns by field path, one flat job a row).
// Each record is parsed, turned into a ScenarioJob and handed on before the next is read, so a
// month-long trace never exists as a parse tree (docs/scenario.md, "Jobs from a file").
//
// A flat record (the fields below, scalars only, `tasks` one object) is read directly; any
// other JSON record (task group lists, model:, require:, repeat:, …) becomes the YAML tree the
// scenario reader walks and goes through ReadJob, so both read a job alike. Errors read
// "FILE:LINE: FIELD: what was wrong; expected what" and stop the stream.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "spec/job_spec.h"

namespace allot {

enum class JobFileFormat { kJsonLines, kCsv };

// By extension: .jsonl and .ndjson are JSON Lines, .csv is CSV; nullopt otherwise.
std::optional<JobFileFormat> JobFileFormatOf(std::string_view path);

// The field paths a flat record may hold, and so the CSV columns a header may name.
inline constexpr const char* kFlatJobFields[] = {
    "name",        "tenant",       "submit",     "duration",        "time_limit", "tasks.count", "tasks.gpus",
    "tasks.cpu",   "tasks.memory", "tasks.gpu_model", "topology", "priority",   "kind",        "min_runtime",
    "checkpoint.interval", "checkpoint.grace", "grace", "reservation"};

struct JobStreamOptions {
  size_t buffer_bytes = size_t{1} << 20;  // one read; a longer line grows it
  bool direct = true;  // false: every JSON record through the YAML tree (tests compare the two)
  // What a JSON Lines record's `template:` or a CSV row's `template` cell may name (the
  // scenario's `templates:`); none when null. Not owned. A record naming one is not flat: it goes
  // through ReadJob.
  const TemplateCatalog* templates = nullptr;
};

using JobSink = std::function<Status(ScenarioJob&&)>;

// Reads every job of `in` (called `name` in errors) in order, each handed to `sink` with its
// line. Stops at the first error, the reader's or the sink's.
Status ReadJobStream(std::istream& in, JobFileFormat format, const std::string& name, const JobSink& sink,
                     const JobStreamOptions& options = {});
// A scenario's YAML job item (`path` "jobs[3]"; marks `line_offset` lines into `file`) read by
// the direct reader when it is flat, with ReadJob's messages and lines; nullopt when it is not,
// and the caller reads it with ReadJob.
std::optional<Result<ScenarioJob>> ReadFlatYamlJob(const YAML::Node& item, const std::string& file, const std::string& path,
                                                   int line_offset);
// The same from a file, its format by extension.
Status ReadJobFile(const std::string& path, const JobSink& sink, const JobStreamOptions& options = {});

}  // namespace allot
