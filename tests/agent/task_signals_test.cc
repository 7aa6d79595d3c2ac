// The agent's side of the noisy-neighbour signals: the latency file protocol (strict, never
// fatal), per-task attribution of NVML's per-process utilization, and the fake NVML's live file
// that scripts utilization over time.
#include "agent/node/task_signals.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "agent/fake_nvml_fixture.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

TEST(LatencyLineTest, TakesMillisecondsWithUpToThreeDecimals) {
  EXPECT_EQ(ParseLatencyLine("12"), 12000);
  EXPECT_EQ(ParseLatencyLine("12.5"), 12500);
  EXPECT_EQ(ParseLatencyLine("0.001"), 1);
  EXPECT_EQ(ParseLatencyLine("3600000"), int64_t{3600} * 1000 * 1000);
}

TEST(LatencyLineTest, RefusesAnythingElse) {
  for (const char* bad : {"", "0", "0.000", "-1", "+1", "1.", ".5", "1.2345", "12 ", " 12", "12ms", "1e3", "3600000.001",
                          "99999999", "nan", "1,5", "12\r"}) {
    EXPECT_EQ(ParseLatencyLine(bad), std::nullopt) << "'" << bad << "'";
  }
}

class LatencyFileTest : public ::testing::Test {
 protected:
  LatencyFileTest() : dir_("latency-file"), path_((dir_ / "latency").string()), file_(path_) {}
  void Append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }

  testing::ScratchDir dir_;
  std::string path_;
  LatencyFile file_;
};

TEST_F(LatencyFileTest, NoFileIsNoReport) {
  file_.Read();
  EXPECT_EQ(file_.p99_us(), std::nullopt);
  EXPECT_EQ(file_.bad_lines(), 0);
}

TEST_F(LatencyFileTest, TheNewestValidLineOfABeatIsItsP99AndBadLinesAreCounted) {
  Append("10\nfast\n11.5\n");
  file_.Read();
  EXPECT_EQ(file_.p99_us(), 11500);
  EXPECT_EQ(file_.bad_lines(), 1);
  file_.Read();  // nothing new: no report this beat
  EXPECT_EQ(file_.p99_us(), std::nullopt);
  Append("20\n-3\n");
  file_.Read();
  EXPECT_EQ(file_.p99_us(), 20000);
  EXPECT_EQ(file_.bad_lines(), 2);
}

TEST_F(LatencyFileTest, APartialLineWaitsForItsNewline) {
  Append("1");
  file_.Read();
  EXPECT_EQ(file_.p99_us(), std::nullopt);
  Append("5\n");
  file_.Read();
  EXPECT_EQ(file_.p99_us(), 15000);
  EXPECT_EQ(file_.bad_lines(), 0);
}

TEST_F(LatencyFileTest, AnOverlongLineIsOneBadLineEvenAcrossReads) {
  Append(std::string(100, '7'));
  file_.Read();
  Append(std::string(100, '7') + "\n8\n");
  file_.Read();
  EXPECT_EQ(file_.p99_us(), 8000);
  EXPECT_EQ(file_.bad_lines(), 1);
}

TEST_F(LatencyFileTest, ATruncatedFileIsReadFromItsStart) {
  Append("10\n20\n30\n");
  file_.Read();
  std::ofstream(path_, std::ios::trunc) << "5\n";
  file_.Read();
  EXPECT_EQ(file_.p99_us(), 5000);
}

TEST_F(LatencyFileTest, ALinkOrAFifoIsRefusedNotFollowed) {
  std::ofstream(dir_ / "secret") << "42\n";
  ASSERT_EQ(::symlink((dir_ / "secret").c_str(), path_.c_str()), 0);
  file_.Read();
  EXPECT_EQ(file_.p99_us(), std::nullopt);
  EXPECT_EQ(file_.bad_lines(), 1);
  ::unlink(path_.c_str());
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  file_.Read();  // would block forever on a FIFO without a writer if opened blocking
  EXPECT_EQ(file_.p99_us(), std::nullopt);
  EXPECT_EQ(file_.bad_lines(), 2);
}

TEST(AttributeUtilizationTest, TheBusiestProcessOfTheTaskCounts) {
  std::vector<ProcessUtilization> samples = {{100, 30, 5}, {200, 80, 60}, {300, 95, 90}};
  TaskGpuActivity a;
  AttributeUtilization(samples, {100, 200}, a);
  EXPECT_EQ(a.sm_percent, 80);
  EXPECT_EQ(a.memory_percent, 60);
  TaskGpuActivity idle;
  AttributeUtilization(samples, {400}, idle);  // sampled others, not it: idle
  EXPECT_EQ(idle.sm_percent, 0);
  TaskGpuActivity unknown;
  AttributeUtilization({}, {100}, unknown);  // no per-process samples at all
  EXPECT_EQ(unknown.sm_percent, std::nullopt);
}

class FakeNvmlLiveTest : public testing::FakeNvmlTest {};

TEST_F(FakeNvmlLiveTest, TheLiveFileScriptsPerProcessUtilizationWhileTheBackendRuns) {
  Configure("gpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n");
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto before = backend->Sample();
  ASSERT_TRUE(before.has_value());
  EXPECT_TRUE((*before)[0].process_utilization.empty());
  std::ofstream(config_ + ".live") << "gpu index=0 util=90\nproc_util gpu=0 pid=4242 sm=85 mem=70\n";
  auto during = backend->Sample();
  ASSERT_TRUE(during.has_value());
  ASSERT_EQ((*during)[0].process_utilization.size(), 1u);
  EXPECT_EQ((*during)[0].process_utilization[0].pid, 4242u);
  EXPECT_EQ((*during)[0].process_utilization[0].sm_percent, 85u);
  EXPECT_EQ((*during)[0].utilization_percent, 90u);
  std::ofstream(config_ + ".live", std::ios::trunc) << "proc_util gpu=0 pid=4242 sm=5 mem=1\n";
  auto after = backend->Sample();
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ((*after)[0].process_utilization.size(), 1u);
  EXPECT_EQ((*after)[0].process_utilization[0].sm_percent, 5u);
}

TEST_F(FakeNvmlLiveTest, MatchAttributesUtilizationToProcessesByCommandLine) {
  Configure("gpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n");
  pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", "sleep 30; true", "noisy-live-marker", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(100 * 1000);
  std::ofstream(config_ + ".live") << "proc_util gpu=0 match=noisy-live-marker sm=77 mem=50\n";
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto s = backend->Sample();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ((*s)[0].process_utilization.size(), 1u);
  EXPECT_EQ((*s)[0].process_utilization[0].pid, static_cast<unsigned>(child));
  EXPECT_EQ((*s)[0].process_utilization[0].sm_percent, 77u);
}

// A time-slice task over its stated vram (docs/arrays.md): its processes' memory on its GPU,
// summed, against the stated amount; others' processes and those NVML cannot measure count nothing.
TEST(VramOverrunTest, TheTasksProcessesMemoryIsSummedAgainstItsStatedVram) {
  const uint64_t gib = uint64_t{1} << 30;
  std::vector<GpuProcess> processes = {{100, 10 * gib, {}, {}}, {200, 4 * gib + gib / 5, {}, {}},
                                       {300, 70 * gib, {}, {}}, {400, std::nullopt, {}, {}}};
  // 10 + 4.2 GiB of the task's two processes, over 12 GiB; pid 300 is another task's.
  EXPECT_EQ(VramOverrun(processes, {100, 200, 400}, 12 * 1024), "used 14.2 GiB of VRAM over its vram: 12GiB");
  EXPECT_EQ(VramOverrun(processes, {100, 200}, 1536 * 10), std::nullopt) << "14.2 GiB is within 15 GiB";
  EXPECT_EQ(VramOverrun(processes, {100}, 10 * 1024), std::nullopt) << "exactly at the limit is not over";
  EXPECT_EQ(VramOverrun(processes, {100}, 10 * 1024 - 1), "used 10.0 GiB of VRAM over its vram: 10239MiB");
  EXPECT_EQ(VramOverrun(processes, {100, 200, 300}, 0), std::nullopt) << "no vram stated: never over";
  EXPECT_EQ(VramOverrun(processes, {400}, 1), std::nullopt) << "NVML could not tell: nothing counted";
  EXPECT_EQ(VramOverrun({}, {100}, 1), std::nullopt);
}

}  // namespace
}  // namespace allot
