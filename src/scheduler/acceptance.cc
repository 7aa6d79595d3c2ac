#include "scheduler/acceptance.h"

#include <algorithm>

#include "core/calendar.h"
#include "fleet/labels.h"

namespace allot {
namespace {

bool Unfit(NodeCondition c) {
  return c == NodeCondition::kDown || c == NodeCondition::kRepair || c == NodeCondition::kCordoned ||
         c == NodeCondition::kDraining;
}

const AcceptanceAnswer* AnswerOf(const std::vector<AcceptanceAnswer>& answers, ReservationId r, size_t window, NodeId node) {
  for (const AcceptanceAnswer& a : answers) {
    if (a.reservation == r && static_cast<size_t>(a.window) == window && a.node == node) return &a;
  }
  return nullptr;
}

// Nodes that failed in this window already (failed, or replaced): never taken back.
std::set<NodeId> FailedIn(const CapacityReservation& r, size_t window) {
  std::set<NodeId> out;
  for (const AcceptanceRecord& a : r.acceptance) {
    if (static_cast<size_t>(a.window) == window && a.state != AcceptanceState::kPassed) out.insert(a.node);
  }
  return out;
}

// Whether `node` took its hold by a replacement made after the window opened: it is judged by
// its answer alone, with no deadline.
bool JoinedLate(const CapacityReservation& r, size_t window, NodeId node) {
  for (const AcceptanceRecord& a : r.acceptance) {
    if (static_cast<size_t>(a.window) == window && a.replaced_by == node && a.at_ms >= r.spec.windows[window].start_ms) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool InAcceptance(const CapacityReservation& r, size_t window, int64_t now, int64_t lead_ms) {
  if (r.state != ReservationState::kConfirmed || window >= r.spec.windows.size()) return false;
  const Window& w = r.spec.windows[window];
  return now >= w.start_ms - lead_ms && now < w.end_ms;
}

bool AcceptanceAsked(const CapacityReservation& r, size_t window, NodeId node, int64_t now, int64_t lead_ms) {
  if (!InAcceptance(r, window, now, lead_ms)) return false;
  const std::vector<NodeHold>& holds = r.holds[window];
  if (std::none_of(holds.begin(), holds.end(), [&](const NodeHold& h) { return h.node == node; })) return false;
  return r.AcceptanceOf(window, node) == nullptr;
}

Replacement ReplacementFor(const ClusterState& st, const CapacityReservation& r, size_t window, NodeId from,
                           const std::set<NodeId>& exclude) {
  const Fleet& fleet = st.fleet();
  const Window w = r.spec.windows[window];
  const std::vector<NodeHold>& holds = r.holds[window];
  int32_t gpus = 0;
  for (const NodeHold& h : holds) {
    if (h.node == from) gpus = h.gpus;
  }
  const CapacityAsk ask = st.AskOf(r.spec);
  const std::optional<DomainKind> within = ask.within;
  const DomainKind prefer = within.value_or(DomainKind::kRack);
  const uint32_t from_domain = fleet.DomainOf(fleet.node(from), prefer);
  std::optional<uint32_t> required;  // a topology keeps every hold in the other holds' domain
  for (const NodeHold& h : holds) {
    if (within && h.node != from) required = fleet.DomainOf(fleet.node(h.node), *within);
  }
  NodeId elsewhere;
  for (const Node& n : fleet.nodes()) {
    // Offered: the reservation's `require`, and a node that can confine an untrusted tenant's tasks.
    if (exclude.count(n.id) || n.condition != NodeCondition::kReady || !ReservationBook::Offered(fleet, n, ask)) continue;
    if (std::any_of(holds.begin(), holds.end(), [&](const NodeHold& h) { return h.node == n.id; })) continue;
    if (required && fleet.DomainOf(n, *within) != *required) continue;
    const int32_t booked = st.book().BookedOn(n.id, w);
    const bool fits = r.spec.nodes > 0 ? n.gpu_count == gpus && booked == 0 : n.gpu_count - booked >= gpus;
    if (!fits) continue;
    if (fleet.DomainOf(n, prefer) == from_domain) return {n.id, ""};
    if (!elsewhere.valid()) elsewhere = n.id;
  }
  if (elsewhere.valid()) return {elsewhere, ""};
  const std::string model = st.resource_names().Name(r.spec.gpu_resource).substr(4);
  std::string what = r.spec.nodes > 0 ? "no other ready node of " + std::to_string(gpus) + " " + model + " GPUs is wholly free"
                                      : "no other ready node has " + std::to_string(gpus) + " GPUs of " + model + " free";
  what += " from " + FormatRfc3339(w.start_ms) + " to " + FormatRfc3339(w.end_ms);
  if (required) what += std::string(" in ") + TopologyName(r.spec.topology) + " '" + fleet.domains(*within)[*required].name + "'";
  if (!r.spec.require.empty()) what += " that satisfies require " + FormatRequirements(r.spec.require);
  if (ask.confined_only && fleet.partial_isolation_nodes() > 0) {
    what += " whose agent confines tasks in every way (the tenant is untrusted)";
  }
  return {NodeId(), what};
}

std::vector<EventBody> PlanAcceptance(const ClusterState& st, int64_t now, int64_t lead_ms,
                                      const std::vector<AcceptanceAnswer>& answers) {
  std::vector<EventBody> out;
  std::set<NodeId> taken;  // replacements planned here: one each, since the book sees them only once applied
  for (const CapacityReservation& r : st.reservations()) {
    const size_t i = r.spec.CurrentWindow(now);
    if (!InAcceptance(r, i, now, lead_ms)) continue;
    const int32_t window = static_cast<int32_t>(i);
    const bool started = now >= r.spec.windows[i].start_ms;
    std::set<NodeId> exclude = FailedIn(r, i);
    for (const NodeHold& h : r.holds[i]) {
      if (!st.agent_managed(h.node)) continue;  // no agent, nothing to check (a simulated node)
      const Node& n = st.fleet().node(h.node);
      const AcceptanceRecord* rec = r.AcceptanceOf(i, h.node);
      std::string why;
      if (rec && rec->state == AcceptanceState::kFailed) {
        // Kept for want of a free node, with its failure shown: until the window opens, tried
        // again as capacity frees (in the open window the reservation's jobs may be on it).
        if (started) continue;
        std::set<NodeId> skip = exclude;
        skip.insert(taken.begin(), taken.end());
        Replacement to = ReplacementFor(st, r, i, h.node, skip);
        if (!to.node.valid()) continue;
        taken.insert(to.node);
        const size_t cut = rec->why.find("; not replaced: ");
        out.push_back(ReservationHoldMoved{r.id, window, h.node, to.node, rec->why.substr(0, cut)});
        continue;
      }
      // An agent that registered again with other labels (a driver rolled back) may no longer
      // satisfy the reservation's `require`: a failed check like any other.
      // So may an untrusted tenant's node whose agent now reports it cannot confine tasks in
      // every way (isolation=partial, Fleet::partial_isolation), or a tenant made untrusted.
      const bool unconfined = st.fleet().partial_isolation().Test(h.node.value()) && st.Untrusted(r.spec.tenant);
      const bool unmet = unconfined || !Satisfies(st.fleet().labels(h.node), r.spec.require);
      auto unmet_why = [&] {
        if (unconfined) return std::string("its agent cannot confine tasks in every way (isolation=partial) and the tenant is untrusted");
        return "its labels (" + FormatLabels(st.fleet().labels(h.node)) + ") no longer satisfy require " +
               FormatRequirements(r.spec.require);
      };
      if (rec && rec->state == AcceptanceState::kPassed) {
        // Handed over in good order: a node that fails before the start is replaced all the same.
        if (started || (!Unfit(n.condition) && !unmet)) continue;
        why = Unfit(n.condition) ? std::string("node is ") + NodeConditionName(n.condition) : unmet_why();
      } else if (Unfit(n.condition)) {
        why = std::string("node is ") + NodeConditionName(n.condition);
      } else if (unmet) {
        why = unmet_why();
      } else if (const AcceptanceAnswer* a = AnswerOf(answers, r.id, i, h.node)) {
        if (a->passed) {
          out.push_back(ReservationNodeAccepted{r.id, window, h.node, true, ""});
          continue;
        }
        why = "failed its acceptance checks: " + a->why;
      } else if (started && !JoinedLate(r, i, h.node)) {
        why = "gave no answer by the window's start";
      } else {
        continue;  // pending
      }
      exclude.insert(h.node);
      std::set<NodeId> skip = exclude;
      skip.insert(taken.begin(), taken.end());
      Replacement to = ReplacementFor(st, r, i, h.node, skip);
      if (to.node.valid()) {
        taken.insert(to.node);
        out.push_back(ReservationHoldMoved{r.id, window, h.node, to.node, why});
      } else {
        out.push_back(ReservationNodeAccepted{r.id, window, h.node, false, why + "; not replaced: " + to.shortfall});
      }
    }
  }
  return out;
}

}  // namespace allot
