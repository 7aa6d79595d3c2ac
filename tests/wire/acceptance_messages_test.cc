// The acceptance part of the agent protocol (wire/acceptance_messages.h): asks and reports both
// ways unchanged, absent from an older agent's heartbeat or an older allotd's answer, and refused
// naming the field when malformed.
#include "wire/acceptance_messages.h"

#include <gtest/gtest.h>

#include "wire/agent_messages.h"

namespace allot {
namespace {

TEST(AcceptanceMessagesTest, AsksAndReportsRoundTripAndAreOptional) {
  std::vector<AcceptanceAsk> asks = {{"own", 3, 1, 1000, 5000}};
  Json answer = {{"tasks", Json::array()}, {"acceptance", AcceptanceAsksJson(asks)}};
  auto parsed = ParseAcceptanceAsks(answer);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  EXPECT_EQ(*parsed, asks);
  EXPECT_TRUE(ParseAcceptanceAsks(Json{{"tasks", Json::array()}})->empty()) << "an older allotd asks nothing";

  Heartbeat hb;
  hb.node = "n0";
  hb.acceptance = {{3, 1, "failed", {{"cmd:false", "exited with code 1"}}, 77}, {4, 0, "passed", {}, 78}};
  auto back = ParseHeartbeat(HeartbeatJson(hb));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->acceptance, hb.acceptance);
  hb.acceptance.clear();
  Json old = HeartbeatJson(hb);
  EXPECT_FALSE(old.contains("acceptance"));
  EXPECT_TRUE(ParseHeartbeat(old)->acceptance.empty()) << "an older agent reports none";
}

TEST(AcceptanceMessagesTest, AMalformedReportIsRefusedNamingTheField) {
  Json hb = {{"node", "n0"}, {"acceptance", {{{"reservation_id", 1}, {"window", 0}, {"state", "fine"}}}}};
  auto r = ParseHeartbeat(hb);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "heartbeat.acceptance[0].state: 'fine': expected running, passed or failed");
  hb["acceptance"][0]["state"] = "failed";
  r = ParseHeartbeat(hb);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "heartbeat.acceptance[0].failures: none; a failed acceptance names its checks");
  Json ask = {{"acceptance", {{{"reservation", "own"}, {"reservation_id", 1}, {"window", 0}, {"start", 5}, {"end", 5}}}}};
  EXPECT_EQ(ParseAcceptanceAsks(ask).error().message(), "assignments.acceptance[0].end: not after start");
}

}  // namespace
}  // namespace allot
