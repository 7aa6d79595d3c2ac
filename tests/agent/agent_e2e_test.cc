// allotd and allot-agent as real processes: a command job runs as a real, confined process with
// the environment and limits it asked for; a gang spans two agents; a task over its memory limit
// is OOM-killed by its cgroup and the job fails saying so.
#include <sys/stat.h>

#include <set>

#include "agent/agent_e2e_fixture.h"
#include "core/version.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AgentE2eTest;

// The memory limit of the agent's task `key`, read from the cgroup the agent made for it
// (<agent's own cgroup>/<group>/<key>, v1 memory controller or v2), or "" if none.
std::string TaskMemoryLimit(pid_t agent, const std::string& group, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(agent) + "/cgroup");
  std::string v1, v2;
  for (std::string line; std::getline(in, line);) {
    auto first = line.find(':'), second = line.find(':', first + 1);
    std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (path == "/") path = "";
    std::set<std::string> names;
    for (size_t s = 0; s <= controllers.size();) {
      size_t comma = controllers.find(',', s);
      names.insert(controllers.substr(s, comma - s));
      if (comma == std::string::npos) break;
      s = comma + 1;
    }
    if (names.count("memory")) v1 = "/sys/fs/cgroup/memory" + path + "/" + group + "/" + key + "/memory.limit_in_bytes";
    if (controllers.empty()) v2 = "/sys/fs/cgroup" + path + "/" + group + "/" + key + "/memory.max";
  }
  for (const std::string& p : {v1, v2}) {
    std::ifstream f(p);
    std::string limit;
    if (!p.empty() && f >> limit) return limit;
  }
  return "";
}

constexpr const char* kTenants = "tenants:\n  - {path: research}\n  - {path: prod}\n";

// The task prints its environment, its uid and its memory cgroup, then waits until the test has
// looked at its cgroup (a file `go` in its working directory).
constexpr const char* kShowEnv =
    "env | grep -E '^(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|ALLOT_[A-Z_]+)=' | sort; echo UID=$(id -u); "
    "echo STARTED; while [ ! -e go ]; do sleep 0.05; done; echo DONE";

TEST_F(AgentE2eTest, ACommandJobRunsAsAConfinedProcessWithItsGpusAndEnvironmentAndIsMeteredAndLogged) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  Submit("show-env", "research", kShowEnv, R"({"gpus": 2, "cpu": 1, "memory": "1Gi"})");
  std::string log = WaitLog("show-env", "STARTED");
  auto env = EnvLines(log);

  // The GPUs: two of this node's, by UUID, the same list for CUDA and the container runtime.
  Json node = Get("/v1/nodes/gpu-a");
  std::vector<std::string> uuids = node["agent"]["gpu_uuids"];
  ASSERT_EQ(uuids.size(), 8u) << node.dump();
  EXPECT_EQ(node["agent"]["agent_version"], std::string("allot-agent ") + kAllotVersion) << "the build's version";
  // As root (as CI runs) with cgroups, every part of a task's confinement is there, and the node
  // says so, also as the label jobs may require; otherwise it names what is missing.
  const Json& isolation = node["agent"]["isolation"];
  if (::geteuid() == 0) {
    EXPECT_EQ(isolation["complete"], true) << node.dump();
    EXPECT_EQ(node["labels"]["isolation"], "full") << node.dump();
  } else {
    EXPECT_NE(isolation["gaps"].dump().find("tenant uids"), std::string::npos) << node.dump();
    EXPECT_EQ(node["labels"]["isolation"], "partial") << node.dump();
  }
  std::string visible = env["CUDA_VISIBLE_DEVICES"];
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], visible);
  std::set<std::string> seen;
  for (size_t s = 0; s <= visible.size();) {
    size_t comma = visible.find(',', s);
    seen.insert(visible.substr(s, comma - s));
    if (comma == std::string::npos) break;
    s = comma + 1;
  }
  EXPECT_EQ(seen.size(), 2u) << visible;
  for (const std::string& u : seen) EXPECT_TRUE(std::count(uuids.begin(), uuids.end(), u)) << u << " is not a GPU of gpu-a";

  // Who it is and where it stands in the job.
  EXPECT_EQ(env["ALLOT_JOB_NAME"], "show-env");
  EXPECT_FALSE(env["ALLOT_JOB_ID"].empty());
  EXPECT_EQ(env["ALLOT_TASK_INDEX"], "0");
  EXPECT_EQ(env["ALLOT_WORLD_SIZE"], "1");
  EXPECT_EQ(env["ALLOT_MASTER_ADDR"], "gpu-a.e2e");
  if (::geteuid() == 0) {
    EXPECT_NE(env["UID"], "0") << "tasks of a root agent run as their tenant's uid";
  }

  // Its cgroup holds the 1 GiB it asked for (while it runs: the cgroup goes with the task).
  std::string key = "j" + env["ALLOT_JOB_ID"] + ".0.r0";
  std::string group = "allot-e2e-" + std::to_string(::getpid()) + "-gpu-a";
  std::string limit = TaskMemoryLimit(AgentPid("gpu-a"), group, key);
  EXPECT_EQ(limit, std::to_string(1LL << 30)) << "the memory limit of " << key << " in " << group;

  // Metered while it runs (usage counts running jobs up to now; it shows thousandths of an hour,
  // so two GPUs show after 1.8 s), and still after it ends.
  auto gpu_hours = [&] {
    Json usage = Get("/v1/usage?tenant=research");
    double hours = 0;
    for (const Json& t : usage["tenants"]) {
      if (t["path"] == "research") {
        for (auto& [model, h] : t["gpu_hours"].items()) hours += h.get<double>();
      }
    }
    return hours;
  };
  EXPECT_TRUE(WaitFor(20, [&] { return gpu_hours() > 0; })) << Get("/v1/usage?tenant=research").dump();

  std::ofstream(TaskDir("gpu-a", "research") / "go") << "";
  WaitState("show-env", "finished");
  EXPECT_NE(WaitLog("show-env", "DONE").find("STARTED\nDONE\n"), std::string::npos);
  EXPECT_GT(gpu_hours(), 0);
}

TEST_F(AgentE2eTest, AGangOfTwoSpansBothAgentsSharesOneMasterAndFinishesOnlyWhenBothTasksExited) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  StartAgent("gpu-b");
  WaitReady("gpu-a");
  WaitReady("gpu-b");
  // Task 0 exits at once; task 1 waits for `go`.
  Submit("gang", "research",
         "env | grep -E '^ALLOT_(WORLD_SIZE|MASTER_ADDR|TASK_INDEX)=' | sort; echo STARTED; "
         "if [ \"$ALLOT_TASK_INDEX\" = 1 ]; then while [ ! -e go ]; do sleep 0.05; done; fi; echo DONE",
         R"({"count": 2, "gpus": 8, "cpu": 1, "memory": "256Mi"})");
  auto env0 = EnvLines(WaitLog("gang", "DONE", 0));
  auto env1 = EnvLines(WaitLog("gang", "STARTED", 1));
  EXPECT_EQ(env0["ALLOT_WORLD_SIZE"], "2");
  EXPECT_EQ(env1["ALLOT_WORLD_SIZE"], "2");
  EXPECT_EQ(env1["ALLOT_TASK_INDEX"], "1");
  EXPECT_EQ(env0["ALLOT_MASTER_ADDR"], env1["ALLOT_MASTER_ADDR"]);
  EXPECT_TRUE(env0["ALLOT_MASTER_ADDR"] == "gpu-a.e2e" || env0["ALLOT_MASTER_ADDR"] == "gpu-b.e2e") << env0["ALLOT_MASTER_ADDR"];

  // Once allotd has task 0's exit (a node reports it), the job still runs: task 1 has not exited.
  ASSERT_TRUE(WaitFor(20, [&] {
    for (const char* node : {"gpu-a", "gpu-b"}) {
      Json n = Get(std::string("/v1/nodes/") + node);
      for (const Json& t : n["agent"]["tasks"]) {
        if (t["job"] == "gang" && t["task"] == 0 && t["exited"] == true) return true;
      }
    }
    return false;
  })) << Get("/v1/nodes/gpu-a").dump() << "\n" << Get("/v1/nodes/gpu-b").dump();
  EXPECT_EQ(State("gang"), "running");
  for (const char* node : {"gpu-a", "gpu-b"}) std::ofstream(TaskDir(node, "research") / "go") << "";
  WaitState("gang", "finished");
  WaitLog("gang", "DONE", 1);
}

TEST_F(AgentE2eTest, AFinishedJobsLogIsWholeTheMomentItIsFinished) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  // 1 MiB and a last line: four chunks, which the agent used to ship one per half second, after
  // the exit it reports at once.
  Submit("chatty", "research", "head -c 1048576 /dev/zero | tr '\\0' x; echo; echo END", R"({"gpus": 0, "cpu": 1})");
  WaitState("chatty", "finished");
  const std::string log = Logs("chatty");
  EXPECT_EQ(log.size(), 1048581u);
  ASSERT_GE(log.size(), 5u);
  EXPECT_EQ(log.substr(log.size() - 5), "\nEND\n");
}

TEST_F(AgentE2eTest, ATaskOverItsMemoryLimitIsOomKilledAndItsJobFailsSayingSo) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  // 300 MB touched, page by page, under a 64 MiB limit.
  Submit("hog", "research",
         "echo STARTED; exec python3 -c 'b = bytearray(300 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint(\"survived\")'",
         R"({"gpus": 1, "cpu": 1, "memory": "64Mi"})");
  WaitState("hog", "failed");
  Json job = Job("hog");
  EXPECT_NE(job.dump().find("memory limit"), std::string::npos) << job.dump();
  EXPECT_EQ(WaitLog("hog", "STARTED").find("survived"), std::string::npos);
}

}  // namespace
}  // namespace allot
