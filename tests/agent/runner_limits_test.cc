// Limits enforced by the kernel through the runner's cgroups on this machine (hybrid here: v1
// memory, cpu and pids; v2 for the kill): a task over its memory is OOM-killed and reported so,
// pids.max stops a fork bomb, the CPU quota throttles, and what a task leaves running when it
// exits is killed and its cgroup emptied (kept for the next task with the same limits). Skipped
// only where cgroups cannot be written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "agent/run/runner.h"
#include "agent/runner_fixture.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunnerTest;

class RunnerLimitsTest : public RunnerTest {
 protected:
  void SetUp() override {
    runner_ = Make(SandboxMode::kNone);
    ASSERT_NE(runner_, nullptr);
    if (!runner_->limits_enforced()) GTEST_SKIP() << runner_->description();
  }
  // Two GPU device nodes, nvidia0 and nvidia1, mknod'd under the scratch directory and open to
  // every uid (past the umask: the tenant's uid opens them).
  void MakeTwoGpus(std::vector<DeviceNode>& nodes) {
    std::filesystem::create_directories(Dev());
    for (unsigned minor : {0u, 1u}) {
      const std::string path = Dev() + "/nvidia" + std::to_string(minor);
      ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, makedev(195, minor)), 0) << path << ": " << ErrnoText(errno);
      ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
      nodes.push_back({path, "/dev/nvidia" + std::to_string(minor), 'c', 195, minor});
    }
  }
  // A task's shell command that opens both and prints what open() gave each ("0 opened", "1 EPERM").
  std::string ProbeBothGpus() const {
    return "for k in 0 1; do python3 -c 'import os,sys,errno\ntry:\n os.open(sys.argv[1], os.O_RDWR)\n "
           "print(sys.argv[2], \"opened\")\nexcept OSError as e:\n print(sys.argv[2], errno.errorcode[e.errno])' " +
           Dev() + "/nvidia$k $k; done";
  }
  std::string Dev() const { return (dir_ / "dev").string(); }
  std::unique_ptr<Runner> runner_;
};

int64_t Counter(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string key;
  int64_t value = 0;
  while (in >> key >> value)
    if (key == name) return value;
  return -1;
}

TEST_F(RunnerLimitsTest, ATaskOverItsMemoryLimitIsOomKilledAndReportedSo) {
  TaskLaunch l = Launch("hog", {"python3", "-c", "b = b'x' * (300 << 20)\nprint('survived', len(b))"});
  l.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(l));
  auto e = WaitFor(*runner_, "hog");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->oom_killed);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->reason, "killed by SIGKILL: memory limit 64 MiB exceeded (cgroup OOM kill)");
  EXPECT_THAT(Read(l.log_path), Not(HasSubstr("survived")));
}

TEST_F(RunnerLimitsTest, ATaskUnderItsMemoryLimitRunsToTheEnd) {
  TaskLaunch l = Launch("modest", {"python3", "-c", "b = b'x' * (16 << 20)\nprint('done', len(b))"});
  l.memory_mib = 128;
  ASSERT_TRUE(runner_->Start(l));
  auto e = WaitFor(*runner_, "modest");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->oom_killed);
  EXPECT_EQ(e->reason, "exited with code 0");
  EXPECT_THAT(Read(l.log_path), HasSubstr("done 16777216"));
}

TEST_F(RunnerLimitsTest, PidsMaxMakesForksFailPastTheLimit) {
  // Forks 100 sleeps under pids.max 20: python itself is one, so at most 19 start.
  const char* script =
      "import subprocess\n"
      "ok = failed = 0\n"
      "for _ in range(100):\n"
      "    try:\n"
      "        subprocess.Popen(['sleep', '5']); ok += 1\n"
      "    except OSError:\n"
      "        failed += 1\n"
      "print('started', ok, 'failed', failed)\n";
  TaskLaunch l = Launch("forker", {"python3", "-c", script});
  l.pids_max = 20;
  ASSERT_TRUE(runner_->Start(l));
  auto e = WaitFor(*runner_, "forker");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 0) << Read(l.log_path);
  int started = -1, failed = -1;
  std::string log = Read(l.log_path);
  ASSERT_EQ(std::sscanf(log.c_str(), "started %d failed %d", &started, &failed), 2) << log;
  EXPECT_LE(started, 19);
  EXPECT_GE(failed, 81);
}

TEST_F(RunnerLimitsTest, TheCpuQuotaIsWrittenAndThrottlesABusyLoop) {
  TaskLaunch l = Launch("spin", {"python3", "-c", "while True: pass"});
  l.cpu_millis = 200;  // a fifth of a core: 20 ms of each 100 ms period
  ASSERT_TRUE(runner_->Start(l));
  auto dirs = runner_->CgroupDirs("spin");
  ASSERT_TRUE(dirs);
  std::string cpu;
  for (const std::string& d : *dirs)
    if (Exists(d + "/cpu.cfs_quota_us") || Exists(d + "/cpu.max")) cpu = d;
  ASSERT_FALSE(cpu.empty());
  if (Exists(cpu + "/cpu.max")) EXPECT_EQ(Read(cpu + "/cpu.max"), "20000 100000\n");
  else EXPECT_EQ(Read(cpu + "/cpu.cfs_quota_us"), "20000\n");
  SleepMillis(600);
  EXPECT_GT(Counter(Read(cpu + "/cpu.stat"), "nr_throttled"), 0);
  ASSERT_TRUE(runner_->Kill("spin", "test over").ok());
  ASSERT_TRUE(WaitFor(*runner_, "spin"));
}

TEST_F(RunnerLimitsTest, WhatATaskLeavesRunningIsKilledAndItsCgroupLeftEmpty) {
  TaskLaunch l = Sh(Launch("leaver", {}), "sleep 30 & echo $! > \"$HOME/bg.pid\"; exit 0");
  ASSERT_TRUE(runner_->Start(l));
  auto dirs = runner_->CgroupDirs("leaver");
  ASSERT_TRUE(dirs);
  ASSERT_FALSE(dirs->empty());
  auto e = WaitFor(*runner_, "leaver");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "exited with code 0");
  pid_t bg = static_cast<pid_t>(std::stol(Read(l.work_dir + "/bg.pid")));
  // Gone, or a zombie its new parent has yet to reap; never still sleeping.
  std::string stat = Read("/proc/" + std::to_string(bg) + "/stat");
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << stat;
  // Kept for the next task with the same limits, with nothing in it; removed with the runner.
  for (const std::string& d : *dirs) EXPECT_THAT(ReadPids(d + "/cgroup.procs"), ::testing::IsEmpty()) << d;
  runner_.reset();
  for (const std::string& d : *dirs) EXPECT_FALSE(std::filesystem::exists(d)) << d;
}

// An emptied cgroup is kept (runner.h): the next task asking for the same limits runs in it as it
// is, a task with other limits gets cgroups of its own, written with its limits.
TEST_F(RunnerLimitsTest, TheNextTaskWithTheSameLimitsRunsInTheEmptiedCgroupAndOtherLimitsGetTheirOwn) {
  auto run = [&](const std::string& key, int64_t memory_mib, const std::string& script) {
    TaskLaunch l = Sh(Launch(key, {}), script);
    l.memory_mib = memory_mib;
    l.cpu_millis = 500;
    EXPECT_TRUE(runner_->Start(l)) << key;
    auto dirs = runner_->CgroupDirs(key);
    EXPECT_TRUE(dirs) << key;
    auto e = WaitFor(*runner_, key);
    EXPECT_TRUE(e) << key;
    return std::pair{dirs ? *dirs : std::vector<std::string>{}, e ? *e : TaskExit{}};
  };
  auto [first, first_end] = run("first", 64, "exit 0");
  auto [same, same_end] = run("same", 64, "exit 0");
  auto [other, other_end] = run("other", 96, "exit 0");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(same, first) << "the same limits: the emptied cgroup again";
  EXPECT_EQ(same_end.reason, "exited with code 0");
  EXPECT_NE(other, first) << "other limits: cgroups of its own";
  for (const std::string& d : other) {
    if (Exists(d + "/memory.limit_in_bytes")) {
      EXPECT_EQ(Read(d + "/memory.limit_in_bytes"), std::to_string(96 << 20) + "\n");
    }
    if (Exists(d + "/memory.max")) {
      EXPECT_EQ(Read(d + "/memory.max"), std::to_string(96 << 20) + "\n");
    }
  }
  // The kept one is still written with the first task's limits.
  for (const std::string& d : first)
    if (Exists(d + "/memory.limit_in_bytes")) {
      EXPECT_EQ(Read(d + "/memory.limit_in_bytes"), std::to_string(64 << 20) + "\n");
    }
}

// A kept cgroup given to another task still bears its first task's name: a new task of that name
// gets cgroups of its own, not the running one's directories.
TEST_F(RunnerLimitsTest, ANewTaskNamedAsTheCgroupAnotherTaskWasGivenGetsItsOwn) {
  TaskLaunch first = Sh(Launch("named", {}), "exit 0");
  first.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(first));
  ASSERT_TRUE(WaitFor(*runner_, "named"));
  TaskLaunch holder = Sh(Launch("holder", {}), "sleep 30");
  holder.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(holder));
  TaskLaunch again = Sh(Launch("named", {}), "sleep 30");
  again.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(again));
  auto held = runner_->CgroupDirs("holder");
  auto own = runner_->CgroupDirs("named");
  ASSERT_TRUE(held);
  ASSERT_TRUE(own);
  ASSERT_FALSE(held->empty());
  for (const std::string& d : *own) EXPECT_THAT(*held, Not(::testing::Contains(d)));
  auto pids = runner_->Pids("holder");
  ASSERT_TRUE(pids);
  for (const std::string& d : *own)
    for (pid_t p : ReadPids(d + "/cgroup.procs")) EXPECT_THAT(*pids, Not(::testing::Contains(p))) << d;
  for (const char* key : {"holder", "named"}) {
    ASSERT_TRUE(runner_->Kill(key, "test over").ok());
    ASSERT_TRUE(WaitFor(*runner_, key));
  }
}

// The kernel's OOM counter is the cgroup's, for all its life: a task run in a kept cgroup is not
// reported OOM-killed for the kill of the task before it.
TEST_F(RunnerLimitsTest, AnOomKillIsNotCarriedToTheNextTaskInTheSameCgroup) {
  TaskLaunch hog = Launch("hog1", {"python3", "-c", "b = b'x' * (300 << 20)"});
  hog.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(hog));
  auto dirs = runner_->CgroupDirs("hog1");
  ASSERT_TRUE(dirs);
  auto e = WaitFor(*runner_, "hog1");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->oom_killed);
  TaskLaunch calm = Sh(Launch("calm", {}), "exit 0");
  calm.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(calm));
  auto calm_dirs = runner_->CgroupDirs("calm");
  ASSERT_TRUE(calm_dirs);
  EXPECT_EQ(*calm_dirs, *dirs);
  auto c = WaitFor(*runner_, "calm");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->oom_killed);
  EXPECT_EQ(c->reason, "exited with code 0");
  // And a second kill in it is seen again.
  hog.key = "hog2";
  hog.log_path += "2";
  ASSERT_TRUE(runner_->Start(hog));
  auto e2 = WaitFor(*runner_, "hog2");
  ASSERT_TRUE(e2);
  EXPECT_TRUE(e2->oom_killed);
}

// A kept cgroup bears the name of the task that made it; a new task of that very name with other
// limits must not be handed the kept one's directories half-rewritten while it stays kept.
TEST_F(RunnerLimitsTest, ATaskNamedAsAKeptCgroupWithOtherLimitsGetsItFreshAndNoOneElseShares) {
  TaskLaunch a = Sh(Launch("again", {}), "exit 0");
  a.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(a));
  ASSERT_TRUE(WaitFor(*runner_, "again"));
  a.memory_mib = 128;
  a.argv = {"/bin/sh", "-c", "sleep 30"};
  ASSERT_TRUE(runner_->Start(a));
  auto dirs = runner_->CgroupDirs("again");
  ASSERT_TRUE(dirs);
  for (const std::string& d : *dirs)
    if (Exists(d + "/memory.limit_in_bytes")) {
      EXPECT_EQ(Read(d + "/memory.limit_in_bytes"), std::to_string(128 << 20) + "\n");
    }
  // A task with the old limits gets cgroups other than the running one's.
  TaskLaunch b = Sh(Launch("old-shape", {}), "exit 0");
  b.memory_mib = 64;
  ASSERT_TRUE(runner_->Start(b));
  auto b_dirs = runner_->CgroupDirs("old-shape");
  ASSERT_TRUE(b_dirs);
  EXPECT_NE(*b_dirs, *dirs);
  ASSERT_TRUE(WaitFor(*runner_, "old-shape"));
  ASSERT_TRUE(runner_->Kill("again", "test over").ok());
  ASSERT_TRUE(WaitFor(*runner_, "again"));
}

// Device programs are loaded once per GPU set and shared (device_cgroup.h): tasks on the same
// GPU share one, a task on another GPU gets its own, and each still opens only its own GPU.
TEST_F(RunnerLimitsTest, TasksOnTheSameGpuShareOneDeviceProgramAndATaskOnAnotherGpuGetsItsOwn) {
  if (!runner_->devices_confined()) GTEST_SKIP() << "SKIPPED LOUDLY: " << runner_->description();
  std::vector<DeviceNode> nodes;
  ASSERT_NO_FATAL_FAILURE(MakeTwoGpus(nodes));
  // Each task tries both nodes (no sandbox: it can name them), says what open() gave, and waits.
  const std::string probe = ProbeBothGpus() + "; echo done; sleep 30";
  const std::vector<std::pair<std::string, unsigned>> tasks = {{"on0-a", 0}, {"on0-b", 0}, {"on1", 1}};
  std::map<std::string, std::vector<uint32_t>> ids;
  for (const auto& [key, gpu] : tasks) {
    TaskLaunch l = Sh(Launch(key, {}), probe);
    l.devices = {nodes[gpu]};
    ASSERT_TRUE(runner_->Start(l)) << key;
  }
  for (const auto& [key, gpu] : tasks) {
    auto dirs = runner_->CgroupDirs(key);
    ASSERT_TRUE(dirs);
    ASSERT_FALSE(dirs->empty());
    if (!DetectCgroups().v2.empty()) {  // the task's v2 directory comes first
      auto attached = AttachedDeviceProgramIds(dirs->front());
      ASSERT_TRUE(attached) << attached.error().ToString();
      ids[key] = *attached;
    }
    const std::string log = (dir_ / "logs" / (key + ".log")).string();
    for (int waited = 0; waited < 5000 && Read(log).find("done") == std::string::npos; waited += 10) SleepMillis(10);
    const std::string mine = std::to_string(gpu), other = std::to_string(1 - gpu);
    EXPECT_THAT(Read(log), HasSubstr(mine + " ENXIO")) << key << ": its own GPU gets past the cgroup (no driver)";
    EXPECT_THAT(Read(log), HasSubstr(other + " EPERM")) << key << ": the other GPU is refused";
  }
  if (!ids.empty()) {  // a v2 tree: one program per GPU set
    ASSERT_EQ(ids["on0-a"].size(), 1u);
    EXPECT_EQ(ids["on0-b"], ids["on0-a"]);
    ASSERT_EQ(ids["on1"].size(), 1u);
    EXPECT_NE(ids["on1"], ids["on0-a"]);
  }
  for (const auto& [key, gpu] : tasks) {
    ASSERT_TRUE(runner_->Kill(key, "test over").ok());
    ASSERT_TRUE(WaitFor(*runner_, key));
  }
}

// A kept cgroup is handed only to a task with the same device rules: the next task on the same GPU
// runs in it and is still refused the other GPU; a task on the other GPU gets cgroups of its own
// and is refused the first.
TEST_F(RunnerLimitsTest, AKeptCgroupConfinesTheNextTaskToItsOwnGpuAndAnotherGpuGetsItsOwnCgroup) {
  if (!runner_->devices_confined()) GTEST_SKIP() << "SKIPPED LOUDLY: " << runner_->description();
  std::vector<DeviceNode> nodes;
  ASSERT_NO_FATAL_FAILURE(MakeTwoGpus(nodes));
  const std::string probe = ProbeBothGpus();
  std::map<std::string, std::vector<std::string>> dirs;
  for (const auto& [key, gpu] : std::vector<std::pair<std::string, unsigned>>{{"first0", 0}, {"next0", 0}, {"then1", 1}}) {
    TaskLaunch l = Sh(Launch(key, {}), probe);
    l.devices = {nodes[gpu]};
    ASSERT_TRUE(runner_->Start(l)) << key;
    auto d = runner_->CgroupDirs(key);
    ASSERT_TRUE(d) << key;
    dirs[key] = *d;
    auto e = WaitFor(*runner_, key);
    ASSERT_TRUE(e) << key;
    EXPECT_EQ(e->exit_code, 0) << key;
    const std::string log = Read(l.log_path), mine = std::to_string(gpu), other = std::to_string(1 - gpu);
    EXPECT_THAT(log, HasSubstr(mine + " ENXIO")) << key << ": its own GPU gets past the cgroup (no driver)";
    EXPECT_THAT(log, HasSubstr(other + " EPERM")) << key << ": the other GPU is refused";
  }
  EXPECT_EQ(dirs["next0"], dirs["first0"]) << "the same GPU: the kept cgroup";
  EXPECT_NE(dirs["then1"], dirs["first0"]) << "another GPU: cgroups of its own";
}

}  // namespace
}  // namespace allot
