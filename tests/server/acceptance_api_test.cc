// Acceptance of booked nodes through allotd (issue 16): a booked node's agent reports a failed
// acceptance and the reservation's hold moves to a free node (journaled, audited, shown by GET
// /v1/reservations/NAME, and the new node is asked in turn); with nothing free, the hold stays
// and GET names the node and why.
#include "daemon/acceptance_supervisor.h"
#include "server/acceptance_wire.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kLead = 10 * 60 * 1000;

// The fixture's n0 and n1, and a third node n2, all registered by agents and ready.
class AcceptanceApiTest : public testing::TwoTenantsFixture {
 protected:
  ApiOptions Options() override {
    ApiOptions o = TwoTenantsFixture::Options();
    o.agents = agents_;
    o.acceptance_lead_ms = kLead;
    return o;
  }
  void SetUp() override {
    TwoTenantsFixture::SetUp();
    for (int i = 0; i < 3; ++i) {
      NodeSpec n{"n" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
      ASSERT_TRUE(ctl_->Execute(NodeRegistered{n}).has_value());
      NodeId id = ctl_->Read([&](const ClusterState& st) { return st.fleet().Find(n.name); });
      ASSERT_TRUE(ctl_->Execute(NodeConditionChanged{id, NodeCondition::kReady}).has_value());
      AgentSession s;
      s.node = n.name;
      agents_->Registered(s, now_);
    }
  }
  // Books `nodes` whole nodes for org/a from At(1) for 2h; returns the held node names.
  std::vector<std::string> Book(int nodes) {
    auto [status, r] = Call("POST", "/v1/reservations", alice_,
                            R"({"name": "own", "tenant": "org/a", "model": "H100-80GB", "nodes": )" + std::to_string(nodes) +
                                R"(, "start": ")" + At(1) + R"(", "duration": "2h"})");
    EXPECT_EQ(status, 201) << r;
    std::vector<std::string> held;
    for (const Json& h : r["windows"][0]["holds"]) held.push_back(h["node"]);
    return held;
  }
  std::vector<AcceptanceAsk> AsksOf(const std::string& node) {
    return ctl_->Read([&](const ClusterState& st) { return DesiredAcceptance(st, st.fleet().Find(node), now_, kLead); });
  }

  std::shared_ptr<AgentRegistry> agents_ = std::make_shared<AgentRegistry>();
};

TEST_F(AcceptanceApiTest, AFailedAcceptanceMovesTheHoldToAFreeNodeJournaledAuditedAndShown) {
  const std::vector<std::string> held = Book(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_TRUE(AsksOf(held[0]).empty()) << "not asked before the lead time";
  now_ = kT0 + 3'600'000 - 5 * 60 * 1000;  // 5 minutes before the window
  auto asks = AsksOf(held[0]);
  ASSERT_EQ(asks.size(), 1u);
  EXPECT_EQ(asks[0].reservation, "own");
  EXPECT_EQ(asks[0].start_ms, kT0 + 3'600'000);
  // The node's agent answers: its diagnostic failed.
  agents_->Acceptance(held[0], {{asks[0].reservation_id, 0, "failed", {{"cmd:false", "exited with code 1"}}, now_}});
  AcceptanceSupervisor supervisor(*ctl_, agents_, kLead);
  auto done = supervisor.Check();
  ASSERT_EQ(done.size(), 1u);
  const auto& moved = std::get<ReservationHoldMoved>(done[0]);
  const std::string to = ctl_->Read([&](const ClusterState& st) { return st.fleet().node(moved.to).name; });
  EXPECT_NE(to, held[0]);
  EXPECT_TRUE(supervisor.Check().empty()) << "settled once";

  auto [status, r] = Call("GET", "/v1/reservations/own", alice_);
  ASSERT_EQ(status, 200) << r;
  EXPECT_EQ(r["windows"][0]["holds"][0]["node"], to) << r;
  const Json& acceptance = r["windows"][0]["acceptance"];
  ASSERT_EQ(acceptance.size(), 2u) << r;
  EXPECT_EQ(acceptance[0]["node"], to);
  EXPECT_EQ(acceptance[0]["state"], "pending");
  EXPECT_EQ(acceptance[1]["node"], held[0]);
  EXPECT_EQ(acceptance[1]["state"], "replaced");
  EXPECT_EQ(acceptance[1]["replaced_by"], to);
  EXPECT_EQ(acceptance[1]["why"], "failed its acceptance checks: cmd:false: exited with code 1");
  // The new node is asked in turn; the old one no longer.
  EXPECT_EQ(AsksOf(to).size(), 1u);
  EXPECT_TRUE(AsksOf(held[0]).empty());

  // In the journal (the watch stream, which the tenant may read) and the audit log.
  auto events = Call("GET", "/v1/events?since=0", alice_).second["events"];
  bool journaled = false;
  for (const Json& e : events) {
    if (e["type"] == "ReservationHoldMoved") {
      journaled = true;
      EXPECT_EQ(e["reservation"], "own");
      EXPECT_EQ(e["node"], held[0]);
      EXPECT_EQ(e["to"], to);
    }
  }
  EXPECT_TRUE(journaled) << events;
  auto audit = Get("/v1/audit").second["records"];
  bool audited = false;
  for (const Json& a : audit) {
    if (a["action"] == "reservation.hold_move") {
      audited = true;
      EXPECT_EQ(a["tenant"], "org/a");
      EXPECT_EQ(a["target"], "own windows[0] " + held[0] + " -> " + to + ": failed its acceptance checks: cmd:false: exited with code 1");
    }
  }
  EXPECT_TRUE(audited) << audit;

  // The new node passes: settled and shown.
  agents_->Acceptance(to, {{asks[0].reservation_id, 0, "passed", {}, now_}});
  ASSERT_EQ(supervisor.Check().size(), 1u);
  r = Call("GET", "/v1/reservations/own", alice_).second;
  EXPECT_EQ(r["windows"][0]["acceptance"][0]["state"], "passed") << r;
}

TEST_F(AcceptanceApiTest, WithNoFreeNodeTheHoldStaysAndGetSaysWhichNodeFailedAndWhy) {
  const std::vector<std::string> held = Book(3);
  ASSERT_EQ(held.size(), 3u);
  now_ = kT0 + 3'600'000 - kLead;
  const uint32_t id = AsksOf(held[1])[0].reservation_id;
  agents_->Acceptance(held[1], {{id, 0, "failed", {{"nvml.ecc", "GPU 3: 2 uncorrected ECC error(s)"}}, now_}});
  AcceptanceSupervisor supervisor(*ctl_, agents_, kLead);
  ASSERT_EQ(supervisor.Check().size(), 1u);
  auto [status, r] = Call("GET", "/v1/reservations/own", alice_);
  ASSERT_EQ(status, 200) << r;
  EXPECT_EQ(r["windows"][0]["holds"].size(), 3u);
  EXPECT_EQ(r["windows"][0]["holds"][1]["node"], held[1]) << "the hold is kept";
  const Json& a = r["windows"][0]["acceptance"][1];
  EXPECT_EQ(a["node"], held[1]);
  EXPECT_EQ(a["state"], "failed");
  EXPECT_EQ(a["why"], "failed its acceptance checks: nvml.ecc: GPU 3: 2 uncorrected ECC error(s); not replaced: no other "
                      "ready node of 8 H100-80GB GPUs is wholly free from " + At(1) + " to " + At(3));
  EXPECT_EQ(r["windows"][0]["acceptance"][0]["state"], "pending");
  // At the start, the silent nodes fail too: nothing to replace them with either.
  now_ = kT0 + 3'600'000;
  EXPECT_EQ(supervisor.Check().size(), 2u);
  r = Call("GET", "/v1/reservations/own", alice_).second;
  EXPECT_EQ(r["windows"][0]["acceptance"][0]["state"], "failed");
  EXPECT_NE(r["windows"][0]["acceptance"][0]["why"].get<std::string>().find("gave no answer by the window's start"),
            std::string::npos);
}

}  // namespace
}  // namespace allot
