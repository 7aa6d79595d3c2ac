// MPS control daemons through a fake nvidia-cuda-mps-control (tests/fakes) that logs what it was
// told: one daemon per GPU with its own pipe and log directories, defaults sent as the documented
// commands, quit on Stop, and the refusals.
#include "agent/run/mps_control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"
#include "testing/text.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class MpsControlTest : public ::testing::Test {
 protected:
  MpsControlTest() : dir_("mps"), log_((dir_ / "fake.log").string()) {
    mps_ = std::make_unique<MpsControl>(Options());
  }
  ~MpsControlTest() override { std::filesystem::remove_all(pipes_); }
  MpsOptions Options() const {
    MpsOptions o;
    o.control_binary = FAKE_MPS_CONTROL_PATH;
    o.state_dir = (dir_ / "state").string();
    o.pipe_root = pipes_;
    o.extra_env = {{"FAKE_MPS_LOG", log_}};
    return o;
  }
  std::string Log() {
    auto t = ReadText(log_);
    return t ? *t : "";
  }
  testing::ScratchDir dir_;
  std::string log_;
  // Short, as the daemon's sockets need: under the scratch directory they would not fit.
  std::string pipes_ = "/tmp/allot-mps-test-" + std::to_string(::getpid());
  std::unique_ptr<MpsControl> mps_;
};

const MpsDaemon kA{"GPU-aaaa", 200000};  // tenant uid 200000 on GPU aaaa
using testing::Occurrences;

// One daemon per GPU and uid: a daemon runs one uid's server at a time (on a real H200 a second
// tenant's client waited, unserved, until the first tenant's had gone), two daemons serve both.
TEST_F(MpsControlTest, StartsOneDaemonPerGpuAndUidWithItsOwnPipeAndLogDirectories) {
  ASSERT_TRUE(mps_->Start(kA).ok());
  const std::string pipe = pipes_ + "/GPU-aaaa/200000/pipe";
  EXPECT_EQ(mps_->PipeDir(kA), pipe);
  EXPECT_TRUE(std::filesystem::is_directory(pipe));
  EXPECT_TRUE(std::filesystem::is_directory(mps_->LogDir(kA)));
  EXPECT_EQ(Log(), "argv:-d\n"
                   "env:CUDA_VISIBLE_DEVICES=GPU-aaaa\n"
                   "env:CUDA_MPS_PIPE_DIRECTORY=" + pipe + "\n"
                   "env:CUDA_MPS_LOG_DIRECTORY=" + mps_->LogDir(kA) + "\n");
  ASSERT_TRUE(mps_->Start(kA).ok());  // running already: not started twice
  const std::string log = Log();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 4);
  for (const MpsDaemon& other : {MpsDaemon{"GPU-bbbb", 200000}, MpsDaemon{"GPU-aaaa", 200001}}) {
    ASSERT_TRUE(mps_->Start(other).ok());
    EXPECT_THAT(Log(), HasSubstr("env:CUDA_MPS_PIPE_DIRECTORY=" + mps_->PipeDir(other) + "\n"));
    EXPECT_NE(mps_->PipeDir(kA), mps_->PipeDir(other));
    EXPECT_NE(mps_->LogDir(kA), mps_->LogDir(other));
  }
  EXPECT_EQ(Occurrences(Log(), "argv:-d"), 3);
}

// A tenant's daemon goes once none of its tasks is on the GPU: an idle server keeps a context
// there, and a node sees many tenants.
TEST_F(MpsControlTest, StopAllButQuitsOnlyTheDaemonsNoLongerInUseOnce) {
  const MpsDaemon b{"GPU-aaaa", 200001};
  ASSERT_TRUE(mps_->Start(kA).ok());
  ASSERT_TRUE(mps_->Start(b).ok());
  std::vector<std::string> problems;
  EXPECT_THAT(mps_->StopAllBut({kA, b}, &problems), ::testing::IsEmpty());
  EXPECT_EQ(Occurrences(Log(), "stdin:quit"), 0);
  std::vector<MpsDaemon> stopped = mps_->StopAllBut({kA}, &problems);
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0], b);
  EXPECT_TRUE(mps_->Running(kA));
  EXPECT_FALSE(mps_->Running(b));
  EXPECT_EQ(Occurrences(Log(), "stdin:quit"), 1);
  EXPECT_THAT(mps_->StopAllBut({kA}, &problems), ::testing::IsEmpty());  // not asked twice
  EXPECT_EQ(mps_->StopAllBut({}, &problems).size(), 1u);
  EXPECT_EQ(Occurrences(Log(), "stdin:quit"), 2);
  EXPECT_THAT(problems, ::testing::IsEmpty());
}

TEST_F(MpsControlTest, TellsTheDaemonItsDefaultsAndQuitsOnStopOnce) {
  ASSERT_TRUE(mps_->Start(kA).ok());
  ASSERT_TRUE(mps_->SetDefaultActiveThreadPercentage(kA, 30).ok());
  ASSERT_TRUE(mps_->SetDefaultPinnedMemLimit(kA, 0, 2048).ok());
  ASSERT_TRUE(mps_->Stop(kA).ok());
  const std::string log = Log();
  EXPECT_THAT(log, HasSubstr("argv:\nenv:CUDA_VISIBLE_DEVICES=GPU-aaaa\n"));  // client mode: no -d
  EXPECT_THAT(log, HasSubstr("stdin:set_default_active_thread_percentage 30\n"));
  EXPECT_THAT(log, HasSubstr("stdin:set_default_device_pinned_mem_limit 0 2048M\n"));
  EXPECT_THAT(log, HasSubstr("stdin:quit\n"));
  EXPECT_FALSE(mps_->Running(kA));
  ASSERT_TRUE(mps_->Stop(kA).ok());  // idempotent: nothing sent again
  EXPECT_EQ(Log(), log);
}

TEST_F(MpsControlTest, RefusesMigInstancesBadValuesAndGpusWithoutADaemon) {
  EXPECT_EQ(mps_->Start({"MIG-1111", 200000}).code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage(kA, 50).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(mps_->Start(kA).ok());
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage(kA, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultActiveThreadPercentage(kA, 101).code(), Code::kInvalidArgument);
  EXPECT_EQ(mps_->SetDefaultPinnedMemLimit(kA, 0, 0).code(), Code::kInvalidArgument);
  EXPECT_THAT(Log(), Not(HasSubstr("stdin:")));
}

// A daemon that is gone, or a zombie waiting for its reaper (it is nobody's child here).
bool Gone(pid_t pid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  return !stat || stat->find(") Z") != std::string::npos;
}

TEST_F(MpsControlTest, ARestartedAgentStopsTheDaemonsItsPreviousRunLeft) {
  MpsOptions o = Options();
  o.extra_env.emplace_back("FAKE_MPS_DAEMON", "1");
  auto first = std::make_unique<MpsControl>(o);
  ASSERT_TRUE(first->Start(kA).ok());
  auto record = ReadText((dir_ / "state/mps/GPU-aaaa/200000/daemon.pids").string());
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
  EXPECT_FALSE(std::filesystem::exists(dir_ / "state/mps/GPU-aaaa/200000/daemon.pids"));
  EXPECT_EQ(second.StopLeftovers(&problems), 0);  // nothing recorded any more
}

TEST_F(MpsControlTest, AMissingControlBinaryIsAnErrorNamingIt) {
  MpsOptions o = Options();
  o.control_binary = "/nonexistent/nvidia-cuda-mps-control";
  MpsControl missing(o);
  Status s = missing.Start(kA);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/nvidia-cuda-mps-control"));
}

// The daemon's longest socket, <pipe>/control_privileged, must fit a Unix socket's 107 bytes: on
// a real H200 a longer pipe directory made nvidia-cuda-mps-control -d exit 1 with nothing in its
// log, and every MPS task failed. The agent refuses such a directory before starting anything.
TEST_F(MpsControlTest, RefusesAPipeDirectoryTooLongForTheDaemonsSocketsAndStartsNothing) {
  const MpsDaemon d{"GPU-f1d03723-30d8-0b34-ca6b-550f3d48609a", 200000};
  MpsOptions o = Options();
  // PipeDir: <pipe_root>/<uuid>/<uid>/pipe; the socket adds "/control_privileged".
  const size_t fixed = 1 + d.gpu_uuid.size() + std::string("/200000/pipe/control_privileged").size();
  o.pipe_root = pipes_ + std::string(107 - fixed - pipes_.size(), 's');
  MpsControl fits(o);
  EXPECT_EQ((fits.PipeDir(d) + "/control_privileged").size(), 107u);
  EXPECT_TRUE(fits.CheckPipeDir(d).ok());

  o.pipe_root += "s";  // one byte over
  MpsControl over(o);
  Status s = over.Start(d);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(over.PipeDir(d) + "/control_privileged would be 108 bytes, over the 107"));
  EXPECT_THAT(s.message(), HasSubstr("shorter --mps-pipe-dir"));
  EXPECT_FALSE(over.Running(d));
  EXPECT_EQ(Log(), "") << "the daemon must not be started";
}

}  // namespace
}  // namespace allot
