// The openb replay: the fragmentation experiment of the FGD study (ATC'23) on the Alibaba openb
// trace, reproduced as ../shared/reference/FGD.md specifies. Pods from a pod list (plus seeded
// resampled clones up to `inflate` × GPU capacity, shuffled) are placed one at a time on the GPU
// node list, never leave, and are dropped when nothing fits; the result is the allocation curve
// over arrived demand. Placement uses the registered scorers (placement/score).
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

struct OpenbNode {
  std::string name;
  int64_t cpu = 0;     // millicores
  int64_t memory = 0;  // MiB
  int gpus = 0;
  std::string model;
};

struct OpenbPod {
  std::string name;
  int64_t cpu = 0;     // millicores
  int64_t memory = 0;  // MiB
  int num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU
  std::string gpu_spec;   // "" (any model) or "A|B"
  // Seconds from the trace's start (the optional creation_time and deletion_time columns); -1
  // when the list has no such column or the cell is empty. The fill experiment ignores them;
  // the replay (sim/openb_replay.h) runs each pod between them.
  int64_t creation_s = -1;
  int64_t deletion_s = -1;
};

// Strict CSV readers: a header naming the columns (nodes: sn, cpu_milli, memory_mib, gpu, model;
// pods: name, cpu_milli, memory_mib, num_gpu, gpu_milli, and optionally gpu_spec, creation_time
// and deletion_time; other
// columns are ignored). A malformed row is refused with "FILE:LINE: column: value; expected …".
Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path);
Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path);
// The same from a stream (`path` names it in errors).
Result<std::vector<OpenbNode>> ReadOpenbNodes(std::istream& in, const std::string& path);
Result<std::vector<OpenbPod>> ReadOpenbPods(std::istream& in, const std::string& path);

struct OpenbOptions {
  std::string policy = "fgd";
  uint64_t seed = 42;
  double inflate = 1.3;  // demand target as a multiple of GPU capacity
};

struct OpenbResult {
  std::string policy;
  uint64_t seed = 0;
  int64_t total_gpus = 0;
  int64_t pods = 0;      // after tuning
  int64_t placed = 0;
  // value(X) for X = 0 … round(100 · inflate): mean allocation (percent of GPU capacity) over
  // the events whose arrived demand rounds to X percent (FGD.md §3).
  std::vector<double> curve;
  double AllocAt(int x) const { return x < static_cast<int>(curve.size()) ? curve[x] : 0; }
};

// Runs one experiment. Fails on an unknown policy or an empty node list.
Result<OpenbResult> RunOpenb(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods,
                             const OpenbOptions& options);

}  // namespace allot
