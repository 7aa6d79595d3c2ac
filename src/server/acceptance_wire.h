// allotd's side of booked nodes' acceptance (issue 16, scheduler/acceptance.h): what each booked
// node's agent is asked to run (the assignments' "acceptance", wire/acceptance_messages.h) and what
// GET /v1/reservations/NAME shows of how each node's acceptance stands (`acceptance`).
#pragma once

#include <cstdint>
#include <vector>

#include "server/api_json.h"
#include "state/cluster_state.h"
#include "wire/acceptance_messages.h"

namespace allot {

// For each confirmed reservation whose current window is in its acceptance phase at `now` and
// holds `node` there, unsettled: the run its agent must make.
std::vector<AcceptanceAsk> DesiredAcceptance(const ClusterState& st, NodeId node, int64_t now, int64_t lead_ms);

// `acceptance` of window `window` of `r`: per node it holds or held there, in hold order and then
// the replaced ones, {node, state: pending|passed|failed|replaced, why?, replaced_by?, at?}; nodes
// without an agent are left out (nothing checks them).
Json AcceptanceJson(const ClusterState& st, const CapacityReservation& r, size_t window);

}  // namespace allot
