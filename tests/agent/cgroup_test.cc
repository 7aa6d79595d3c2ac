// cgroups without the kernel: the layout read from /proc texts of hybrid, pure v2 and v1 machines,
// and the files a task's cgroup gets, written into a fake cgroup root (a scratch directory) for v2
// and v1. The real kernel paths are exercised by runner_limits_test.cc on this (hybrid) machine.
#include "agent/run/task_cgroup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;

constexpr const char* kHybridMounts =
    "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
constexpr const char* kHybridSelf =
    "8:pids:/\n6:freezer:/\n4:memory:/process_api/45bb\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupLayoutTest, AHybridMachineLimitsThroughV1UnderItsOwnCgroupsAndKillsThroughUnified) {
  CgroupLayout l = ParseCgroupLayout(kHybridMounts, kHybridSelf);
  EXPECT_EQ(l.mode, CgroupMode::kHybrid);
  EXPECT_EQ(l.memory, "/sys/fs/cgroup/memory/process_api/45bb");  // under its own, not the root
  EXPECT_EQ(l.cpu, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(l.pids, "/sys/fs/cgroup/pids");
  EXPECT_EQ(l.freezer, "/sys/fs/cgroup/freezer");
  EXPECT_EQ(l.v2, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(l.v2_limits());
  EXPECT_THAT(l.Describe(), HasSubstr("hybrid"));
}

TEST(CgroupLayoutTest, APureV2MachineDoesEverythingInItsOwnUnifiedCgroup) {
  CgroupLayout l = ParseCgroupLayout("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
                                     "0::/system.slice/allot-agent.service\n");
  EXPECT_EQ(l.mode, CgroupMode::kV2);
  EXPECT_EQ(l.v2, "/sys/fs/cgroup/system.slice/allot-agent.service");
  EXPECT_TRUE(l.v2_limits());
  EXPECT_THAT(l.Describe(), HasSubstr("v2 at /sys/fs/cgroup/system.slice/allot-agent.service"));
}

TEST(CgroupLayoutTest, AV1MachineWithJoinedControllersAndNoCgroupsAtAll) {
  CgroupLayout v1 = ParseCgroupLayout(
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n",
      "3:cpu,cpuacct:/agent\n2:memory:/agent\n");
  EXPECT_EQ(v1.mode, CgroupMode::kV1);
  EXPECT_EQ(v1.cpu, "/sys/fs/cgroup/cpu,cpuacct/agent");
  EXPECT_EQ(v1.memory, "/sys/fs/cgroup/memory/agent");
  EXPECT_EQ(v1.pids, "");
  EXPECT_EQ(ParseCgroupLayout("proc /proc proc rw 0 0\n", "").mode, CgroupMode::kNone);
}

class FakeCgroupRootTest : public ::testing::Test {
 protected:
  FakeCgroupRootTest() : dir_("cgroupfs") {}
  std::string Dir(const std::string& name) {
    std::filesystem::create_directories(dir_ / name);
    return (dir_ / name).string();
  }
  static std::string Read(const std::string& path) {
    auto t = ReadText(path);
    return t ? *t : "<missing>";
  }
  // A pure v2 layout whose own cgroup ("own") is given `own_offers` and its group ("own/allot")
  // `group_offers`, as their cgroup.controllers files say.
  CgroupLayout V2(const std::string& own_offers, const std::string& group_offers) {
    CgroupLayout l;
    l.mode = CgroupMode::kV2;
    l.v2 = Dir("own");
    EXPECT_TRUE(WriteText(l.v2 + "/cgroup.controllers", own_offers + "\n").ok());
    EXPECT_TRUE(WriteText(Dir("own/allot") + "/cgroup.controllers", group_offers + "\n").ok());
    return l;
  }
  ScratchDir dir_;
};

TEST_F(FakeCgroupRootTest, V2GetsCpuMaxMemoryMaxNoSwapAndPidsMaxWithControllersEnabled) {
  CgroupLayout l = V2("cpuset cpu io memory pids", "cpu memory pids");
  // Files the kernel may or may not have: present here, so they must be written.
  ASSERT_TRUE(WriteText(Dir("own/allot/t1") + "/memory.swap.max", "max").ok());
  ASSERT_TRUE(WriteText(l.v2 + "/allot/t1/memory.oom.group", "0").ok());

  ASSERT_TRUE(PrepareCgroupGroup(l, "allot"));
  EXPECT_EQ(Read(l.v2 + "/cgroup.subtree_control"), "+cpu +memory +pids");
  EXPECT_EQ(Read(l.v2 + "/allot/cgroup.subtree_control"), "+cpu +memory +pids");
  auto cg = TaskCgroup::Create(l, "allot", "t1", CgroupLimits{1500, 512, 20});
  ASSERT_TRUE(cg) << cg.error().ToString();
  const std::string t = l.v2 + "/allot/t1";
  EXPECT_EQ(Read(t + "/cpu.max"), "150000 100000");  // 1.5 cores of a 100 ms period
  EXPECT_EQ(Read(t + "/memory.max"), "536870912");
  EXPECT_EQ(Read(t + "/memory.swap.max"), "0");
  EXPECT_EQ(Read(t + "/memory.oom.group"), "1");
  EXPECT_EQ(Read(t + "/pids.max"), "20");
  EXPECT_THAT(cg->procs_files(), ElementsAre(t + "/cgroup.procs"));
  EXPECT_FALSE(cg->OomKilled());
  ASSERT_TRUE(WriteText(t + "/memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n").ok());
  EXPECT_TRUE(cg->OomKilled());
}

// Seen on a real GPU node (an H100 VM, kernel 6.18): the agent's parent enabled only memory below
// itself, so its own cgroup is given memory alone and a task's cgroup has no cpu.max to write.
TEST_F(FakeCgroupRootTest, V2EnablesOnlyTheControllersItsOwnCgroupIsGivenAndSaysWhichAreMissing) {
  CgroupLayout l = V2("memory", "memory");
  auto on = PrepareCgroupGroup(l, "allot");
  ASSERT_TRUE(on) << on.error().ToString();
  EXPECT_FALSE(on->cpu);
  EXPECT_TRUE(on->memory);
  EXPECT_FALSE(on->pids);
  EXPECT_EQ(on->Missing(), "cpu, pids");
  EXPECT_EQ(Read(l.v2 + "/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(Read(l.v2 + "/allot/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(on->Carried(CgroupLimits{1500, 512, 20}), (CgroupLimits{0, 512, 0}));
  EXPECT_EQ((CgroupControllers{.cpu = true, .memory = true, .pids = true}).Missing(), "");
}

TEST_F(FakeCgroupRootTest, V1GetsCfsQuotaLimitInBytesAndPidsMaxAndEveryHierarchyToJoin) {
  CgroupLayout l;
  l.mode = CgroupMode::kV1;
  l.cpu = Dir("cpu");
  l.memory = Dir("memory/agent");
  l.pids = Dir("pids");
  l.freezer = Dir("freezer");
  ASSERT_TRUE(PrepareCgroupGroup(l, "allot"));
  auto cg = TaskCgroup::Create(l, "allot", "t1", CgroupLimits{500, 64, 20});
  ASSERT_TRUE(cg) << cg.error().ToString();
  EXPECT_EQ(Read(l.cpu + "/allot/t1/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(Read(l.cpu + "/allot/t1/cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(Read(l.memory + "/allot/t1/memory.limit_in_bytes"), "67108864");
  EXPECT_EQ(Read(l.memory + "/allot/t1/memory.memsw.limit_in_bytes"), "<missing>");  // no swap accounting
  EXPECT_EQ(Read(l.pids + "/allot/t1/pids.max"), "20");
  EXPECT_THAT(cg->procs_files(),
              ElementsAre(l.cpu + "/allot/t1/cgroup.procs", l.memory + "/allot/t1/cgroup.procs",
                          l.pids + "/allot/t1/cgroup.procs", l.freezer + "/allot/t1/cgroup.procs"));
  EXPECT_FALSE(cg->OomKilled());
  ASSERT_TRUE(WriteText(l.memory + "/allot/t1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n").ok());
  EXPECT_TRUE(cg->OomKilled());
}

TEST_F(FakeCgroupRootTest, V1CapsSwapToNothingWhereTheKernelAccountsIt) {
  CgroupLayout l;
  l.mode = CgroupMode::kV1;
  l.memory = Dir("memory");
  ASSERT_TRUE(WriteText(Dir("memory/allot/t1") + "/memory.memsw.limit_in_bytes", "9223372036854771712").ok());
  auto cg = TaskCgroup::Create(l, "allot", "t1", CgroupLimits{0, 64, 0});
  ASSERT_TRUE(cg) << cg.error().ToString();
  EXPECT_EQ(Read(l.memory + "/allot/t1/memory.memsw.limit_in_bytes"), "67108864");
}

TEST_F(FakeCgroupRootTest, ALimitWithoutItsControllerIsRefusedNamingTheController) {
  CgroupLayout l;
  l.mode = CgroupMode::kV1;
  l.cpu = Dir("cpu");
  ASSERT_TRUE(PrepareCgroupGroup(l, "allot"));
  auto cg = TaskCgroup::Create(l, "allot", "t1", CgroupLimits{0, 64, 0});
  ASSERT_FALSE(cg);
  EXPECT_EQ(cg.error().code(), Code::kFailedPrecondition);
  EXPECT_THAT(cg.error().message(), HasSubstr("no memory controller"));
  EXPECT_FALSE(std::filesystem::exists(l.cpu + "/allot/t1"));  // what was made is removed again
}

}  // namespace
}  // namespace allot
