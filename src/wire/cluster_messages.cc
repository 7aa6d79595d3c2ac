#include "wire/cluster_messages.h"

#include "wire/json_fields.h"

namespace allot {
namespace {

constexpr size_t kMinMungeKeyBytes = 32;    // munged refuses a shorter key
constexpr size_t kMaxMungeKeyBytes = 1024;  // mungekey's default size; nothing needs more

std::string ToHex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The munge key's bytes from its lowercase hex, or a refusal that never quotes the key.
Result<std::string> FromHex(const std::string& hex, const std::string& field) {
  if (hex.size() % 2 != 0 || hex.size() < 2 * kMinMungeKeyBytes || hex.size() > 2 * kMaxMungeKeyBytes) {
    return Err(InvalidArgument(field + ": " + std::to_string(hex.size()) + " hex digits; expected an even number from " +
                               std::to_string(2 * kMinMungeKeyBytes) + " to " + std::to_string(2 * kMaxMungeKeyBytes)));
  }
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Err(InvalidArgument(field + ": not lowercase hex; expected 0-9 and a-f only"));
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// "members", "controller" and "munge_key": all three or none.
void ParseSlurmMembers(JsonFields& c, const Json& entry, ClusterAssignment& a) {
  const Json& list = c.Array("members");
  for (size_t k = 0; k < list.size() && c.ok(); ++k) {
    JsonFields m(list[k], c.Path("members") + "[" + std::to_string(k) + "]");
    ClusterMember n;
    n.node = m.Str("node", true);
    n.address = m.Str("address", true);
    n.slurmd_port = static_cast<int>(m.Int("slurmd_port", 0, 1, 65535));
    n.gpus = static_cast<int>(m.Int("gpus", 0, 0, 1024));
    n.cpus = static_cast<int>(m.Int("cpus", 0, 0, 1'000'000));
    n.memory_mib = m.Int("memory_mib", 0, 0, INT64_C(1) << 40);
    if (m.ok() && n.slurmd_port == 0) m.Fail("slurmd_port", "missing");
    if (m.ok() && (k >= a.nodes.size() || n.node != a.nodes[k])) {
      m.Fail("node", "'" + n.node + "' is not nodes[" + std::to_string(k) + "]" +
                         (k < a.nodes.size() ? " '" + a.nodes[k] + "'" : "") + "; expected the booked nodes in order");
    }
    if (!m.ok()) return c.Fail(m.error());
    a.members.push_back(std::move(n));
  }
  if (c.ok() && !a.members.empty() && a.members.size() != a.nodes.size()) {
    c.Fail("members", std::to_string(a.members.size()) + " entries; expected one per node (" +
                          std::to_string(a.nodes.size()) + ")");
  }
  const bool has_controller = c.Has("controller"), has_key = c.Has("munge_key");
  if (c.ok() && (a.members.empty() != !has_controller || a.members.empty() != !has_key)) {
    c.Fail(a.members.empty() ? "members" : !has_controller ? "controller" : "munge_key",
           "missing; expected members, controller and munge_key together");
  }
  if (!c.ok() || a.members.empty()) return;
  JsonFields ctl(entry["controller"], c.Path("controller"));
  a.controller_host = ctl.Str("host", true);
  a.controller_port = static_cast<int>(ctl.Int("port", 0, 1, 65535));
  if (ctl.ok() && a.controller_port == 0) ctl.Fail("port", "missing");
  if (!ctl.ok()) return c.Fail(ctl.error());
  auto key = FromHex(c.Str("munge_key"), c.Path("munge_key"));
  if (!key) return c.Fail(key.error());
  a.munge_key = std::move(*key);
  a.uid = static_cast<uint32_t>(c.Int("uid", 0, kClusterUidBase, INT64_C(2147483647)));
}

}  // namespace

Json ClusterAssignmentsJson(const std::vector<ClusterAssignment>& clusters) {
  Json out = Json::array();
  for (const ClusterAssignment& c : clusters) {
    out.push_back({{"reservation", c.reservation}, {"reservation_id", c.reservation_id}, {"window", c.window},
                   {"tenant", c.tenant}, {"orchestrator", c.orchestrator}, {"nodes", c.nodes}, {"start", c.start_ms},
                   {"end", c.end_ms}, {"ssh_port", c.ssh_port}, {"slurmctld_port", c.slurmctld_port},
                   {"slurmd_port", c.slurmd_port}, {"keys", c.keys}, {"grace_ms", c.grace_ms}});
    if (c.members.empty()) continue;
    Json members = Json::array();
    for (const ClusterMember& m : c.members) {
      members.push_back({{"node", m.node}, {"address", m.address}, {"slurmd_port", m.slurmd_port}, {"gpus", m.gpus},
                         {"cpus", m.cpus}, {"memory_mib", m.memory_mib}});
    }
    out.back()["members"] = std::move(members);
    out.back()["controller"] = {{"host", c.controller_host}, {"port", c.controller_port}};
    out.back()["munge_key"] = ToHex(c.munge_key);
    if (c.uid != 0) out.back()["uid"] = c.uid;
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
    if (c.ok()) ParseSlurmMembers(c, list[i], a);
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
