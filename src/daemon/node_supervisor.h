// Declares agent-managed nodes lost when their agents fall silent: a thread that looks every
// half second for nodes whose last heartbeat is older than the timeout and journals NodeFailed
// (down), which requeues their jobs. An agent stops its own tasks once its lease (shorter than
// the timeout) runs out without an answered heartbeat, so a partitioned node's jobs are not
// running twice when they start elsewhere.
//
// At start every agent-managed node that is not already down is given a full timeout to
// heartbeat (allotd may have been down longer than that itself).
#pragma once

#include <memory>

#include "daemon/agent_registry.h"
#include "daemon/controller.h"
#include "daemon/periodic.h"

namespace allot {

// Journals NodeFailed for `node` (down, repair or accepting; its jobs are requeued) and, with a
// rate card, credits each affected tenant for the GPU time the fault cost its job: the run since
// its last checkpoint (a command job's whole run: allotd cannot see its checkpoints), at the
// model's price (metering/credit.h). Returns NodeFailed's outcome, or, once the node has
// failed, the first credit that could not be recorded; a credit never blocks the failure.
Status FailNode(Controller& ctl, NodeId node, NodeCondition condition, const std::string& reason, AuditContext audit);

class NodeSupervisor {
 public:
  NodeSupervisor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, int64_t timeout_ms);
  ~NodeSupervisor();
  void Start();
  void Stop();
  // One look now (tests; the thread calls it every half second). Returns the nodes declared lost.
  std::vector<std::string> Check();

 private:
  Controller& ctl_;
  std::shared_ptr<AgentRegistry> agents_;
  int64_t timeout_ms_;
  Periodic ticks_;  // last: stopped first, before the members its ticks read
};

}  // namespace allot
