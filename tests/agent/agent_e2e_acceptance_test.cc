// Acceptance before hand-off end to end (issue 16): allotd and two real allot-agents on the fake
// NVML. A reservation of 8 GPUs holds the first node, whose agent runs --acceptance-command false:
// it reports the failure naming the command, allotd moves the hold to the second node, whose
// diagnostic passes, and GET /v1/reservations/NAME shows both. Needs root, as the other agent
// end-to-end tests.
#include "agent/agent_e2e_fixture.h"
#include "core/calendar.h"

#include <cstdio>

namespace allot {
namespace {

using testing::AgentE2eTest;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST_F(AgentE2eTest, AFailingAcceptanceCommandMovesTheBookedHoldToANodeThatPasses) {
  ASSERT_EQ(::geteuid(), 0u) << "this test needs root, as the other agent end-to-end tests";
  StartAllotd("tenants:\n  - {path: research}\n", {"--acceptance-lead", "1m"});
  StartAgent("acc-a", "", {"--acceptance-command", "false"});
  WaitReady("acc-a");
  StartAgent("acc-b", "", {"--acceptance-command", "true"});
  WaitReady("acc-b");
  // Within the lead time from the start: acceptance runs at once. Both nodes are free; the
  // booking takes the first.
  const int64_t start = NowMs() + 40000;
  Json booking = {{"name", "own"}, {"tenant", "research"}, {"model", "H100-80GB"}, {"gpus", 8},
                  {"start", FormatRfc3339(start)}, {"duration", "1h"}};
  auto [bc, booked] = Call("POST", "/v1/reservations", booking.dump());
  ASSERT_EQ(bc, 201) << booked.dump();
  ASSERT_EQ(booked["windows"][0]["holds"][0]["node"], "acc-a") << booked.dump();

  Json r;
  ASSERT_TRUE(WaitFor(30, [&] {
    r = Get("/v1/reservations/own");
    const Json a = r["windows"][0].value("acceptance", Json::array());
    return a.size() == 2 && a[0].value("state", "") == "passed";
  })) << Get("/v1/reservations/own").dump();
  EXPECT_LT(NowMs(), start) << "settled before the window";
  EXPECT_EQ(r["windows"][0]["holds"][0]["node"], "acc-b");
  const Json& a = r["windows"][0]["acceptance"];
  EXPECT_EQ(a[0]["node"], "acc-b");
  EXPECT_EQ(a[1]["node"], "acc-a");
  EXPECT_EQ(a[1]["state"], "replaced");
  EXPECT_EQ(a[1]["replaced_by"], "acc-b");
  EXPECT_NE(a[1].value("why", "").find("cmd:false: exited with code 1"), std::string::npos) << a.dump();
  // allot reservations show says it in words.
  const std::string cmd = std::string(ALLOT_BINARY) + " reservations show own --server http://127.0.0.1:" +
                          std::to_string(port_) + " --token " + admin_token_ + " 2>&1";
  std::string shown;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) shown.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << shown;
  EXPECT_NE(shown.find("acceptance of acc-b: passed at "), std::string::npos) << shown;
  EXPECT_NE(shown.find("acceptance of acc-a: replaced by acc-b at "), std::string::npos) << shown;
  EXPECT_NE(shown.find("      why: failed its acceptance checks: cmd:false: exited with code 1"), std::string::npos) << shown;
}

}  // namespace
}  // namespace allot
