#include "server/cluster_wire.h"

#include <sodium.h>

namespace allot {
namespace {

constexpr int kMungeKeyBlocks = 32;  // of 32 bytes: 1024 bytes

// Every node's entry, as each node's slurm.conf names it. CPUs: whole ones, rounded (the fleet
// counts millicores); at least one.
std::vector<ClusterMember> Members(const ClusterState& st, const std::vector<NodeHold>& holds, uint32_t reservation,
                                   const ClusterPorts& ports, const AgentRegistry* agents) {
  std::vector<ClusterMember> out;
  for (size_t i = 0; i < holds.size(); ++i) {
    const Node& n = st.fleet().node(holds[i].node);
    ClusterMember m;
    m.node = n.name;
    m.address = n.name;
    if (agents) {
      if (std::string address = agents->Address(n.name); !address.empty()) m.address = std::move(address);
    }
    m.slurmd_port = ports.Ssh(reservation, static_cast<int>(i)) + 2;
    m.gpus = n.gpu_count;
    m.cpus = static_cast<int>(std::max<int64_t>(1, (n.cpu + 500) / 1000));
    m.memory_mib = n.memory;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::string ClusterMungeKey(const std::string& secret, uint32_t reservation_id, int window, int64_t start_ms) {
  static const bool ready = sodium_init() >= 0;
  ALLOT_CHECK(ready);
  std::string key;
  key.reserve(kMungeKeyBlocks * crypto_auth_hmacsha256_BYTES);
  const std::string label = "allot munge key\n" + std::to_string(reservation_id) + "\n" + std::to_string(window) + "\n" +
                            std::to_string(start_ms) + "\n";
  for (int block = 0; block < kMungeKeyBlocks; ++block) {
    const std::string message = label + std::to_string(block);
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
    crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(message.data()), message.size());
    crypto_auth_hmacsha256_final(&st, mac);
    key.append(reinterpret_cast<const char*>(mac), sizeof mac);
    sodium_memzero(mac, sizeof mac);
  }
  return key;
}

std::vector<ClusterAssignment> DesiredClusters(const ClusterState& st, NodeId node, int64_t now, const ClusterPorts& ports,
                                               const ClusterSources& sources) {
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
    if (r.spec.orchestrator == Orchestrator::kSlurm && !sources.secret.empty()) {
      a.members = Members(st, holds, a.reservation_id, ports, sources.agents);
      a.controller_host = a.members.front().address;
      a.controller_port = ports.Ssh(a.reservation_id, 0) + 1;
      a.munge_key = ClusterMungeKey(sources.secret, a.reservation_id, w, a.start_ms);
      a.uid = kClusterUidBase + r.spec.tenant.value();
    }
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
