// MPS control daemons through a fake nvidia-cuda-mps-control (tests/fakes) that logs what it was
// told: one daemon per GPU with its own pipe and log directories, defaults sent as the documented
// commands, quit on Stop, and the refusals.
#include "agent/run/mps_control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class MpsControlTest : public ::testing::Test {
 protected:
  MpsControlTest() : dir_("mps"), log_((dir_ / "fake.log").string()) {
    MpsOptions o;
    o.control_binary = FAKE_MPS_CONTROL_PATH;
    o.state_dir = (dir_ / "state").string();
    o.extra_env = {{"FAKE_MPS_LOG", log_}};
    mps_ = std::make_unique<MpsControl>(o);
  }
  std::string Log() {
    auto t = ReadText(log_);
    return t ? *t : "";
  }
  testing::ScratchDir dir_;
  std::string log_;
  std::unique_ptr<MpsControl> mps_;
};

TEST_F(MpsControlTest, StartsOneDaemonPerGpuWithItsOwnPipeAndLogDirectories) {
  ASSERT_TRUE(mps_->Start("GPU-aaaa").ok());
  const std::string pipe = (dir_ / "state/mps/GPU-aaaa/pipe").string();
  EXPECT_EQ(mps_->PipeDir("GPU-aaaa"), pipe);
  EXPECT_TRUE(std::filesystem::is_directory(pipe));
  EXPECT_TRUE(std::filesystem::is_directory(mps_->LogDir("GPU-aaaa")));
  EXPECT_EQ(Log(), "argv:-d\n"
                   "env:CUDA_VISIBLE_DEVICES=GPU-aaaa\n"
                   "env:CUDA_MPS_PIPE_DIRECTORY=" + pipe + "\n"
                   "env:CUDA_MPS_LOG_DIRECTORY=" + mps_->LogDir("GPU-aaaa") + "\n");
  ASSERT_TRUE(mps_->Start("GPU-aaaa").ok());  // running already: not started twice
  const std::string log = Log();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 4);
  ASSERT_TRUE(mps_->Start("GPU-bbbb").ok());
  EXPECT_THAT(Log(), HasSubstr("env:CUDA_MPS_PIPE_DIRECTORY=" + mps_->PipeDir("GPU-bbbb") + "\n"));
  EXPECT_NE(mps_->PipeDir("GPU-aaaa"), mps_->PipeDir("GPU-bbbb"));
}

TEST_F(MpsControlTest, TellsTheDaemonItsDefaultsAndQuitsOnStopOnce) {
  ASSERT_TRUE(mps_->Start("GPU-aaaa").ok());
  ASSERT_TRUE(mps_->SetDefaultActiveThreadPercentage("GPU-aaaa", 30).ok());
  ASSERT_TRUE(mps_->SetDefaultPinnedMemLimit("GPU-aaaa", 0, 2048).ok());
  ASSERT_TRUE(mps_->Stop("GPU-aaaa").ok());
  const std::string log = Log();
  EXPECT_THAT(log, HasSubstr("argv:\nenv:CUDA_VISIBLE_DEVICES=GPU-aaaa\n"));  // client mode: no -d
  EXPECT_THAT(log, HasSubstr("stdin:set_default_active_thread_percentage 30\n"));
  EXPECT_THAT(log, HasSubstr("stdin:set_default_device_pinned_mem_limit 0 2048M\n"));
  EXPECT_THAT(log, HasSubstr("stdin:quit\n"));
  EXPECT_FALSE(mps_->Running("GPU-aaaa"));
  ASSERT_TRUE(mps_->Stop("GPU-aaaa").ok());  // idempotent: nothing sent again
  EXPECT_EQ(Log(), log);
}

TEST_F(MpsControlTest, RefusesMigInstancesBadValuesAndGpusWithoutADaemon) {
  EXPECT_EQ(mps_->Start("MIG-1111").code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage("GPU-aaaa", 50).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(mps_->Start("GPU-aaaa").ok());
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage("GPU-aaaa", 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage("GPU-aaaa", 101).code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultPinnedMemLimit("GPU-aaaa", 0, 0).code(), Code::kInvalidArgument);
  EXPECT_THAT(Log(), Not(HasSubstr("stdin:")));
}

// A daemon that is gone, or a zombie waiting for its reaper (it is nobody's child here).
bool Gone(pid_t pid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  return !stat || stat->find(") Z") != std::string::npos;
}

TEST_F(MpsControlTest, ARestartedAgentStopsTheDaemonsItsPreviousRunLeft) {
  MpsOptions o;
  o.control_binary = FAKE_MPS_CONTROL_PATH;
  o.state_dir = (dir_ / "state").string();
  o.extra_env = {{"FAKE_MPS_LOG", log_}, {"FAKE_MPS_DAEMON", "1"}};
  auto first = std::make_unique<MpsControl>(o);
  ASSERT_TRUE(first->Start("GPU-aaaa").ok());
  auto record = ReadText((dir_ / "state/mps/GPU-aaaa/daemon.pids").string());
  ASSERT_TRUE(record.has_value());
  pid_t daemon = std::atoi(record->c_str());
  ASSERT_GT(daemon, 0) << "the recorded daemon: '" << *record << "'";
  first.reset();  // the agent died without stopping it

  MpsControl second(o);
  std::vector<std::string> problems;
  EXPECT_EQ(second.StopLeftovers(&problems), 1);
  EXPECT_THAT(problems, ::testing::IsEmpty());
  EXPECT_THAT(Log(), HasSubstr("stdin:quit\n"));
  for (int i = 0; i < 200 && !Gone(daemon); ++i) SleepMillis(10);
  EXPECT_TRUE(Gone(daemon)) << "pid " << daemon;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "state/mps/GPU-aaaa/daemon.pids"));
  EXPECT_EQ(second.StopLeftovers(&problems), 0);  // nothing recorded any more
}

TEST_F(MpsControlTest, AMissingControlBinaryIsAnErrorNamingIt) {
  MpsOptions o;
  o.control_binary = "/nonexistent/nvidia-cuda-mps-control";
  o.state_dir = (dir_ / "state").string();
  MpsControl missing(o);
  Status s = missing.Start("GPU-aaaa");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/nvidia-cuda-mps-control"));
}

}  // namespace
}  // namespace allot
