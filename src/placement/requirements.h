// What the fleet's nodes offer a job's `require` (fleet/labels.h): for the reasons a job waits.
#pragma once

#include <string>

#include "fleet/fleet.h"
#include "state/job.h"

namespace allot {

// How many nodes a job's `require` admits: of its GPU model (any model for a CPU-only job,
// shared pools included), in any condition, and how many of those are schedulable now.
struct RequireMatch {
  int nodes = 0;
  int schedulable = 0;
};
RequireMatch MatchRequire(const Fleet& fleet, const JobSpec& spec);

// Why no node can hold a job whose `require` no node of its model satisfies, naming the
// requirement and what the nodes have: "requires driver>=560; no H100-80GB node satisfies it
// (driver: 535.104.05 on 3 nodes, 550.54.15 on 2; cuda: 9.0 on 5)". REQUIRES: spec.require is
// not empty.
std::string DescribeUnmetRequire(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names);

}  // namespace allot
