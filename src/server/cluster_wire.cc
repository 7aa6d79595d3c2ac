#include "server/cluster_wire.h"

namespace allot {

std::vector<ClusterAssignment> DesiredClusters(const ClusterState& st, NodeId node, int64_t now, const ClusterPorts& ports) {
  std::vector<ClusterAssignment> out;
  if (!node.valid()) return out;
  for (const CapacityReservation& r : st.reservations()) {
    if (r.state != ReservationState::kConfirmed || r.spec.nodes == 0) continue;
    const size_t current = r.spec.CurrentWindow(now);
    if (current == r.spec.windows.size()) continue;
    const int w = static_cast<int>(current);
    const std::vector<NodeHold>& holds = r.holds[static_cast<size_t>(w)];
    int index = -1;
    for (size_t i = 0; i < holds.size(); ++i) {
      if (holds[i].node == node) index = static_cast<int>(i);
    }
    if (index < 0) continue;
    ClusterAssignment a;
    a.reservation = r.spec.name;
    a.reservation_id = r.id.value();
    a.window = w;
    a.tenant = st.tenants().tenant(r.spec.tenant).path;
    a.orchestrator = OrchestratorName(r.spec.orchestrator);
    for (const NodeHold& h : holds) a.nodes.push_back(st.fleet().node(h.node).name);
    a.start_ms = r.spec.windows[static_cast<size_t>(w)].start_ms;
    a.end_ms = r.spec.windows[static_cast<size_t>(w)].end_ms;
    a.ssh_port = ports.Ssh(a.reservation_id, index);
    a.slurmctld_port = a.ssh_port + 1;
    a.slurmd_port = a.ssh_port + 2;
    a.keys = st.SshKeyLinesOf(r.spec.tenant);
    a.grace_ms = kClusterStopGraceMs;
    out.push_back(std::move(a));
  }
  return out;
}

Json ClusterAccessJson(const ClusterState& st, const CapacityReservation& r, int64_t now, const AgentRegistry& agents) {
  Json out = Json::array();
  if (r.spec.nodes == 0) return out;
  const size_t current = r.spec.CurrentWindow(now);
  const bool over = current == r.spec.windows.size();
  int w = over ? -1 : static_cast<int>(current);
  if (over) w = static_cast<int>(r.spec.windows.size()) - 1;  // the last: what its agents did at its end
  if (w < 0) return out;
  for (const NodeHold& h : r.holds[static_cast<size_t>(w)]) {
    const std::string& name = st.fleet().node(h.node).name;
    const char* state = over ? "over" : now < r.spec.windows[static_cast<size_t>(w)].start_ms ? "waiting" : "unreported";
    Json node = {{"node", name}, {"state", state}};
    if (auto s = agents.Get(name)) {
      for (const ClusterReport& c : s->clusters) {
        if (c.reservation_id != r.id.value() || c.window != w) continue;
        node["state"] = c.state;
        if (!c.ssh_host.empty()) node["ssh"] = {{"host", c.ssh_host}, {"port", c.ssh_port}, {"user", c.user}};
        if (!c.login_details.empty()) node["login_details"] = c.login_details;
        if (!c.error.empty()) node["error"] = c.error;
      }
    }
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace allot
