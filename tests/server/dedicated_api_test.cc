// Dedicated clusters over the API (issue 16): a reservation's orchestrator (whole nodes only, named
// when wrong), a tenant's SSH keys (registered with their fingerprint, foreign ones invisible, bad
// ones named field by field and changing nothing), and what allotd tells a booked node's agent to
// run in the window.
#include <fstream>
#include <iterator>

#include "core/calendar.h"
#include "server/cluster_wire.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

constexpr const char* kKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOR9qw6iiYjVfNWcjmJGO29aNDKWu141k3/DAoqj3QfB alice@laptop";
// ssh-keygen -lf of kKey.
constexpr const char* kFingerprint = "SHA256:G3zzKxgjD8u2DZxHXVgqDf8g3D6qyqI1GSI5RI2Dpvw";

class DedicatedApiTest : public testing::TwoTenantsFixture {
 protected:
  static std::string Booking(const std::string& capacity, const std::string& orchestrator) {
    return R"({"name": "own", "tenant": "org/a", "model": "H100-80GB", )" + capacity + R"(, "start": ")" + At(1) +
           R"(", "duration": "2h")" + (orchestrator.empty() ? "" : R"(, "orchestrator": ")" + orchestrator + "\"") + "}";
  }
  static std::string KeyBody(const std::string& tenant, const std::string& key) {
    return Json{{"tenant", tenant}, {"key", key}}.dump();
  }
};

TEST_F(DedicatedApiTest, AnOrchestratorIsBookedWithWholeNodesOnlyAndShown) {
  auto [s1, r1] = Call("POST", "/v1/reservations", alice_, Booking(R"("gpus": 8)", "slurm"));
  ASSERT_EQ(s1, 400) << r1;
  EXPECT_EQ(r1["error"]["message"], "body: orchestrator: 'slurm' needs whole nodes; expected nodes: N instead of gpus");
  auto [s2, r2] = Call("POST", "/v1/reservations", alice_, Booking(R"("nodes": 1)", "kubernetes"));
  ASSERT_EQ(s2, 400) << r2;
  EXPECT_EQ(r2["error"]["message"], "body: orchestrator: 'kubernetes' is not valid; expected none, slurm or hook");
  EXPECT_EQ(Call("GET", "/v1/reservations", alice_).second["reservations"].size(), 0u) << "a refusal books nothing";
  auto [s3, r3] = Call("POST", "/v1/reservations", alice_, Booking(R"("nodes": 1)", "slurm"));
  ASSERT_EQ(s3, 201) << r3;
  EXPECT_EQ(r3["orchestrator"], "slurm");
  auto [s4, r4] = Call("GET", "/v1/reservations/own", alice_);
  ASSERT_EQ(s4, 200) << r4;
  EXPECT_EQ(r4["orchestrator"], "slurm");
  EXPECT_EQ(r4["access"][0]["state"], "waiting") << r4;
  // By default, none: the nodes run allot jobs.
  auto [s5, r5] = Call("POST", "/v1/reservations", bob_,
                       R"({"name": "pool", "tenant": "org/b", "model": "H100-80GB", "nodes": 1, "start": ")" + At(1) +
                           R"(", "duration": "2h"})");
  ASSERT_EQ(s5, 201) << r5;
  EXPECT_EQ(r5["orchestrator"], "none");
}

TEST_F(DedicatedApiTest, AKeyIsRegisteredWithItsFingerprintForItsTenantOnlyAndRemoved) {
  auto [s1, r1] = Call("POST", "/v1/keys", alice_, KeyBody("org/a", std::string(kKey) + "\n"));
  ASSERT_EQ(s1, 201) << r1;
  EXPECT_EQ(r1["fingerprint"], kFingerprint);
  EXPECT_EQ(r1["type"], "ssh-ed25519");
  EXPECT_EQ(r1["comment"], "alice@laptop");
  EXPECT_EQ(r1["tenant"], "org/a");
  const std::string id = std::to_string(r1["id"].get<int>());
  // The same key again is a conflict; another tenant's member sees nothing of it.
  EXPECT_EQ(Call("POST", "/v1/keys", alice_, KeyBody("org/a", kKey)).first, 409);
  EXPECT_EQ(Call("GET", "/v1/keys", bob_).second["keys"].size(), 0u);
  EXPECT_EQ(Call("DELETE", "/v1/keys/" + id, bob_).first, 404) << "a foreign key is as missing as none";
  auto [s2, r2] = Call("POST", "/v1/keys", bob_, KeyBody("org/a", kKey));
  EXPECT_EQ(s2, 400) << r2;
  EXPECT_EQ(r2["error"]["message"], "body: tenant: unknown tenant 'org/a'");
  auto listed = Call("GET", "/v1/keys", alice_).second["keys"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["fingerprint"], kFingerprint);
  // The key reaches the agent of a booked node in the window.
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Booking(R"("nodes": 1)", "slurm")).first, 201);
  auto desired = ctl_->Read([&](const ClusterState& st) {
    const CapacityReservation& r = st.reservations()[0];
    return DesiredClusters(st, r.holds[0][0].node, 1'700'000'000'000 + 3'600'000 + 1, ClusterPorts{40000});
  });
  ASSERT_EQ(desired.size(), 1u);
  EXPECT_EQ(desired[0].orchestrator, "slurm");
  EXPECT_EQ(desired[0].tenant, "org/a");
  EXPECT_EQ(desired[0].keys, (std::vector<std::string>{kKey}));
  EXPECT_EQ(desired[0].ssh_port, 40000) << "reservation 0, node 0: slot 0";
  EXPECT_EQ(desired[0].slurmctld_port, 40001);
  EXPECT_EQ(desired[0].slurmd_port, 40002);
  EXPECT_EQ(desired[0].end_ms - desired[0].start_ms, 2 * 3'600'000);
  // Removed: listed no more, and gone from what agents are told.
  auto [s3, r3] = Call("DELETE", "/v1/keys/" + id, alice_);
  ASSERT_EQ(s3, 200) << r3;
  EXPECT_EQ(Call("GET", "/v1/keys", alice_).second["keys"].size(), 0u);
  EXPECT_EQ(Call("DELETE", "/v1/keys/" + id, alice_).first, 404);
  // Both changes are in the audit log.
  int added = 0, removed = 0;
  const Json audit = Get("/v1/audit").second["records"];  // a copy: the reply is a temporary
  for (const auto& r : audit) {
    if (r["outcome"] != "ok") continue;
    added += r["action"] == "key.add";
    removed += r["action"] == "key.remove";
  }
  EXPECT_EQ(added, 1);
  EXPECT_EQ(removed, 1);
}

TEST_F(DedicatedApiTest, BothBookedNodesOfATwoNodeSlurmGetEveryNodeTheFirstAsControllerAndOneMungeKey) {
  ASSERT_EQ(Call("POST", "/v1/reservations", alice_, Booking(R"("nodes": 2)", "slurm")).first, 201);
  AgentRegistry agents;
  AgentSession session;
  session.node = "n1";
  session.address = "10.0.0.11";
  agents.Registered(session, 0);
  const std::string secret(32, 's');
  const int64_t now = 1'700'000'000'000 + 3'600'000 + 1;
  uint32_t tenant = 0;
  auto desired = ctl_->Read([&](const ClusterState& st) {
    const CapacityReservation& r = st.reservations()[0];
    tenant = r.spec.tenant.value();
    std::vector<std::vector<ClusterAssignment>> out;
    for (const NodeHold& h : r.holds[0]) out.push_back(DesiredClusters(st, h.node, now, ClusterPorts{40000}, {&agents, secret}));
    return out;
  });
  ASSERT_EQ(desired.size(), 2u);
  ASSERT_EQ(desired[0].size(), 1u);
  ASSERT_EQ(desired[1].size(), 1u);
  const ClusterAssignment &first = desired[0][0], &second = desired[1][0];
  ASSERT_EQ(first.nodes.size(), 2u);
  ASSERT_EQ(first.members.size(), 2u);
  // Every node, in the holds' order: its registered address (its name while it has none), its
  // slurmd port (slot i: 40000 + 3i + 2), GPUs, whole CPUs and memory.
  for (size_t i = 0; i < 2; ++i) {
    const ClusterMember& m = first.members[i];
    EXPECT_EQ(m.node, first.nodes[i]);
    EXPECT_EQ(m.address, m.node == "n1" ? "10.0.0.11" : m.node);
    EXPECT_EQ(m.slurmd_port, 40000 + 3 * static_cast<int>(i) + 2);
    EXPECT_EQ(m.gpus, 8);
    EXPECT_EQ(m.cpus, 64);
    EXPECT_EQ(m.memory_mib, 512 * 1024);
  }
  EXPECT_EQ(first.controller_host, first.members[0].address);
  EXPECT_EQ(first.controller_port, 40001) << "the first node's slurmctld port";
  EXPECT_EQ(first.munge_key.size(), 1024u);
  // The second node is told the same cluster (its own ports aside).
  EXPECT_EQ(second.members, first.members);
  EXPECT_EQ(second.controller_host, first.controller_host);
  EXPECT_EQ(second.controller_port, first.controller_port);
  EXPECT_EQ(second.munge_key, first.munge_key) << "one key for the window";
  EXPECT_EQ(first.uid, kClusterUidBase + tenant);
  EXPECT_EQ(second.uid, first.uid) << "one uid for the cluster on every node, whatever each node's task uids";
  EXPECT_EQ(second.slurmd_port, 40005);
  // The key: another window, reservation or secret has another; the same inputs the same one.
  EXPECT_EQ(ClusterMungeKey(secret, first.reservation_id, 0, first.start_ms), first.munge_key);
  EXPECT_NE(ClusterMungeKey(secret, first.reservation_id, 1, first.start_ms), first.munge_key);
  EXPECT_NE(ClusterMungeKey(secret, first.reservation_id + 1, 0, first.start_ms), first.munge_key);
  EXPECT_NE(ClusterMungeKey(std::string(32, 't'), first.reservation_id, 0, first.start_ms), first.munge_key);
  // Without a secret (an API without allotd's cluster-key): each node's Slurm of its own, as before.
  auto plain = ctl_->Read([&](const ClusterState& st) {
    return DesiredClusters(st, st.reservations()[0].holds[0][0].node, now, ClusterPorts{40000});
  });
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_TRUE(plain[0].members.empty());
  EXPECT_TRUE(plain[0].munge_key.empty());
  // Never in the journal: derived on each call.
  std::string journal;
  for (const char* file : {"journal.db", "journal.db-wal"}) {
    std::ifstream in(dir_ / file, std::ios::binary);
    journal.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(journal.find("own"), std::string::npos) << "the reservation's name is in the journal";
  EXPECT_EQ(journal.find(first.munge_key.substr(0, 32)), std::string::npos);
}

TEST_F(DedicatedApiTest, ABadKeyIsNamedFieldByFieldAndChangesNothing) {
  struct Case {
    std::string body, says;
  };
  const Case cases[] = {
      {KeyBody("org/a", "ssh-dss AAAAB3NzaC1kc3MAAACBAP"), "body: key: type"},
      {KeyBody("org/a", "command=\"rm -rf /\" " + std::string(kKey)), "body: key: options"},
      {KeyBody("org/a", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOR9qw6iiYjVfNWcjmJGO29aNDKWu141k3/DAoqj3Q== x"), "body: key: key"},
      {KeyBody("org/a", std::string(kKey) + "\nssh-ed25519 AAAA"), "body: key: line"},
      {R"({"tenant": "org/a"})", "body: key: missing"},
      {R"({"tenant": "org/a", "key": "x", "port": 22})", "body: port: unknown field"},
  };
  for (const Case& c : cases) {
    auto [status, reply] = Call("POST", "/v1/keys", alice_, c.body);
    EXPECT_EQ(status, 400) << c.body << ": " << reply;
    std::string message = reply["error"].value("message", "");
    EXPECT_EQ(message.rfind(c.says, 0), 0u) << c.body << " → " << message;
  }
  EXPECT_EQ(Call("GET", "/v1/keys", admin_).second["keys"].size(), 0u);
}

}  // namespace
}  // namespace allot
