// Settles booked nodes' acceptance (issue 16, scheduler/acceptance.h) in allotd: a thread that,
// every second, reads what the booked nodes' agents answered (AgentRegistry), plans with the
// controller's time, and journals what the plan calls for, each event with its audit record
// (actor allotd, action reservation.acceptance or reservation.hold_move, filed under the
// reservation's tenant). The agents are asked through their assignments (server/acceptance_wire.h).
#pragma once

#include <memory>

#include "daemon/agent_registry.h"
#include "daemon/controller.h"
#include "daemon/periodic.h"

namespace allot {

class AcceptanceSupervisor {
 public:
  AcceptanceSupervisor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, int64_t lead_ms);
  ~AcceptanceSupervisor();
  void Start();
  void Stop();
  // One look now (tests; the thread calls it every second). Returns the events journaled.
  std::vector<EventBody> Check();

 private:
  Controller& ctl_;
  std::shared_ptr<AgentRegistry> agents_;
  int64_t lead_ms_;
  Periodic ticks_;  // last: stopped first, before the members its ticks read
};

}  // namespace allot
