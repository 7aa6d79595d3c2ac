#include "wire/cluster_messages.h"

#include "wire/json_fields.h"

namespace allot {

Json ClusterAssignmentsJson(const std::vector<ClusterAssignment>& clusters) {
  Json out = Json::array();
  for (const ClusterAssignment& c : clusters) {
    out.push_back({{"reservation", c.reservation}, {"reservation_id", c.reservation_id}, {"window", c.window},
                   {"tenant", c.tenant}, {"orchestrator", c.orchestrator}, {"nodes", c.nodes}, {"start", c.start_ms},
                   {"end", c.end_ms}, {"ssh_port", c.ssh_port}, {"slurmctld_port", c.slurmctld_port},
                   {"slurmd_port", c.slurmd_port}, {"keys", c.keys}, {"grace_ms", c.grace_ms}});
  }
  return out;
}

Result<std::vector<ClusterAssignment>> ParseClusterAssignments(const Json& body) {
  JsonFields f(body, "assignments");
  std::vector<ClusterAssignment> out;
  const Json& list = f.Array("clusters");
  for (size_t i = 0; i < list.size() && f.ok(); ++i) {
    JsonFields c(list[i], f.Path("clusters") + "[" + std::to_string(i) + "]");
    ClusterAssignment a;
    a.reservation = c.Str("reservation", true);
    a.reservation_id = static_cast<uint32_t>(c.Int("reservation_id", 0, 0, UINT32_MAX));
    a.window = static_cast<int>(c.Int("window", 0, 0, 1'000'000));
    a.tenant = c.Str("tenant", true);
    a.orchestrator = c.Str("orchestrator", true);
    if (c.ok() && a.orchestrator != "none" && a.orchestrator != "slurm" && a.orchestrator != "hook") {
      c.Fail("orchestrator", "'" + a.orchestrator + "': expected none, slurm or hook");
    }
    a.nodes = c.Strings("nodes");
    if (c.ok() && a.nodes.empty()) c.Fail("nodes", "empty; expected the booked nodes");
    a.start_ms = c.Int("start", 0, 0);
    a.end_ms = c.Int("end", 0, 0);
    if (c.ok() && a.end_ms <= a.start_ms) c.Fail("end", "not after start");
    a.ssh_port = static_cast<int>(c.Int("ssh_port", 0, 0, 65535));
    a.slurmctld_port = static_cast<int>(c.Int("slurmctld_port", 0, 0, 65535));
    a.slurmd_port = static_cast<int>(c.Int("slurmd_port", 0, 0, 65535));
    a.keys = c.Strings("keys");
    a.grace_ms = c.Int("grace_ms", 10000, 0, 3'600'000);
    if (!c.ok()) return Err(c.error());
    out.push_back(std::move(a));
  }
  if (!f.ok()) return Err(f.error());
  return out;
}

Json ClusterReportsJson(const std::vector<ClusterReport>& reports) {
  Json out = Json::array();
  for (const ClusterReport& r : reports) {
    Json j = {{"reservation", r.reservation}, {"reservation_id", r.reservation_id}, {"window", r.window}, {"state", r.state}};
    if (!r.ssh_host.empty()) {
      j["ssh_host"] = r.ssh_host;
      j["ssh_port"] = r.ssh_port;
    }
    if (!r.user.empty()) j["user"] = r.user;
    if (!r.login_details.empty()) j["login_details"] = r.login_details;
    if (!r.error.empty()) j["error"] = r.error;
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<ClusterReport>> ParseClusterReports(const Json& heartbeat) {
  JsonFields f(heartbeat, "heartbeat");
  std::vector<ClusterReport> out;
  const Json& list = f.Array("clusters");
  if (list.size() > 64) return Err(InvalidArgument("heartbeat.clusters: " + std::to_string(list.size()) + " entries; expected at most 64"));
  for (size_t i = 0; i < list.size() && f.ok(); ++i) {
    JsonFields c(list[i], f.Path("clusters") + "[" + std::to_string(i) + "]");
    ClusterReport r;
    r.reservation = c.Str("reservation", true);
    r.reservation_id = static_cast<uint32_t>(c.Int("reservation_id", 0, 0, UINT32_MAX));
    r.window = static_cast<int>(c.Int("window", 0, 0, 1'000'000));
    r.state = c.Str("state", true);
    r.ssh_host = c.Str("ssh_host");
    r.ssh_port = static_cast<int>(c.Int("ssh_port", 0, 0, 65535));
    r.user = c.Str("user");
    r.login_details = c.Str("login_details");
    r.error = c.Str("error");
    if (c.ok() && r.login_details.size() + r.error.size() > 16384) c.Fail("login_details", "over 16 KiB");
    if (!c.ok()) return Err(c.error());
    out.push_back(std::move(r));
  }
  if (!f.ok()) return Err(f.error());
  return out;
}

}  // namespace allot
