// allotd's side of the noisy-neighbour loop (docs/noisy-neighbour.md): each agent heartbeat's
// per-task samples of its shared GPUs go through the pure detector (scheduler/interference.h),
// whose memory (baselines, streaks) this keeps; the responses it plans are journaled, each with
// an audit record filed under the neighbour's tenant. The memory is not journaled: after a
// restart baselines are learned again, and responses in force (in the state) are still lifted
// after their quiet period.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/controller.h"
#include "scheduler/interference.h"
#include "wire/agent_messages.h"

namespace allot {

class InterferenceMonitor {
 public:
  static constexpr size_t kKeptFindings = 100;

  InterferenceMonitor(Controller& ctl, InterferenceConfig config, std::function<void(const std::string&)> log = nullptr)
      : ctl_(ctl), config_(config), log_(std::move(log)) {}

  // One heartbeat of `node`: detects, journals what the detector plans. Returns the events
  // journaled (refused ones are logged: the next beat decides again).
  size_t Observe(const std::string& node, const std::vector<GpuTelemetry>& gpus);
  // The newest findings, oldest first (at most kKeptFindings).
  std::vector<InterferenceFinding> Findings() const;
  const InterferenceConfig& config() const { return config_; }

 private:
  Controller& ctl_;
  const InterferenceConfig config_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;  // one detector run at a time: heartbeats arrive on many threads
  InterferenceMemory memory_;
  std::deque<InterferenceFinding> findings_;
};

// A heartbeat's GPU telemetry as the detector's samples (tasks without a job id are left out).
std::vector<GpuSamples> SamplesOf(const std::vector<GpuTelemetry>& gpus);

}  // namespace allot
