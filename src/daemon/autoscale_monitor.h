// allotd's autoscaler loop (docs/services.md): heartbeats bring each service replica's load
// (ALLOT_LOAD_FILE, wire TaskLoad); every second Tick sums each autoscaled service's replicas'
// newest loads, runs the pure Autoscaler (scheduler/autoscaler.h) and journals a change of the
// wanted replicas as ServiceScaled, which the writer's reconciler then adds or removes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/controller.h"
#include "scheduler/autoscaler.h"
#include "wire/agent_messages.h"

namespace allot {

class AutoscaleMonitor {
 public:
  explicit AutoscaleMonitor(Controller& ctl) : ctl_(ctl) {}
  // A heartbeat's loads from `node`: only tasks of jobs running there are taken.
  void Observe(const std::string& node, const std::vector<TaskLoad>& loads, int64_t now);
  // Samples and decides every autoscaled service; journals ServiceScaled where the count changes.
  void Tick(int64_t now);
  // A replica's report older than this is not counted (its agent is silent or it stopped).
  static constexpr int64_t kStaleMs = 5000;

 private:
  struct Report {
    int run = 0;
    int64_t load_milli = 0;
    int64_t at_ms = 0;
  };
  Controller& ctl_;
  std::mutex mu_;
  std::map<std::pair<uint32_t, int>, Report> latest_;  // (job, task) → its newest report
  std::map<uint32_t, Autoscaler> scalers_;             // by service id
};

}  // namespace allot
