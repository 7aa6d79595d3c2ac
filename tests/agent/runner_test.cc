// The runner with real processes, with and without the bubblewrap sandbox: exit codes and signals
// as the task saw them, the log, a clean environment, refusals that name what is wrong, Kill and
// the time limit.
#include "agent/run/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <sstream>
#include <thread>

#include "agent/runner_fixture.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunnerTest;

class RunnerModeTest : public RunnerTest, public ::testing::WithParamInterface<SandboxMode> {
 protected:
  void SetUp() override {
    if (std::string why = testing::SandboxMissing(GetParam()); !why.empty()) GTEST_SKIP() << why;
    runner_ = Make(GetParam());
    ASSERT_NE(runner_, nullptr);
  }
  std::unique_ptr<Runner> runner_;
};

TEST_P(RunnerModeTest, ReportsExitCodeThreeAndAppendsStdoutAndStderrToTheLog) {
  TaskLaunch l = Sh(Launch("exit3", {}), "echo to-stdout; echo to-stderr >&2; exit 3");
  std::filesystem::create_directories(std::filesystem::path(l.log_path).parent_path());
  ASSERT_TRUE(WriteText(l.log_path, "earlier run\n").ok());
  auto pid = runner_->Start(l);
  ASSERT_TRUE(pid) << pid.error().ToString();
  EXPECT_THAT(runner_->Running(), ::testing::ElementsAre("exit3"));
  auto e = WaitFor(*runner_, "exit3");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->signal, 0);
  EXPECT_FALSE(e->oom_killed || e->time_limit_exceeded || e->preempted);
  EXPECT_EQ(e->reason, "exited with code 3");
  EXPECT_LE(e->started_ms, e->ended_ms);
  EXPECT_EQ(Read(l.log_path), "earlier run\nto-stdout\nto-stderr\n");
  EXPECT_TRUE(runner_->Running().empty());
}

TEST_P(RunnerModeTest, ReportsTheSignalThatKilledTheTask) {
  ASSERT_TRUE(runner_->Start(Sh(Launch("segv", {}), "kill -SEGV $$")));
  auto e = WaitFor(*runner_, "segv");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, -1);
  EXPECT_EQ(e->signal, SIGSEGV);
  EXPECT_EQ(e->reason, "killed by SIGSEGV");
}

TEST_P(RunnerModeTest, StartsFromACleanEnvironmentPlusTheTasksOwnVariables) {
  ::setenv("ALLOT_RUNNER_TEST_LEAK", "agent-secret", 1);
  TaskLaunch l = Sh(Launch("env", {}), "env");
  l.env.emplace_back("ALLOT_JOB_ID", "job-7");
  l.env.emplace_back("LANG", "en_US.UTF-8");  // a task's own value replaces the default
  ASSERT_TRUE(runner_->Start(l));
  auto e = WaitFor(*runner_, "env");
  ::unsetenv("ALLOT_RUNNER_TEST_LEAK");
  ASSERT_TRUE(e);
  const std::string log = Read(l.log_path);
  EXPECT_THAT(log, HasSubstr("HOME=" + l.work_dir + "\n"));
  EXPECT_THAT(log, HasSubstr("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"));
  EXPECT_THAT(log, HasSubstr("ALLOT_JOB_ID=job-7\n"));
  EXPECT_THAT(log, HasSubstr("LANG=en_US.UTF-8\n"));
  EXPECT_THAT(log, Not(HasSubstr("C.UTF-8")));
  EXPECT_THAT(log, Not(HasSubstr("agent-secret")));
}

TEST_P(RunnerModeTest, KillEndsTheTaskAtOnceWithTheGivenReason) {
  ASSERT_TRUE(runner_->Start(Sh(Launch("victim", {}), "sleep 30")));
  ASSERT_TRUE(runner_->Kill("victim", "node draining").ok());
  auto e = WaitFor(*runner_, "victim", 3000);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->reason, "killed: node draining");
  EXPECT_EQ(runner_->Kill("victim", "again").code(), Code::kNotFound);
}

TEST_P(RunnerModeTest, ATaskOverItsTimeLimitIsKilledAndReportedSo) {
  TaskLaunch l = Sh(Launch("slow", {}), "sleep 30");
  l.time_limit_ms = 300;
  ASSERT_TRUE(runner_->Start(l));
  auto e = WaitFor(*runner_, "slow", 4000);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->time_limit_exceeded);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->reason, "killed: time limit 300 ms exceeded");
  EXPECT_GE(e->ended_ms - e->started_ms, 300);
  EXPECT_LT(e->ended_ms - e->started_ms, 3000);
}

// StartAll: the agent starts a Reconcile's tasks at once, their set-ups overlapping.
TEST_P(RunnerModeTest, StartAllStartsEachTaskWhichReportsItsOwnExit) {
  for (bool wait : {true, false}) {
    const std::string w = wait ? "w" : "n";
    std::vector<TaskLaunch> ls = {Sh(Launch("all-a-" + w, {}), "exit 0"), Sh(Launch("all-b-" + w, {}), "exit 4"),
                                  Sh(Launch("all-c-" + w, {}), "echo hi")};
    auto pids = runner_->StartAll(ls, wait);
    ASSERT_EQ(pids.size(), 3u);
    for (const auto& p : pids) ASSERT_TRUE(p) << p.error().ToString();
    EXPECT_NE(*pids[0], *pids[1]);
    std::map<std::string, TaskExit> ended;  // WaitFor would drop the others' exits it polls
    for (int i = 0; i < 400 && ended.size() < 3; ++i) {
      for (TaskExit& e : runner_->Poll()) ended.emplace(e.key, e);
      SleepMillis(20);
    }
    ASSERT_EQ(ended.size(), 3u);
    const TaskExit* a = &ended.at("all-a-" + w);
    const TaskExit* b = &ended.at("all-b-" + w);
    const TaskExit* c = &ended.at("all-c-" + w);
    EXPECT_EQ(a->exit_code, 0);
    EXPECT_EQ(b->exit_code, 4);
    EXPECT_EQ(b->reason, "exited with code 4");
    EXPECT_EQ(c->exit_code, 0);
    EXPECT_EQ(Read(ls[2].log_path), "hi\n");
  }
}

// A batch's children are cloned by the runner's threads as well as the caller's; with bwrap's
// --die-with-parent a task dies with the thread that cloned it, so those threads must outlive
// the batch: tasks still running after StartAll returned (and after a later batch) end as they
// chose, not by SIGKILL.
TEST_P(RunnerModeTest, TasksOfABatchOutliveTheCallThatStartedThem) {
  std::vector<TaskLaunch> first, second;
  for (int i = 0; i < 4; ++i) first.push_back(Sh(Launch("long-" + std::to_string(i), {}), "sleep 0.5; exit 5"));
  for (int i = 0; i < 2; ++i) second.push_back(Sh(Launch("later-" + std::to_string(i), {}), "exit 6"));
  for (const auto& p : runner_->StartAll(first, false)) ASSERT_TRUE(p) << p.error().ToString();
  SleepMillis(100);
  for (const auto& p : runner_->StartAll(second, false)) ASSERT_TRUE(p) << p.error().ToString();
  std::map<std::string, TaskExit> ended;
  for (int i = 0; i < 400 && ended.size() < 6; ++i) {
    for (TaskExit& e : runner_->Poll()) ended.emplace(e.key, e);
    SleepMillis(20);
  }
  ASSERT_EQ(ended.size(), 6u);
  for (int i = 0; i < 4; ++i) {
    const TaskExit& e = ended.at("long-" + std::to_string(i));
    EXPECT_EQ(e.exit_code, 5) << e.key << ": " << e.reason;
    EXPECT_EQ(e.signal, 0) << e.key << ": " << e.reason;
  }
  for (int i = 0; i < 2; ++i) EXPECT_EQ(ended.at("later-" + std::to_string(i)).exit_code, 6);
}

TEST_P(RunnerModeTest, StartAllRefusesAKeyTwiceInOneCallAndStartsTheRest) {
  auto pids = runner_->StartAll({Sh(Launch("twice", {}), "exit 0"), Sh(Launch("twice", {}), "exit 1")});
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_TRUE(pids[0]) << pids[0].error().ToString();
  ASSERT_FALSE(pids[1]);
  EXPECT_EQ(pids[1].error().code(), Code::kConflict);
  EXPECT_THAT(pids[1].error().message(), HasSubstr("'twice'"));
  auto e = WaitFor(*runner_, "twice");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 0);
}

// A step before exec that fails (here: the log is a symlink, which the child refuses to open):
// Start says so at once; StartAll without waiting for exec returns the pid, and Poll reports the
// task as exited 127 with the same step named.
TEST_P(RunnerModeTest, ASetUpFailureWithoutWaitingForExecEndsAsCouldNotStart) {
  for (bool wait : {true, false}) {
    TaskLaunch l = Sh(Launch(std::string("badlog-") + (wait ? "w" : "n"), {}), "exit 0");
    std::filesystem::create_directories(std::filesystem::path(l.log_path).parent_path());
    ASSERT_EQ(::symlink("/dev/null", l.log_path.c_str()), 0);
    auto pids = runner_->StartAll({l}, wait);
    if (wait) {
      ASSERT_FALSE(pids[0]);
      EXPECT_THAT(pids[0].error().message(), HasSubstr("opening log " + l.log_path));
      EXPECT_TRUE(runner_->Running().empty());
      continue;
    }
    ASSERT_TRUE(pids[0]) << pids[0].error().ToString();
    auto e = WaitFor(*runner_, l.key);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->exit_code, 127);
    EXPECT_EQ(e->signal, 0);
    EXPECT_THAT(e->reason, HasSubstr("could not start: starting task " + l.key + ": opening log " + l.log_path));
    EXPECT_TRUE(runner_->Running().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RunnerModeTest, ::testing::Values(SandboxMode::kNone, SandboxMode::kBwrap, SandboxMode::kNative),
                         testing::ModeName);

// A task's log holds what it printed: the agent's file, readable by the task's own group (its
// tenant's uid and gid are one number) when it runs as its tenant, else by the agent's user
// only; a log an older agent left 0644 is tightened when the task opens it.
TEST_F(RunnerTest, TheTaskLogIsTheAgentsAndReadableOnlyByTheTasksOwnGroup) {
  auto runner = Make(SandboxMode::kNone);
  ASSERT_NE(runner, nullptr);
  TaskLaunch l = Sh(Launch("modes", {}), "id -g");
  std::filesystem::create_directories(std::filesystem::path(l.log_path).parent_path());
  ASSERT_TRUE(WriteText(l.log_path, "").ok());
  ASSERT_EQ(::chmod(l.log_path.c_str(), 0644), 0);
  ASSERT_TRUE(runner->Start(l));
  auto e = WaitFor(*runner, "modes");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->exit_code, 0);
  struct stat st;
  ASSERT_EQ(::stat(l.log_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the agent's";
  if (runner->per_tenant_users()) {
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(std::to_string(st.st_gid) + "\n", Read(l.log_path)) << "the group is the task's own";
  } else {
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

// The child shares the agent's memory until its exec (spawn.h): dropping to the tenant's uid
// there must change the child alone (glibc's setuid would take its every-thread path, with
// locks and signals meant for the agent's threads; the child makes the raw system calls). The
// agent's own threads, another one running meanwhile, keep their ids; the task runs as its
// tenant.
TEST_F(RunnerTest, DroppingToTheTenantsUidChangesTheTaskAloneNotAThreadOfTheAgent) {
  auto runner = Make(SandboxMode::kNone);
  ASSERT_NE(runner, nullptr);
  if (!runner->per_tenant_users()) GTEST_SKIP() << "SKIPPED LOUDLY: needs root (tasks run as the agent's uid)";
  auto ids = [] {
    std::map<std::string, std::string> out;  // thread id -> its Uid: and Gid: lines
    for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
      std::string status = Read(t.path().string() + "/status"), lines;
      std::istringstream in(status);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("Uid:", 0) == 0 || line.rfind("Gid:", 0) == 0 || line.rfind("Groups:", 0) == 0) lines += line + "\n";
      out[t.path().filename().string()] = lines;
    }
    return out;
  };
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop) SleepMillis(1);
  });
  const auto before = ids();
  TaskLaunch l = Sh(Launch("as-tenant", {}), "id -u");
  ASSERT_TRUE(runner->Start(l));
  auto e = WaitFor(*runner, "as-tenant");
  const auto after = ids();
  stop = true;
  other.join();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 0);
  auto uid = runner->TenantUid("research/nlp");
  ASSERT_TRUE(uid);
  EXPECT_EQ(Read(l.log_path), std::to_string(*uid) + "\n");
  EXPECT_GE(before.size(), 2u);
  EXPECT_EQ(after, before);
  EXPECT_EQ(::getuid(), 0u);
  EXPECT_EQ(::getgid(), 0u);
}

TEST_F(RunnerTest, StartRefusesAMissingCommandNamingIt) {
  auto runner = Make(SandboxMode::kNone);
  ASSERT_NE(runner, nullptr);
  auto pid = runner->Start(Launch("missing", {"no-such-command-xyz", "--flag"}));
  ASSERT_FALSE(pid);
  EXPECT_EQ(pid.error().code(), Code::kNotFound);
  EXPECT_THAT(pid.error().message(), HasSubstr("command 'no-such-command-xyz' not found in PATH=/usr/local/sbin"));
  EXPECT_TRUE(runner->Running().empty());
}

TEST_F(RunnerTest, StartRefusesAnInvalidOrDuplicateKeyAndRelativePaths) {
  auto runner = Make(SandboxMode::kNone);
  ASSERT_NE(runner, nullptr);
  EXPECT_THAT(runner->Start(Launch("a/b", {"true"})).error().message(), HasSubstr("key 'a/b'"));
  TaskLaunch rel = Launch("rel", {"true"});
  rel.work_dir = "relative";
  EXPECT_THAT(runner->Start(rel).error().message(), HasSubstr("work_dir 'relative'"));
  TaskLaunch exposed = Launch("exposed", {"true"});
  exposed.preempt_file = root() + "/preempt";  // binding its directory would show every tenant
  EXPECT_THAT(runner->Start(exposed).error().message(), HasSubstr("would expose the work root"));
  ASSERT_TRUE(runner->Start(Sh(Launch("dup", {}), "sleep 5")));
  auto again = runner->Start(Sh(Launch("dup", {}), "sleep 5"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Code::kConflict);
}

TEST_F(RunnerTest, RunsWithoutLimitsAndSaysSoWhenCgroupsAreNotWritable) {
  RunnerOptions o = Options(SandboxMode::kNone);
  CgroupLayout unwritable;
  unwritable.mode = CgroupMode::kV1;
  unwritable.memory = "/proc/allot-no-such-cgroup";
  o.cgroups = unwritable;
  auto runner = Runner::Create(o);
  ASSERT_TRUE(runner) << runner.error().ToString();
  EXPECT_FALSE((*runner)->limits_enforced());
  EXPECT_THAT((*runner)->description(), HasSubstr("cgroups not writable"));
  EXPECT_THAT((*runner)->description(), HasSubstr("WITHOUT cpu, memory and pids limits"));
  TaskLaunch l = Sh(Launch("unlimited", {}), "exit 0");
  l.memory_mib = 64;
  ASSERT_TRUE((*runner)->Start(l));
  auto e = WaitFor(**runner, "unlimited");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "exited with code 0");
}

TEST_F(RunnerTest, RunsALimitNoControllerHereCarriesWithoutItAndSaysSo) {
  // A fake v2 root whose own cgroup is given memory alone (as on the H100 VM this was seen on): a
  // task asking 2 cores and 64 MiB starts, its memory limited and no cpu.max written.
  RunnerOptions o = Options(SandboxMode::kNone);
  o.confine_devices = false;  // no BPF program can attach to a fake cgroup
  CgroupLayout fake;
  fake.mode = CgroupMode::kV2;
  fake.v2 = (dir_ / "cgroupfs" / "own").string();
  std::filesystem::create_directories(fake.v2 + "/" + o.cgroup_group);
  ASSERT_TRUE(WriteText(fake.v2 + "/cgroup.controllers", "memory\n").ok());
  ASSERT_TRUE(WriteText(fake.v2 + "/" + o.cgroup_group + "/cgroup.controllers", "memory\n").ok());
  const std::string cg = fake.v2 + "/" + o.cgroup_group + "/half-limited";
  std::filesystem::create_directories(cg);
  ASSERT_TRUE(WriteText(cg + "/cgroup.procs", "").ok());  // the file the kernel would make
  o.cgroups = fake;
  auto runner = Runner::Create(o);
  ASSERT_TRUE(runner) << runner.error().ToString();
  ASSERT_TRUE((*runner)->limits_enforced());
  EXPECT_THAT((*runner)->description(), HasSubstr("tasks run WITHOUT cpu, pids limits (no cpu, pids controller given to " + fake.v2));
  EXPECT_THAT((*runner)->IsolationGaps(), ::testing::ElementsAre("cpu limit", "pids limit", "device cgroup", "sandbox"));
  TaskLaunch l = Sh(Launch("half-limited", {}), "exit 0");
  l.cpu_millis = 2000;
  l.memory_mib = 64;
  auto started = (*runner)->Start(l);  // a task does not fail for a limit the host cannot carry
  ASSERT_TRUE(started) << started.error().ToString();
  EXPECT_EQ(*ReadText(cg + "/memory.max"), "67108864");
  EXPECT_FALSE(std::filesystem::exists(cg + "/cpu.max"));
  EXPECT_FALSE(std::filesystem::exists(cg + "/pids.max"));
}

TEST_F(RunnerTest, StartFailsNamingTheCgroupTheTaskCouldNotJoin) {
  // A fake v1 root where the task's cgroup.procs is a directory: the child's write fails before
  // exec, and the error crosses back through the spawn pipe.
  RunnerOptions o = Options(SandboxMode::kNone);
  CgroupLayout fake;
  fake.mode = CgroupMode::kV1;
  fake.pids = (dir_ / "cgroupfs" / "pids").string();
  std::filesystem::create_directories(fake.pids + "/" + o.cgroup_group + "/refused/cgroup.procs");
  o.cgroups = fake;
  auto runner = Runner::Create(o);
  ASSERT_TRUE(runner) << runner.error().ToString();
  ASSERT_TRUE((*runner)->limits_enforced());
  auto pid = (*runner)->Start(Launch("refused", {"true"}));
  ASSERT_FALSE(pid);
  EXPECT_THAT(pid.error().message(), HasSubstr("joining cgroup " + fake.pids + "/" + o.cgroup_group +
                                               "/refused/cgroup.procs (cgroup write refused): Is a directory"));
  EXPECT_TRUE((*runner)->Running().empty());
}

}  // namespace
}  // namespace allot
