// End to end, the shared pools: an agent of a MIG pool creates the instance the plan names, gives
// the task its MIG UUID and destroys it after; an agent of an MPS pool starts the GPU's control
// daemon, tells it the task's share, and gives the task the MPS variables. A job's time limit
// is enforced on the node.
#include <fstream>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n";

TEST_F(AgentE2eTest, AMigPoolsTaskGetsTheInstanceThePlanNamedCreatedForItAndDestroyedAfter) {
  StartAllotd(kTenants);
  std::string mig_on;
  for (int g = 0; g < 8; ++g) mig_on += "gpu index=" + std::to_string(g) + " mig=on\n";
  StartAgent("gpu-m", mig_on, {"--pool", "mig", "--mig-layout", "3g.40gb,3g.40gb"});
  WaitReady("gpu-m");
  Submit("mig-job", "research", "echo CUDA=$CUDA_VISIBLE_DEVICES", R"({"mig": "3g.40gb"})");
  WaitState("mig-job", "finished");
  std::string log = WaitLog("mig-job", "CUDA=");
  auto env = EnvLines(log);
  EXPECT_EQ(env["CUDA"].rfind("MIG-", 0), 0u) << "a MIG instance's UUID, not the GPU's: " << log;
  // What the fake NVML was told: a GPU instance created at the plan's start, then destroyed.
  std::string calls = ReadFile(dir_ / "gpu-m" / "nvml.conf.log");
  EXPECT_NE(calls.find("nvmlDeviceCreateGpuInstanceWithPlacement"), std::string::npos) << calls;
  EXPECT_NE(calls.find("nvmlGpuInstanceDestroy"), std::string::npos) << calls;
}

TEST_F(AgentE2eTest, AnMpsPoolsTaskRunsUnderItsGpusControlDaemonWithItsShare) {
  StartAllotd(kTenants);
  std::string fake = std::string(ALLOT_SOURCE_DIR) + "/tests/fakes/nvidia-cuda-mps-control";
  StartAgent("gpu-s", "", {"--pool", "mps", "--mps-control", fake});
  WaitReady("gpu-s");
  Submit("mps-job", "research", "env | grep -E '^(CUDA_|ALLOT_TASK)' | sort", R"({"gpus": 0.25})");
  WaitState("mps-job", "finished");
  std::string log = WaitLog("mps-job", "CUDA_MPS_PIPE_DIRECTORY=");
  auto env = EnvLines(log);
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25") << log;
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"].rfind("GPU-", 0), 0u) << log;
  std::string pipe = env["CUDA_MPS_PIPE_DIRECTORY"];
  ASSERT_FALSE(pipe.empty());
  // The control daemon was started for that GPU with that pipe directory, and told the share.
  std::string told = ReadFile(std::filesystem::path(pipe).parent_path() / "mps-fake.log");
  EXPECT_NE(told.find("argv:-d"), std::string::npos) << told;
  EXPECT_NE(told.find("env:CUDA_VISIBLE_DEVICES=" + env["CUDA_VISIBLE_DEVICES"]), std::string::npos) << told;
  EXPECT_NE(told.find("stdin:set_default_active_thread_percentage 25"), std::string::npos) << told;
}

TEST_F(AgentE2eTest, AJobPastItsTimeLimitIsKilledOnTheNodeAndFailsSayingSo) {
  StartAllotd(kTenants);
  StartAgent("gpu-t");
  WaitReady("gpu-t");
  Submit("slow", "research", "echo started; sleep 60; echo survived", R"({"gpus": 1})", R"("time_limit": "2s")");
  WaitState("slow", "failed", 30);
  EXPECT_NE(Job("slow").value("reason", "").find("time limit"), std::string::npos) << Job("slow").dump();
  EXPECT_EQ(Logs("slow").find("survived"), std::string::npos);
}

TEST_F(AgentE2eTest, AnAgentWithoutNvmlSaysWhyAndRegistersNoGpus) {
  StartAllotd(kTenants);
  StartAgent("cpu-only", "", {"--nvml", (dir_ / "no-such-libnvidia-ml.so.1").string()});
  WaitReady("cpu-only");
  Json node = Get("/v1/nodes/cpu-only");
  EXPECT_EQ(node["gpus"], 0) << node.dump();
  std::string log = ReadFile(dir_ / "cpu-only" / "agent.log");
  EXPECT_NE(log.find("no-such-libnvidia-ml.so.1"), std::string::npos) << log;
  EXPECT_NE(log.find("no NVML: no GPUs registered"), std::string::npos) << log;
  // A GPU job does not land there; a CPU job does.
  Submit("cpu-job", "research", "echo ran", R"({"gpus": 0, "cpu": 1})");
  WaitState("cpu-job", "finished");
}

}  // namespace
}  // namespace allot
