// Which nodes' agent view an event may change: the tasks allotd answers a node's assignment poll
// with (their runs, placements, preemption deadlines, masters), its condition and MIG layout.
// The agent channel re-evaluates only the parked polls of the nodes a batch touched, so this
// errs wide: an event it cannot place (a reservation, a tenant move, an interference response, a
// service, an SSH key) touches every node.
#pragma once

#include <algorithm>
#include <vector>

#include "state/cluster_state.h"
#include "state/event.h"

namespace allot {

struct NodesTouched {
  bool all = false;
  std::vector<NodeId> nodes;  // may repeat; Normalize sorts and dedupes

  void Add(NodeId n) {
    if (n.valid()) nodes.push_back(n);
  }
  void Merge(const NodesTouched& o) {
    all |= o.all;
    if (!all) nodes.insert(nodes.end(), o.nodes.begin(), o.nodes.end());
  }
  void Normalize() {
    if (all) nodes.clear();
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  }
};

// Adds the nodes `e` touches as `st` stands. Call it with the state before the event is applied
// and again after (a requeue clears a job's placement; a placement makes one): the union is what
// the event touched.
void AddNodesTouched(const ClusterState& st, const EventBody& e, NodesTouched& out);

}  // namespace allot
