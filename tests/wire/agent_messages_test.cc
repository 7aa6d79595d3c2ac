// The heartbeat's per-task activity on shared GPUs (docs/noisy-neighbour.md): it round-trips, an
// older agent's heartbeat without it is still read, and a bad value is refused naming the field,
// the value and what was expected. And an assignment's MPS throttle.
#include "wire/agent_messages.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(TaskActivityWireTest, RoundTripsAndAnOlderAgentsHeartbeatHasNone) {
  Heartbeat hb;
  hb.node = "n0";
  GpuTelemetry g;
  g.index = 2;
  g.uuid = "GPU-x";
  g.tasks = {TaskGpuActivity{7, 0, 1, 93, 40, 25000, 2}, TaskGpuActivity{9, 1, 0, std::nullopt, std::nullopt, std::nullopt, 0}};
  hb.gpus = {g};
  auto back = ParseHeartbeat(HeartbeatJson(hb));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->gpus.size(), 1u);
  EXPECT_EQ(back->gpus[0].tasks, g.tasks);
  Json old = HeartbeatJson(hb);
  old["gpus"][0].erase("tasks");
  auto older = ParseHeartbeat(old);
  ASSERT_TRUE(older.has_value()) << older.error().message();
  EXPECT_TRUE(older->gpus[0].tasks.empty());
}

TEST(TaskActivityWireTest, ABadValueIsRefusedNamingTheField) {
  Json hb = {{"node", "n0"}, {"gpus", {{{"index", 0}, {"uuid", "GPU-x"}, {"tasks", {{{"job_id", 3}, {"sm_percent", 101}}}}}}}};
  auto r = ParseHeartbeat(hb);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "heartbeat.gpus[0].tasks[0].sm_percent: 101 is out of range 0 to 100");
  hb["gpus"][0]["tasks"][0] = {{"task", 0}};
  r = ParseHeartbeat(hb);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "heartbeat.gpus[0].tasks[0].job_id: missing");
  hb["gpus"][0]["tasks"][0] = {{"job_id", 3}, {"p99_us", "fast"}};
  r = ParseHeartbeat(hb);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "heartbeat.gpus[0].tasks[0].p99_us: expected an integer");
}

TEST(TaskActivityWireTest, AnAssignmentCarriesItsThrottle) {
  Json body = {{"tasks", {{{"job", "t"}, {"job_id", 1}, {"tenant", "b"}, {"command", {"x"}}, {"share", "mps"},
                           {"mps_percent", 40}, {"mps_throttle_percent", 20}}}}};
  auto a = ParseAssignments(body);
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ((*a)[0].mps_throttle_percent, 20);
  body["tasks"][0]["mps_throttle_percent"] = 101;
  EXPECT_FALSE(ParseAssignments(body).has_value());
  body["tasks"][0].erase("mps_throttle_percent");
  EXPECT_EQ((*ParseAssignments(body))[0].mps_throttle_percent, 0) << "none: the share's own percentage";
}

}  // namespace
}  // namespace allot
