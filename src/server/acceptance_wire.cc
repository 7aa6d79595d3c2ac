#include "server/acceptance_wire.h"

#include "core/calendar.h"
#include "scheduler/acceptance.h"

namespace allot {

std::vector<AcceptanceAsk> DesiredAcceptance(const ClusterState& st, NodeId node, int64_t now, int64_t lead_ms) {
  std::vector<AcceptanceAsk> out;
  if (!node.valid()) return out;
  for (const CapacityReservation& r : st.reservations()) {
    const size_t i = r.spec.CurrentWindow(now);
    if (!AcceptanceAsked(r, i, node, now, lead_ms)) continue;
    out.push_back({r.spec.name, r.id.value(), static_cast<int>(i), r.spec.windows[i].start_ms, r.spec.windows[i].end_ms});
  }
  return out;
}

Json AcceptanceJson(const ClusterState& st, const CapacityReservation& r, size_t window) {
  Json out = Json::array();
  auto entry = [&](NodeId node, const AcceptanceRecord* rec) {
    Json j = {{"node", st.fleet().node(node).name},
              {"state", AcceptanceStateName(rec ? rec->state : AcceptanceState::kPending)}};
    if (rec && !rec->why.empty()) j["why"] = rec->why;
    if (rec && rec->replaced_by.valid()) j["replaced_by"] = st.fleet().node(rec->replaced_by).name;
    if (rec) j["at"] = FormatRfc3339(rec->at_ms);
    out.push_back(std::move(j));
  };
  for (const NodeHold& h : r.holds[window]) {
    if (st.agent_managed(h.node)) entry(h.node, r.AcceptanceOf(window, h.node));
  }
  for (const AcceptanceRecord& a : r.acceptance) {
    if (static_cast<size_t>(a.window) == window && a.state == AcceptanceState::kReplaced) entry(a.node, &a);
  }
  return out;
}

}  // namespace allot
