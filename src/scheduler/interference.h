// The noisy-neighbour detector (docs/noisy-neighbour.md). Fed each heartbeat's per-task samples
// of a node's shared GPUs (MPS or time-slice): a latency-sensitive task (one that reports its
// latency; an inference job that reports none gives no p99 to judge) whose p99 regresses against its own baseline while a co-tenant's
// utilization rises on the same GPU is a victim of that neighbour. After `onset_samples`
// consecutive such samples it plans the cheapest response (an MPS neighbour's throttle); a
// response is lifted once the victim has had no bad sample for `quiet_ms` (hysteresis), or at
// once when either task leaves the GPU.
//
// Pure and deterministic: time is a parameter, the memory (baselines, streaks) is the caller's
// and ordered, and the same samples in the same order give the same events. allotd's monitor
// (daemon/interference_monitor.h) keeps the memory and journals the events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "state/cluster_state.h"
#include "state/event.h"

namespace allot {

struct InterferenceConfig {
  int32_t regression_permille = 1500;  // a sample is bad at p99 ≥ baseline × 1.5
  int32_t baseline_samples = 5;        // reports averaged into a task's first baseline
  int32_t neighbour_busy_percent = 50; // a neighbour counts at SM or memory ≥ 50% …
  int32_t neighbour_rise_percent = 20; // … and ≥ 20 points over its own baseline
  int32_t onset_samples = 3;           // consecutive bad samples before a response
  int64_t quiet_ms = 60000;            // no bad sample this long lifts a response
  int32_t throttle_permille = 500;     // a throttled neighbour keeps half its share's percentage
  int64_t forget_ms = 30000;           // a task not sampled this long loses its baseline
};

// One task's sample of one heartbeat (wire/agent_messages.h: TaskGpuActivity).
struct InterferenceSample {
  JobId job;
  int32_t task = 0;
  int32_t run = 0;
  std::optional<int32_t> sm_percent, memory_percent;
  std::optional<int64_t> p99_us;
};
struct GpuSamples {
  int32_t gpu = 0;
  std::vector<InterferenceSample> tasks;
};

// What the detector remembers of each task run on a GPU, keyed (node, gpu, job, task, run).
struct InterferenceTrack {
  int64_t baseline_p99_us = 0;
  int32_t baseline_n = 0;        // reports averaged so far (up to baseline_samples)
  int64_t util_baseline = 0;     // its max(SM, memory) percent while no victim was bad
  int32_t util_n = 0;
  int32_t bad_streak = 0;
  int64_t last_bad_ms = -1;
  int64_t last_seen_ms = 0;
  bool persisting_reported = false;  // a finding said its regression outlasted the response
  bool operator==(const InterferenceTrack&) const = default;
};
using InterferenceKey = std::tuple<uint32_t, int32_t, uint32_t, int32_t, int32_t>;
struct InterferenceMemory {
  std::map<InterferenceKey, InterferenceTrack> tracks;
};

// A detection, whether or not it led to a response (a time-slice neighbour has none yet).
struct InterferenceFinding {
  NodeId node;
  int32_t gpu = 0;
  JobId victim;
  int32_t victim_task = 0;
  JobId neighbour;
  int32_t neighbour_task = 0;
  int64_t baseline_p99_us = 0, p99_us = 0;
  int32_t neighbour_sm_percent = 0, neighbour_memory_percent = 0;
  int64_t at_ms = 0;
  std::string response;  // "throttle to 25%", why none, or that it persists under one
};

struct InterferenceOutcome {
  std::vector<EventBody> events;          // InterferenceActed, InterferenceCleared, in GPU order
  std::vector<InterferenceFinding> findings;
};

// One heartbeat of `node`. Samples of tasks not running on that GPU now (or of another run) are
// ignored: the node's word never names another node's job.
InterferenceOutcome DetectInterference(const ClusterState& st, InterferenceMemory& memory, const InterferenceConfig& config,
                                       NodeId node, const std::vector<GpuSamples>& gpus, int64_t now);

}  // namespace allot
