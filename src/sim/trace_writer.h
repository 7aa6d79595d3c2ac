// Writes scenario jobs as a trace: YAML list items, JSON Lines records or CSV rows, in the
// formats the scenario reader and the job stream reader read back (docs/scenario.md, "Jobs
// from a file"). For the bench's trace generator and the format-equality tests: it writes
// flat jobs (one task group of whole GPUs or none; name, tenant, submit, duration, time limit,
// topology, priority, kind, minimum runtime, checkpoint, grace) and refuses anything else.
#pragma once

#include <ostream>
#include <string>

#include "core/status.h"
#include "spec/scenario.h"

namespace allot {

enum class TraceFormat { kYaml, kJsonLines, kCsv };

// The scenario's fleet: and tenants: sections (and scheduler: when not the default is not
// written: the caller appends what it needs). Nodes of one rack and zone with equal shapes
// are written as one group.
Status WriteFleetAndTenants(const Scenario& scenario, std::ostream& out);

class TraceWriter {
 public:
  TraceWriter(TraceFormat format, std::ostream& out) : format_(format), out_(out) {}
  // The CSV header; nothing for the other formats. Call once before the first job.
  void Begin();
  // One job; refuses a job it cannot write exactly.
  Status Write(const ScenarioJob& job);

 private:
  TraceFormat format_;
  std::ostream& out_;
};

}  // namespace allot
