// The openb pod lists replayed through the full scheduling pass (`allot sim --openb-replay DIR`):
// each pod a job that arrives at its creation time and leaves at its deletion time, on the
// openb GPU node list, scheduled by the same pass as any scenario (not the fill experiment of
// sim/openb.h, where pods never leave). The mapping is in docs/scenario.md ("openb replay").
//
// - Nodes keep their name, CPUs, memory and GPU count. No pod in the lists names a GPU model
//   (gpu_spec is empty: any model), so every GPU is one pool, of the node list's most common
//   model; a pod with a gpu_spec is refused.
// - allot hands out shares of a GPU from MPS pools and whole GPUs from exclusive nodes only
//   (placement/gang.cc), so a share of the nodes, evenly spread in name order, is an MPS pool:
//   by default the share pods' part of the list's GPU demand (28% for `default`), at most the
//   part of the pods that ask GPUs (CPU-only pods, like whole GPUs, need exclusive nodes).
// - Pods: cpu_milli and memory_mib per task; num_gpu × gpu_milli as whole GPUs (gpu_milli 1000
//   and more) or one GPU's share (num_gpu 1, gpu_milli below 1000), none for num_gpu 0. One
//   tenant, `openb`, without quotas; normal priority (qos, pod_phase and scheduled_time are
//   dropped). A pod without a deletion time runs until the trace's last time stamp; one deleted
//   at or before its creation, or without a creation time, is dropped and counted.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/openb.h"
#include "sim/simulator.h"
#include "spec/scenario.h"

namespace allot {

struct OpenbReplayOptions {
  double mps_fraction = -1;  // share of the nodes that are MPS pools; < 0: from the pod list
  std::string share_policy;  // the scheduler's share_policy (a scorer); "": its default
};

struct OpenbReplayInput {
  int64_t pods = 0;             // in the list
  int64_t dropped = 0;          // without a creation time, or deleted at or before it
  int64_t until_trace_end = 0;  // without a deletion time
  int nodes = 0, mps_nodes = 0;
  std::string model;            // the pool's GPU model
};

// The scenario: the fleet, the tenant and one job a kept pod.
Result<Scenario> OpenbReplayScenario(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods,
                                     const OpenbReplayOptions& options, OpenbReplayInput& input);

// What the policy did, measured while the replay runs (attach with Observe) and at its end.
class OpenbReplayMeter {
 public:
  // Sees every event with the state after it (SimOptions::on_applied).
  void Observe(const Event& e, const ClusterState& state);
  struct Figures {
    int64_t jobs = 0, placed = 0, never_placed = 0, rejected = 0;
    int64_t wait_p50_s = 0, wait_p95_s = 0, wait_max_s = 0;  // first start − creation, placed pods
    double allocation = 0;        // GPU-time held over GPU-time offered, from 0 to the end
    double peak_allocation = 0;   // the most GPUs held at once, over the fleet's
    int64_t peak_at_s = 0;
    int64_t pending_at_peak = 0;  // pods waiting at that moment
    int64_t most_pending = 0;     // the most pods waiting at once
  };
  Figures Summarize(const SimRun& run) const;

 private:
  std::vector<int64_t> held_;  // per job: GPU units held now
  int64_t allocated_ = 0, peak_ = 0, peak_at_ms_ = 0, pending_at_peak_ = 0, most_pending_ = 0;
};

void PrintOpenbReplay(const OpenbReplayInput& input, const OpenbReplayMeter::Figures& f, int64_t fleet_gpus, std::ostream& out);

}  // namespace allot
