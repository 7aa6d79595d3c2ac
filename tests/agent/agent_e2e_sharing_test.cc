// End to end, the shared pools: an agent of a MIG pool holds the layout allotd plans (made at
// registration, changed by a re-layout, reported back before allotd places on it) and gives a
// task the MIG UUID of the instance its plan names; an agent of an MPS pool starts the GPU's control
// daemon, tells it the task's share, and gives the task the MPS variables. A job's time limit
// is enforced on the node.
#include <fstream>
#include <map>

#include "agent/agent_e2e_fixture.h"
#include "testing/text.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n";

using testing::Occurrences;

std::string MigOn() {
  std::string on;
  for (int g = 0; g < 8; ++g) on += "gpu index=" + std::to_string(g) + " mig=on\n";
  return on;
}

TEST_F(AgentE2eTest, AMigPoolsNodeHoldsItsLayoutAndATaskRunsOnAPreMadeInstanceThatOutlivesIt) {
  StartAllotd(kTenants);
  StartAgent("gpu-m", MigOn(), {"--pool", "mig", "--mig-layout", "3g.40gb,3g.40gb"});
  WaitReady("gpu-m");
  // At registration, before any task: both 3g instances (NVML profile 9) on each of the 8 GPUs.
  const auto calls_file = dir_ / "gpu-m" / "nvml.conf.log";
  const std::string create3g = "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=9";
  ASSERT_TRUE(WaitFor(10, [&] { return Occurrences(ReadFile(calls_file), "CreateGpuInstanceWithPlacement") >= 16; }))
      << ReadFile(calls_file);
  std::string before = ReadFile(calls_file);
  EXPECT_EQ(Occurrences(before, create3g), 2) << before;
  EXPECT_EQ(Occurrences(before, "nvmlGpuInstanceDestroy"), 0) << before;

  Submit("mig-job", "research", "echo CUDA=$CUDA_VISIBLE_DEVICES", R"({"mig": "3g.40gb"})");
  WaitState("mig-job", "finished");
  std::string log = WaitLog("mig-job", "CUDA=");
  EXPECT_EQ(EnvLines(log)["CUDA"].rfind("MIG-", 0), 0u) << "a MIG instance's UUID, not the GPU's: " << log;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a reconcile or two after its end
  std::string after = ReadFile(calls_file);
  EXPECT_EQ(Occurrences(after, "CreateGpuInstanceWithPlacement"), 16) << "no instance made for the task: " << after;
  EXPECT_EQ(Occurrences(after, "nvmlGpuInstanceDestroy"), 0) << "its instance outlives it: " << after;
}

// The seq of the first event after `after` of `type` on gpu-m (GPU `gpu` when ≥ 0, job `job`
// when not empty); 0 when none.
uint64_t SeqOf(const nlohmann::json& events, uint64_t after, const std::string& type, int gpu, const std::string& job = "") {
  for (const nlohmann::json& e : events) {
    if (e.value("seq", uint64_t{0}) <= after || e.value("type", "") != type) continue;
    if (gpu >= 0 && e.value("gpu", -1) != gpu) continue;
    if (!job.empty() && e.value("job", "") != job) continue;
    return e.value("seq", uint64_t{0});
  }
  return 0;
}

TEST_F(AgentE2eTest, AReLayoutMakesTheNodeDestroyAndCreateAndAllotdPlacesOnlyOnWhatItReported) {
  StartAllotd(kTenants);
  StartAgent("gpu-m", MigOn(), {"--pool", "mig", "--mig-layout", "3g.40gb,3g.40gb"});
  WaitReady("gpu-m");
  // Every GPU's two 3g instances fill its memory slices: a 1g task waits for a re-layout.
  Submit("small", "research", "echo CUDA=$CUDA_VISIBLE_DEVICES", R"({"mig": "1g.10gb"})");
  WaitState("small", "finished", 30);
  const auto calls_file = dir_ / "gpu-m" / "nvml.conf.log";
  std::string calls = ReadFile(calls_file);
  EXPECT_EQ(Occurrences(calls, "nvmlGpuInstanceDestroy gpu=0"), 2) << calls;
  EXPECT_EQ(Occurrences(calls, "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=19"), 1) << calls;
  EXPECT_EQ(Occurrences(calls, "nvmlGpuInstanceDestroy gpu=1"), 0) << "only the re-laid-out GPU changes: " << calls;
  // Journal order: the re-layout, then the node's report of it, then the placement on it.
  nlohmann::json events = Get("/v1/events?since=0")["events"];
  uint64_t relayout = SeqOf(events, 0, "MigRelayout", 0);
  ASSERT_GT(relayout, 0u) << events.dump();
  uint64_t reported = SeqOf(events, relayout, "MigLayoutReported", 0);
  ASSERT_GT(reported, 0u) << events.dump();
  uint64_t placed = SeqOf(events, 0, "JobPlaced", -1, "small");
  EXPECT_GT(placed, reported) << events.dump();
  EXPECT_EQ(EnvLines(WaitLog("small", "CUDA="))["CUDA"].rfind("MIG-", 0), 0u);
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

// Two tenants' shares of one GPU run under a daemon each (a daemon serves one uid's server at a
// time: on a real H200 the second tenant's task waited for the first's to end), each tenant's
// tasks under its own and no other; a daemon is kept while its tenant has a task on the GPU and
// quit once the last has ended.
TEST_F(AgentE2eTest, EachTenantsMpsSharesOfAGpuRunUnderItsOwnDaemonQuitWhenTheLastEnds) {
  nvml_gpus_ = "driver version=550.54.15\ngpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n";
  StartAllotd("tenants:\n  - {path: research}\n  - {path: prod}\n");
  std::string fake = std::string(ALLOT_SOURCE_DIR) + "/tests/fakes/nvidia-cuda-mps-control";
  StartAgent("gpu-s", "", {"--pool", "mps", "--mps-control", fake});
  WaitReady("gpu-s");
  // Runs until the test makes go-<job> in the tenant's directory (the task's working directory).
  const std::string hold = "env | grep CUDA_MPS_PIPE; while [ ! -e go-$ALLOT_JOB_NAME ]; do sleep 0.1; done";
  Submit("r1", "research", hold, R"({"gpus": 0.25})");
  Submit("r2", "research", hold, R"({"gpus": 0.25})");
  Submit("p1", "prod", hold, R"({"gpus": 0.25})");
  std::map<std::string, std::string> pipe;
  for (const std::string job : {"r1", "r2", "p1"}) {
    WaitState(job, "running");
    pipe[job] = EnvLines(WaitLog(job, "CUDA_MPS_PIPE_DIRECTORY="))["CUDA_MPS_PIPE_DIRECTORY"];
    ASSERT_FALSE(pipe[job].empty()) << job;
  }
  EXPECT_EQ(pipe["r1"], pipe["r2"]) << "one tenant's shares: one daemon, one server";
  EXPECT_NE(pipe["r1"], pipe["p1"]) << "another tenant's: a daemon of its own";
  auto told = [&](const std::string& job) { return ReadFile(std::filesystem::path(pipe[job]).parent_path() / "mps-fake.log"); };
  EXPECT_EQ(Occurrences(told("r1"), "argv:-d"), 1) << told("r1");
  EXPECT_EQ(Occurrences(told("p1"), "argv:-d"), 1) << told("p1");
  auto go = [&](const std::string& tenant, const std::string& job) {
    std::ofstream(TaskDir("gpu-s", tenant) / ("go-" + job)) << "\n";
    WaitState(job, "finished");
  };
  go("research", "r1");
  go("prod", "p1");
  EXPECT_TRUE(WaitFor(10, [&] { return Occurrences(told("p1"), "stdin:quit") == 1; })) << "prod's last task ended: " << told("p1");
  EXPECT_EQ(Occurrences(told("r1"), "stdin:quit"), 0) << "r2 still runs under research's daemon: " << told("r1");
  go("research", "r2");
  EXPECT_TRUE(WaitFor(10, [&] { return Occurrences(told("r1"), "stdin:quit") == 1; })) << told("r1");
  EXPECT_EQ(Occurrences(told("r1"), "argv:-d"), 1) << "kept between its tenant's tasks: " << told("r1");
}

// The scrub between tenants never reaches into a running task: on an MPS GPU where one still
// runs the GPU passes on unscrubbed (said in scrubs.log and to allotd), and every tenant that
// used it since its last scrub is scrubbed away when a task of another starts on it idle; a MIG
// instance is scrubbed by its own UUID, whole GPU untouched, while another tenant's instance on
// the same GPU runs.
TEST_F(AgentE2eTest, AScrubBetweenTenantsNeverReachesAnotherTenantsRunningTaskOnASharedGpu) {
  nvml_gpus_ = "driver version=550.54.15\ngpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n";
  StartAllotd("tenants:\n  - {path: research}\n  - {path: prod}\n");
  std::string fake = std::string(ALLOT_SOURCE_DIR) + "/tests/fakes/nvidia-cuda-mps-control";
  const auto scrubbed = dir_ / "scrubbed";
  StartAgent("gpu-s", "", {"--pool", "mps", "--mps-control", fake, "--scrub", "echo \"$ALLOT_SCRUB_DEVICES\" >> " + scrubbed.string()});
  WaitReady("gpu-s");
  const std::string hold = "while [ ! -e go-$ALLOT_JOB_NAME ]; do sleep 0.1; done";
  auto go = [&](const std::string& tenant, const std::string& job) {
    std::ofstream(TaskDir("gpu-s", tenant) / ("go-" + job)) << "\n";
    WaitState(job, "finished");
  };
  const auto log = dir_ / "gpu-s" / "work" / "scrubs.log";
  Submit("r1", "research", hold, R"({"gpus": 0.25})");
  WaitState("r1", "running");
  Submit("p1", "prod", hold, R"({"gpus": 0.25})");
  WaitState("p1", "running");
  ASSERT_TRUE(WaitFor(10, [&] { return Occurrences(ReadFile(log), "not run") == 1; })) << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("from 'research' to 'prod': not run: 'research' still runs a task"), std::string::npos) << ReadFile(log);
  EXPECT_EQ(ReadFile(scrubbed), "") << "research's task runs on the GPU: no scrub reaches into it";
  // allotd's audit log says so too, filed under the GPU's new holder.
  auto audited = [&](const std::string& text) {
    const Json audit = Get("/v1/audit");
    for (const Json& r : audit["records"]) {
      if (r.value("action", "") == "gpu.scrub" && r.value("target", "").find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(WaitFor(10, [&] { return audited("from 'research' to 'prod' (as the node reports): not run: 'research' still runs"); }))
      << Get("/v1/audit").dump();
  // research's task ends; prod's next starts beside prod's own: still not scrubbed under p1.
  go("research", "r1");
  Submit("p2", "prod", "true", R"({"gpus": 0.25})");
  WaitState("p2", "finished");
  EXPECT_NE(ReadFile(log).find("from 'research' to 'prod': not run: 'prod' still runs a task"), std::string::npos) << ReadFile(log);
  EXPECT_EQ(ReadFile(scrubbed), "");
  // Idle now, used by research and prod since its last scrub: prod's next task gets research's
  // leftovers scrubbed away first (the GPU was last prod's, but not prod's alone).
  go("prod", "p1");
  Submit("p3", "prod", "true", R"({"gpus": 0.25})");
  WaitState("p3", "finished");
  EXPECT_EQ(Occurrences(ReadFile(scrubbed), "GPU-"), 1) << ReadFile(scrubbed);
  EXPECT_NE(ReadFile(log).find("from 'research' to 'prod': ok in"), std::string::npos) << ReadFile(log);
  // Scrubbed: prod's alone now; its next task needs no scrub.
  Submit("p4", "prod", "true", R"({"gpus": 0.25})");
  WaitState("p4", "finished");
  EXPECT_EQ(Occurrences(ReadFile(scrubbed), "GPU-"), 1) << ReadFile(scrubbed);
}

TEST_F(AgentE2eTest, AMigInstancePassingBetweenTenantsIsScrubbedByItsOwnUuidBesideAnotherTenantsRunningInstance) {
  nvml_gpus_ = "driver version=550.54.15\ngpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n";
  StartAllotd("tenants:\n  - {path: research}\n  - {path: prod}\n");
  const auto scrubbed = dir_ / "scrubbed";
  StartAgent("gpu-m", "gpu index=0 mig=on\n",
             {"--pool", "mig", "--mig-layout", "3g.40gb,3g.40gb", "--scrub", "echo \"$ALLOT_SCRUB_DEVICES\" >> " + scrubbed.string()});
  WaitReady("gpu-m");
  const std::string hold = "echo CUDA=$CUDA_VISIBLE_DEVICES; while [ ! -e go-$ALLOT_JOB_NAME ]; do sleep 0.1; done";
  auto go = [&](const std::string& tenant, const std::string& job) {
    std::ofstream(TaskDir("gpu-m", tenant) / ("go-" + job)) << "\n";
    WaitState(job, "finished");
  };
  Submit("r1", "research", hold, R"({"mig": "3g.40gb"})");
  Submit("p1", "prod", hold, R"({"mig": "3g.40gb"})");
  WaitState("r1", "running");
  WaitState("p1", "running");
  const std::string p1_uuid = EnvLines(WaitLog("p1", "CUDA="))["CUDA"];
  ASSERT_EQ(p1_uuid.rfind("MIG-", 0), 0u) << p1_uuid;
  EXPECT_EQ(ReadFile(scrubbed), "") << "each instance's first tenant: nothing to scrub";
  go("prod", "p1");
  // p1's instance is the only free one: research's next task gets it, scrubbed by its own UUID
  // while r1 still runs on the other instance of the GPU.
  Submit("r2", "research", "echo CUDA=$CUDA_VISIBLE_DEVICES", R"({"mig": "3g.40gb"})");
  WaitState("r2", "finished");
  EXPECT_EQ(EnvLines(WaitLog("r2", "CUDA="))["CUDA"], p1_uuid);
  EXPECT_EQ(ReadFile(scrubbed), p1_uuid + "\n") << "the instance alone, not the GPU r1 runs on";
  EXPECT_EQ(State("r1"), "running");
  const std::string log = ReadFile(dir_ / "gpu-m" / "work" / "scrubs.log");
  EXPECT_NE(log.find("MIG instance 3g.40gb@"), std::string::npos) << log;
  EXPECT_NE(log.find("from 'prod' to 'research': ok in"), std::string::npos) << log;
  go("research", "r1");
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
