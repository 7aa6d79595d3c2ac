// allotd and allot-agent as real processes running a frame array (docs/arrays.md): 20 frames,
// at most 4 at once, each told its index and frame; frame 7 fails its first run and is retried,
// and the array ends with every frame done.
#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: vfx}\n";

TEST_F(AgentE2eTest, AFrameArrayRunsFourAtATimeWithItsFrameInTheEnvironmentAndRetriesAFailedFrame) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  // Frame 7 fails once (exit 3), leaving a mark in the tenant's work directory; its retry finds it.
  Submit("frames", "vfx",
         "echo INDEX=$ALLOT_ARRAY_INDEX FRAME=$ALLOT_FRAME; "
         "if [ \"$ALLOT_FRAME\" = 7 ] && [ ! -e frame-7-failed ]; then touch frame-7-failed; exit 3; fi; "
         "sleep 0.5; echo RENDERED",
         R"({"gpus": 1, "cpu": 0.1, "memory": "64Mi"})", R"("array": {"frames": "1-20", "parallel": 4}, "retries": 1)");
  int most = 0;
  Json array;
  const bool done = WaitFor(120, [&] {
    array = Get("/v1/arrays/frames");
    if (!array.is_object() || !array.contains("progress")) return false;
    most = std::max(most, array["progress"].value("running", 0));
    return array.value("state", "") == "succeeded" || array.value("state", "") == "failed";
  });
  ASSERT_TRUE(done) << array.dump();
  EXPECT_EQ(array["state"], "succeeded") << array.dump();
  EXPECT_EQ(array["progress"]["done"], 20);
  EXPECT_EQ(array["retries"], 1) << "one failed run retried";
  EXPECT_LE(most, 4) << "never more than parallel elements at once";
  EXPECT_GE(most, 2) << "elements ran side by side";
  for (int i = 0; i < 20; ++i) {
    std::string name = "frames-" + std::to_string(i);
    // The agent ships a log's tail after the exit it reports: wait for it.
    std::string log = WaitLog(name, "RENDERED");
    EXPECT_NE(log.find("INDEX=" + std::to_string(i) + " FRAME=" + std::to_string(i + 1)), std::string::npos) << name << ":\n" << log;
  }
  // Frame 7 is element 6: its first run failed, its second rendered.
  Json seven = Job("frames-6");
  EXPECT_EQ(seven["failures"], 1) << seven.dump();
  EXPECT_EQ(seven["array"]["frame"], 7);
  std::string first = Logs("frames-6", 0, 0);
  EXPECT_NE(first.find("FRAME=7"), std::string::npos) << first;
  EXPECT_EQ(first.find("RENDERED"), std::string::npos) << "the first run failed:\n" << first;
  WaitLog("frames-6", "RENDERED", 0, 1);
}

}  // namespace
}  // namespace allot
