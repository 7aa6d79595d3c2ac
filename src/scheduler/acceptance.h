// Acceptance of booked nodes before hand-off (issue 16). From a lead time before each window of a
// confirmed reservation opens, every node it holds there (those with an agent) runs its checks;
// by the window's start each must have passed. A node that failed them, that is lost, cordoned,
// draining or in repair meanwhile, or that gave no answer by the start, loses its hold to a node
// from free capacity (ReplacementFor), or, when none fits, keeps it with the failure recorded for
// the tenant to see.
//
// Pure and deterministic: allotd's acceptance supervisor (daemon/acceptance_supervisor.h) passes
// the time and the agents' answers and journals the events planned here; the same inputs give
// the same events.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "state/cluster_state.h"
#include "state/event.h"

namespace allot {

// Acceptance starts this long before a window opens by default (allotd --acceptance-lead).
inline constexpr int64_t kDefaultAcceptanceLeadMs = 10 * 60 * 1000;

// What a node's agent answered for (reservation, window).
struct AcceptanceAnswer {
  ReservationId reservation;
  int32_t window = 0;
  NodeId node;
  bool passed = false;
  std::string why;  // failed: the failing checks, "name: detail; …"
};

// Whether window `window` of `r` is in its acceptance phase at `now`: from `lead_ms` before its
// start until its end.
bool InAcceptance(const CapacityReservation& r, size_t window, int64_t now, int64_t lead_ms);

// Whether the agent on `node` must run acceptance for window `window` of `r` now: the window is in
// its acceptance phase, `node` holds there, and its acceptance has not settled.
bool AcceptanceAsked(const CapacityReservation& r, size_t window, NodeId node, int64_t now, int64_t lead_ms);

// The node that takes over `from`'s hold in window `window` of `r`, or why none can: a node of the
// reservation's model, ready, holding nothing of the reservation there, not in `exclude`, with the
// hold's GPUs free in the book for the whole window (a whole-node reservation: wholly free, with
// as many GPUs as `from`'s hold), in the domain of the window's other holds when the reservation
// has a topology. Order: (1) the node's domain is `from`'s (its NVLink domain, rack or zone by the
// reservation's topology; its rack without one), (2) the lowest node id.
struct Replacement {
  NodeId node;
  std::string shortfall;  // when !node.valid(): why no node fits
};
Replacement ReplacementFor(const ClusterState& st, const CapacityReservation& r, size_t window, NodeId from,
                           const std::set<NodeId>& exclude);

// The events acceptance calls for at `now`, in reservation, window and hold order:
// ReservationNodeAccepted (passed, or failed with no replacement) and ReservationHoldMoved.
std::vector<EventBody> PlanAcceptance(const ClusterState& st, int64_t now, int64_t lead_ms,
                                      const std::vector<AcceptanceAnswer>& answers);

}  // namespace allot
