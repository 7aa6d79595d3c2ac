// Preemption with real processes, with and without bubblewrap (which does not forward signals, so
// the runner must reach the task itself): a task that traps SIGTERM checkpoints and exits and is
// reported preempted; one that ignores SIGTERM is SIGKILLed at the deadline with its background
// child, leaving no process in its cgroup.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "agent/run/runner.h"
#include "agent/run/task_env.h"
#include "agent/runner_fixture.h"

namespace allot {
namespace {

using testing::RunnerTest;

class PreemptTest : public RunnerTest, public ::testing::WithParamInterface<SandboxMode> {
 protected:
  void SetUp() override {
    if (std::string why = testing::SandboxMissing(GetParam()); !why.empty()) GTEST_SKIP() << why;
    runner_ = Make(GetParam());
    ASSERT_NE(runner_, nullptr);
  }
  // A launch whose environment is the agent's real one for a task (BuildTaskEnv).
  TaskLaunch WithTaskEnv(TaskLaunch l) {
    TaskEnvInput in;
    in.job_name = "train";
    in.job_id = "7";
    in.master_addr = "127.0.0.1";
    in.checkpoint_dir = l.checkpoint_dir;
    in.preempt_file = l.preempt_file;
    auto env = BuildTaskEnv(in);
    EXPECT_TRUE(env);
    l.env = *env;
    return l;
  }
  std::unique_ptr<Runner> runner_;
};

TEST_P(PreemptTest, ATaskThatTrapsTermCheckpointsExitsAndIsReportedPreempted) {
  TaskLaunch l = WithTaskEnv(Sh(Launch("polite", {}),
                                "trap 'cp \"$ALLOT_PREEMPT_FILE\" \"$ALLOT_CHECKPOINT_DIR/ckpt\"; exit 0' TERM\n"
                                "touch \"$ALLOT_CHECKPOINT_DIR/ready\"\n"
                                "while :; do sleep 0.05; done\n"));
  ASSERT_TRUE(runner_->Start(l));
  ASSERT_TRUE(WaitForFile(l.checkpoint_dir + "/ready")) << Read(l.log_path);
  const int64_t deadline = WallMillis() + 5000;
  ASSERT_TRUE(runner_->Preempt("polite", deadline).ok());
  EXPECT_EQ(Read(l.preempt_file), std::to_string(deadline) + "\n");
  auto e = WaitFor(*runner_, "polite", 4000);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->preempted);
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(e->reason, "exited with code 0 after preemption signal");
  EXPECT_LT(e->ended_ms, deadline);
  EXPECT_EQ(Read(l.checkpoint_dir + "/ckpt"), std::to_string(deadline) + "\n");
}

TEST_P(PreemptTest, ATaskThatIgnoresTermIsKilledAtTheDeadlineWithItsWholeTree) {
  TaskLaunch l = WithTaskEnv(Sh(Launch("stubborn", {}),
                                "trap '' TERM\n"
                                "sleep 30 &\n"  // inherits the ignored TERM: only SIGKILL ends it
                                "touch \"$ALLOT_CHECKPOINT_DIR/ready\"\n"
                                "while :; do sleep 0.05; done\n"));
  ASSERT_TRUE(runner_->Start(l));
  ASSERT_TRUE(WaitForFile(l.checkpoint_dir + "/ready")) << Read(l.log_path);
  auto dirs = runner_->CgroupDirs("stubborn");
  ASSERT_TRUE(dirs);
  const int64_t deadline = WallMillis() + 400;
  ASSERT_TRUE(runner_->Preempt("stubborn", deadline).ok());
  auto e = WaitFor(*runner_, "stubborn", 4000);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->preempted);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->reason, "killed by SIGKILL: still running at the preemption deadline");
  EXPECT_GE(e->ended_ms, deadline);
  EXPECT_LT(e->ended_ms, deadline + 2000);
  // The cgroup is left empty (kept for the next task, or removed): the background sleep died too.
  if (!runner_->limits_enforced()) GTEST_SKIP() << "no cgroups to check the tree: " << runner_->description();
  ASSERT_FALSE(dirs->empty());
  for (const std::string& d : *dirs)
    EXPECT_TRUE(!std::filesystem::exists(d) || ReadPids(d + "/cgroup.procs").empty()) << d;
}

TEST_P(PreemptTest, APreemptRightAfterStartStillReachesTheTask) {
  // Inside bwrap the command may not exist yet when Preempt comes; Poll sends the SIGTERM then.
  ASSERT_TRUE(runner_->Start(WithTaskEnv(Sh(Launch("early", {}), "while :; do sleep 0.05; done"))));
  const int64_t deadline = WallMillis() + 5000;
  ASSERT_TRUE(runner_->Preempt("early", deadline).ok());
  auto e = WaitFor(*runner_, "early", 4000);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->preempted);
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(e->reason, "killed by SIGTERM after preemption signal");
  EXPECT_LT(e->ended_ms, deadline);
}

TEST_P(PreemptTest, PreemptingAnUnknownTaskIsNotFound) {
  EXPECT_EQ(runner_->Preempt("nobody", WallMillis()).code(), Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Modes, PreemptTest, ::testing::Values(SandboxMode::kNone, SandboxMode::kBwrap, SandboxMode::kNative),
                         testing::ModeName);

}  // namespace
}  // namespace allot
