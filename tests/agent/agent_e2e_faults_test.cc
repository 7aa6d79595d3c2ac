// allotd and allot-agent as real processes when the agent itself fails: killed (kill -9), its
// tasks go with it and its next run clears what was left before it registers; stopped (SIGSTOP),
// its watchdog kills its task before the job runs elsewhere and it registers again on resuming;
// given a work directory its tasks' uids cannot enter, it refuses to start.
#include <sys/stat.h>

#include "agent/agent_e2e_fixture.h"
#include "agent/run/cgroup_layout.h"
#include "agent/run/sys_files.h"
#include "testing/text.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n";
constexpr const char* kWholeNode = R"({"gpus": 8, "cpu": 1, "memory": "256Mi"})";

// Gone, or a zombie its new parent has not reaped yet: either way it runs no more.
bool Gone(pid_t pid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  return !stat || stat->find(") Z") != std::string::npos;
}

class AgentFaultsTest : public AgentE2eTest {
 protected:
  std::string AgentLog(const std::string& node) { return ReadFile(dir_ / node / "agent.log"); }
  bool LogHas(const std::string& node, const std::string& text) { return AgentLog(node).find(text) != std::string::npos; }
  // The agent's cgroup group, as the fixture names it.
  std::string Group(const std::string& node) { return "allot-e2e-" + std::to_string(::getpid()) + "-" + node; }
  pid_t ReadPid(const fs::path& file) { return static_cast<pid_t>(std::atoi(ReadFile(file).c_str())); }
  // Waits for the agent's exit; its status, or -1 when it still runs.
  int WaitExit(pid_t pid, double seconds) {
    int status = 0;
    bool exited = WaitFor(seconds, [&] { return ::waitpid(pid, &status, WNOHANG) == pid; });
    return exited ? status : -1;
  }
};

// --sandbox none: nothing but the watchdog (a child of the agent that outlives it) stops the task.
TEST_F(AgentFaultsTest, AKilledAgentTakesItsTasksWithItAndItsNextRunClearsWhatWasLeftBeforeRegistering) {
  StartAllotd(kTenants, {"--node-timeout", "3s"});
  StartAgent("gpu-a", "", {"--sandbox", "none"});
  WaitReady("gpu-a");
  Submit("solo", "research", "echo $$ > task.pid; sleep 300 & echo $! > child.pid; echo STARTED; while :; do sleep 0.1; done",
         kWholeNode);
  WaitLog("solo", "STARTED", 0, 0);
  fs::path task_dir = TaskDir("gpu-a", "research");
  pid_t task = ReadPid(task_dir / "task.pid"), child = ReadPid(task_dir / "child.pid");
  ASSERT_GT(task, 0);
  ASSERT_GT(child, 0);
  ASSERT_FALSE(Gone(task) || Gone(child));
  std::string log = AgentLog("gpu-a");
  size_t at = log.find("watchdog (pid ");
  pid_t watchdog = at == std::string::npos ? 0 : std::atoi(log.c_str() + at + 14);

  pid_t agent = AgentPid("gpu-a");
  ::kill(agent, SIGKILL);
  ::waitpid(agent, nullptr, 0);
  EXPECT_TRUE(WaitFor(5, [&] { return Gone(task) && Gone(child); })) << "the task outlived its agent";
  // Its own sweep over, the watchdog is gone: what follows is left for the next run alone.
  ASSERT_TRUE(watchdog > 0 && WaitFor(5, [&] { return Gone(watchdog); })) << "the watchdog outlived its agent:\n" << log;

  // What a crash leaves for the next run: a task cgroup with a process in it, a MIG instance (in
  // the fake NVML's config, its state file gone), a preempt file.
  CgroupLayout layout = DetectCgroups();
  std::vector<std::string> left;
  for (const std::string& own : {layout.v2, layout.cpu, layout.memory, layout.pids}) {
    if (own.empty()) continue;
    fs::create_directories(own + "/" + Group("gpu-a") + "/j99.0.r0");
    left.push_back(own + "/" + Group("gpu-a") + "/j99.0.r0");
  }
  ASSERT_FALSE(left.empty()) << "no cgroups here";
  pid_t stray = ::fork();
  if (stray == 0) {
    ::execl("/bin/sleep", "sleep", "300", nullptr);
    _exit(127);
  }
  for (const std::string& dir : left) ASSERT_TRUE(WriteText(dir + "/cgroup.procs", std::to_string(stray), IfMissing::kFail).ok());
  fs::create_directories(task_dir / ".allot");
  std::ofstream(task_dir / ".allot" / "preempt-j99.0.r0") << "1\n";

  fs::remove(dir_ / "gpu-a" / "nvml.conf.state");
  StartAgent("gpu-a", "gpu index=0 mig=on\ngi gpu=0 profile=9 start=4\n", {"--sandbox", "none"});
  ASSERT_TRUE(WaitFor(20, [&] { return testing::Occurrences(AgentLog("gpu-a"), "registered node 'gpu-a'") == 2; })) << AgentLog("gpu-a");
  log = AgentLog("gpu-a");
  size_t cleaned = log.find("cleaned up after a previous run: 1 task cgroup(s) removed (1 process(es) killed), "
                            "1 MIG instance(s) destroyed, 1 preempt file(s) removed\n");
  EXPECT_NE(cleaned, std::string::npos) << log;
  EXPECT_LT(cleaned, log.rfind("registered node 'gpu-a'")) << "cleaned up before registering";
  for (const std::string& dir : left) EXPECT_FALSE(fs::exists(dir)) << dir;
  int status = 0;
  ASSERT_EQ(::waitpid(stray, &status, 0), stray);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the process left in the cgroup: " << status;
  EXPECT_FALSE(fs::exists(task_dir / ".allot" / "preempt-j99.0.r0"));
}

// A stopped agent cannot fence: its watchdog does, within the lease (2 s of the 3 s node timeout).
TEST_F(AgentFaultsTest, AStoppedAgentsWatchdogKillsItsTaskBeforeTheJobRunsElsewhereAndItRegistersAgainOnResuming) {
  StartAllotd(kTenants, {"--node-timeout", "3s"});
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  // Each run appends "start T" then "alive T" every 0.1 s to its node's directory (T: wall s).
  Submit("solo", "research",
         "echo \"start $(date +%s.%N)\" >> marks; echo STARTED; "
         "while :; do echo \"alive $(date +%s.%N)\" >> marks; sleep 0.1; done",
         kWholeNode);
  WaitLog("solo", "STARTED", 0, 0);
  StartAgent("gpu-b");
  WaitReady("gpu-b");

  ::kill(AgentPid("gpu-a"), SIGSTOP);
  fs::path marks_a = TaskDir("gpu-a", "research") / "marks", marks_b = TaskDir("gpu-b", "research") / "marks";
  ASSERT_TRUE(WaitFor(20, [&] { return fs::exists(marks_b); })) << "the job did not run on gpu-b: " << Job("solo").dump();
  EXPECT_EQ(Condition("gpu-a"), "down");
  EXPECT_TRUE(LogHas("gpu-a", "watchdog: the agent's lease ran out")) << AgentLog("gpu-a");

  // Half a second after gpu-b's start, a run still alive on gpu-a would have marked it 5 times.
  ASSERT_TRUE(WaitFor(10, [&] { return MarkTimes(ReadFile(marks_b), "alive").size() >= 5; }));
  ExpectEndedBeforeStart(marks_a, marks_b);

  // Resumed: gpu-a fences (its lease is long gone), registers afresh and does not run the job.
  size_t a_marks = ReadFile(marks_a).size();
  ::kill(AgentPid("gpu-a"), SIGCONT);
  ASSERT_TRUE(WaitFor(10, [&] { return LogHas("gpu-a", "fenced: no heartbeat answered"); })) << AgentLog("gpu-a");
  WaitReady("gpu-a");
  EXPECT_EQ(testing::Occurrences(AgentLog("gpu-a"), "registered node 'gpu-a'"), 2);
  EXPECT_EQ(State("solo"), "running");
  EXPECT_EQ(Get("/v1/nodes/gpu-b")["jobs"], Json::array({"solo"}));
  EXPECT_EQ(ReadFile(marks_a).size(), a_marks) << "gpu-a's killed run stays dead";
  EXPECT_EQ(Job("solo").value("requeues", 0), 1) << "lost with its node, not failed: " << Job("solo").dump();
}

TEST_F(AgentFaultsTest, AnAgentRefusesAWorkDirectoryItsTasksUidsCannotEnterAndRegistersNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "tasks run as their tenants' uids only under a root agent";
  StartAllotd(kTenants);
  fs::create_directories(dir_ / "gpu-a");
  fs::permissions(dir_ / "gpu-a", fs::perms::owner_all);  // mkdtemp's mode
  StartAgent("gpu-a");
  int status = WaitExit(AgentPid("gpu-a"), 10);
  if (status != -1) agents_.erase("gpu-a");  // reaped: TearDown must not signal its pid
  ASSERT_NE(status, -1) << "the agent is running: " << AgentLog("gpu-a");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
  EXPECT_TRUE(LogHas("gpu-a", "allot-agent: --work-dir " + (dir_ / "gpu-a" / "work").string() +
                                  ": tasks run as uid 200000, which cannot enter " + (dir_ / "gpu-a").string() +
                                  " (mode 0700, owner 0)\n"))
      << AgentLog("gpu-a");
  EXPECT_EQ(Call("GET", "/v1/nodes/gpu-a").first, 404);
}

}  // namespace
}  // namespace allot
