// The scrub step with real commands: success keeps the record, a failure and a hang are errors
// that say how it ended, and nothing the scrub started outlives it.
#include "agent/run/scrub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScrubTest, ASucceedingScrubIsToldTheDevicesAndRecorded) {
  auto r = RunScrub({"sh", "-c", "echo scrubbing $ALLOT_SCRUB_DEVICES"}, {"GPU-aaaa", "MIG-bbbb"}, 5000);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_THAT(r->command, ElementsAre("sh", "-c", "echo scrubbing $ALLOT_SCRUB_DEVICES"));
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output_tail, "scrubbing GPU-aaaa,MIG-bbbb\n");
  EXPECT_GE(r->duration_ms, 0);
  EXPECT_LT(r->duration_ms, 5000);
}

TEST(ScrubTest, AFailingScrubIsAnErrorWithItsExitCodeAndOutput) {
  auto r = RunScrub({"sh", "-c", "echo 'ecc errors pending' >&2; exit 2"}, {"GPU-aaaa"}, 5000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Code::kFailedPrecondition);
  EXPECT_THAT(r.error().message(), HasSubstr("of GPU-aaaa exited with code 2"));
  EXPECT_THAT(r.error().message(), HasSubstr("ecc errors pending"));
}

TEST(ScrubTest, AHangingScrubIsKilledAtItsTimeoutAndIsAnError) {
  const int64_t start = WallMillis();
  auto r = RunScrub({"sleep", "30"}, {"GPU-aaaa"}, 200);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("timed out after 200 ms"));
  EXPECT_LT(WallMillis() - start, 2000);
}

TEST(ScrubTest, AMissingScrubCommandIsAnError) {
  auto r = RunScrub({"no-such-scrub-xyz"}, {"GPU-aaaa"}, 1000);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("command 'no-such-scrub-xyz' not found"));
}

TEST(ScrubTest, WhatAScrubLeftRunningIsKilledWhenItExits) {
  testing::ScratchDir dir("scrub");
  const std::string pid_file = (dir / "bg.pid").string();
  const int64_t start = WallMillis();
  // The background sleep holds the output pipe open: the wait ends with the scrub, not with it.
  auto r = RunScrub({"sh", "-c", "sleep 30 & echo $! > " + pid_file + "; echo done"}, {"GPU-aaaa"}, 5000);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_LT(WallMillis() - start, 2000);
  pid_t bg = static_cast<pid_t>(std::stol(*ReadText(pid_file)));
  SleepMillis(50);
  auto stat = ReadText("/proc/" + std::to_string(bg) + "/stat");
  EXPECT_TRUE(!stat || stat->find(") Z") != std::string::npos) << *stat;
}

}  // namespace
}  // namespace allot
