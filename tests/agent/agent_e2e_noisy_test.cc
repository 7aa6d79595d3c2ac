// End to end, the noisy-neighbour loop (docs/noisy-neighbour.md) on an MPS pool's node: a real
// allotd and agent on the fake NVML, whose live file scripts the neighbour's utilization, and a
// victim task reporting its p99 through ALLOT_LATENCY_FILE. A neighbour that rises while the
// victim's p99 regresses is throttled through the MPS control daemon (the fake logs what it was
// told), and the throttle is lifted after the quiet period; a quiet neighbour is never touched.
// A neighbour the victim still suffers under the throttle is moved at its checkpoint: stopped,
// requeued and kept off the GPU until the victim has been quiet for the quiet period.
#include <fstream>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: serve}\n  - {path: batch}\n";
// The victim reports the p99 the test puts in its directory's "level" file, five times a second.
constexpr const char* kVictim = "while :; do cat level >> \"$ALLOT_LATENCY_FILE\"; sleep 0.2; done";
// The neighbour: found by the fake NVML by this marker in its command line.
constexpr const char* kNeighbour = "while :; do sleep 1; done # noisy-e2e-neighbour";

class NoisyNeighbourE2eTest : public AgentE2eTest {
 protected:
  // One GPU, so both jobs share it.
  void StartNode(const std::string& quiet, const std::string& neighbour_extra = "") {
    nvml_gpus_ = "driver version=550.54.15\ngpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n";
    StartAllotd(kTenants, {"--interference-quiet", quiet});
    StartAgent("gpu-n", "", {"--pool", "mps", "--mps-control", std::string(ALLOT_SOURCE_DIR) + "/tests/fakes/nvidia-cuda-mps-control"});
    WaitReady("gpu-n");
    Level(10);
    Neighbour(20);
    Submit("api", "serve", kVictim, R"({"gpus": 0.3})", R"("kind": "inference")");
    Submit("trainer", "batch", kNeighbour, R"({"gpus": 0.4})", neighbour_extra);
    WaitState("api", "running");
    WaitState("trainer", "running");
  }
  // The p99 (ms) the victim reports from now.
  void Level(int ms) {
    std::filesystem::create_directories(TaskDir("gpu-n", "serve"));
    std::ofstream(TaskDir("gpu-n", "serve") / "level.tmp") << ms << "\n";
    std::filesystem::rename(TaskDir("gpu-n", "serve") / "level.tmp", TaskDir("gpu-n", "serve") / "level");
  }
  // The neighbour's SM utilization (and half that of memory bandwidth) the fake NVML reports from now.
  void Neighbour(int sm) {
    std::ofstream live(dir_ / "gpu-n" / "nvml.conf.live.tmp");
    live << "proc_util gpu=0 match=noisy-e2e-neighbour sm=" << sm << " mem=" << sm / 2 << "\n";
    live.close();
    std::filesystem::rename(dir_ / "gpu-n" / "nvml.conf.live.tmp", dir_ / "gpu-n" / "nvml.conf.live");
  }
  // The responses in force; a failed call is not "none".
  Json Responses() {
    auto [code, body] = Call("GET", "/v1/interference");
    return code == 200 ? body["responses"] : Json::array({"GET /v1/interference answered " + std::to_string(code)});
  }
  // What the MPS control daemons of the jobs' GPU (one a tenant) were told.
  std::string MpsTold() {
    std::string told;
    for (const auto& e : std::filesystem::recursive_directory_iterator(MpsPipes("gpu-n"))) {
      if (e.path().filename() == "mps-fake.log") told += ReadFile(e.path());
    }
    return told;
  }
  // Events of that type in the watch stream; -1 when allotd did not answer.
  int EventCount(const std::string& type) {
    auto [code, body] = Call("GET", "/v1/events?since=0");
    if (code != 200) return -1;
    int n = 0;
    for (const Json& e : body["events"]) n += e.value("type", std::string()) == type;
    return n;
  }
};

TEST_F(NoisyNeighbourE2eTest, ARisingNeighbourIsThrottledAndLiftedAfterTheQuietPeriod) {
  StartNode("4s");
  // Quiet: baselines are learned, nothing is done.
  std::this_thread::sleep_for(std::chrono::seconds(8));
  EXPECT_TRUE(Responses().empty()) << Responses().dump();
  EXPECT_EQ(EventCount("InterferenceActed"), 0);
  // Onset: the neighbour rises, the victim's p99 goes from 10 to 25 ms.
  Neighbour(95);
  Level(25);
  ASSERT_TRUE(WaitFor(20, [&] { return !Responses().empty(); })) << Get("/v1/interference").dump();
  Json r = Responses()[0];
  EXPECT_EQ(r["neighbour"]["job"], "trainer") << r.dump();
  EXPECT_EQ(r["victim"]["job"], "api") << r.dump();
  EXPECT_EQ(r["action"], "throttle");
  EXPECT_EQ(r["percent"], 20) << "half the neighbour's 40%: " << r.dump();
  EXPECT_EQ(r["baseline_p99_ms"], 10.0) << r.dump();
  EXPECT_EQ(r["p99_ms"], 25.0) << r.dump();
  // The agent told the neighbour's tenant's MPS server.
  ASSERT_TRUE(WaitFor(15, [&] { return MpsTold().find(" 20\n") != std::string::npos &&
                                       MpsTold().find("stdin:set_active_thread_percentage ") != std::string::npos; }))
      << MpsTold() << ReadFile(dir_ / "gpu-n" / "agent.log");
  // Explained on both jobs, audited.
  EXPECT_EQ(Get("/v1/jobs/api/explain")["interference"].size(), 1u) << Get("/v1/jobs/api/explain").dump();
  EXPECT_EQ(Get("/v1/jobs/trainer/explain")["interference"][0]["percent"], 20);
  std::string audit = Get("/v1/audit").dump();
  EXPECT_NE(audit.find("interference.throttle"), std::string::npos) << audit;
  // Recovery: once the victim has been normal for the quiet period, the throttle goes.
  Level(10);
  Neighbour(20);
  ASSERT_TRUE(WaitFor(25, [&] { return Responses().empty(); })) << Get("/v1/interference").dump();
  // Readers may see a batch's state before its events reach the watch stream.
  EXPECT_TRUE(WaitFor(5, [&] { return EventCount("InterferenceCleared") == 1; })) << Get("/v1/events?since=0").dump();
  ASSERT_TRUE(WaitFor(15, [&] {
    std::string told = MpsTold();
    size_t throttled = told.find("stdin:set_active_thread_percentage ");
    return throttled != std::string::npos && told.find(" 40\n", throttled) != std::string::npos;
  })) << MpsTold();
  EXPECT_EQ(Get("/v1/jobs/api/explain").count("interference"), 0u);
}

TEST_F(NoisyNeighbourE2eTest, AVictimSlowingBesideAQuietNeighbourTriggersNothing) {
  StartNode("4s");
  std::this_thread::sleep_for(std::chrono::seconds(8));
  Level(40);  // four times its baseline, but the neighbour stays at 20%
  std::this_thread::sleep_for(std::chrono::seconds(10));
  EXPECT_TRUE(Responses().empty()) << Responses().dump();
  EXPECT_TRUE(Get("/v1/interference")["findings"].empty());
  EXPECT_EQ(EventCount("InterferenceActed"), 0);
  EXPECT_EQ(MpsTold().find("set_active_thread_percentage "), std::string::npos) << MpsTold();
}

TEST_F(NoisyNeighbourE2eTest, ANeighbourStillNoisyUnderTheThrottleIsMovedAndKeptOffTheGpu) {
  StartNode("4s", R"("checkpoint": {"interval": "60s", "grace": "2s"})");
  std::this_thread::sleep_for(std::chrono::seconds(8));
  Neighbour(95);
  Level(25);
  auto action_is = [&](const std::string& a) {
    for (const Json& r : Responses()) {
      if (r.value("action", std::string()) == a) return true;
    }
    return false;
  };
  ASSERT_TRUE(WaitFor(20, [&] { return action_is("throttle"); })) << Get("/v1/interference").dump();
  // Still slow a quiet period (4 s) under the throttle: the neighbour is moved at its checkpoint.
  ASSERT_TRUE(WaitFor(20, [&] { return action_is("move"); })) << Get("/v1/interference").dump();
  WaitState("trainer", "pending", 20);
  Json trainer = Job("trainer");
  EXPECT_EQ(trainer["preemptions"], 1) << trainer.dump();
  // The only GPU is the one it was moved off: it waits, and says why.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(State("trainer"), "pending");
  EXPECT_NE(Job("trainer").value("reason", std::string()).find("kept off GPU 0 of node 'gpu-n'"), std::string::npos)
      << Job("trainer").dump();
  std::string audit = Get("/v1/audit").dump();
  EXPECT_NE(audit.find("interference.move"), std::string::npos) << audit;
  // The victim recovers; a quiet period later the move is lifted and the neighbour runs again.
  Level(10);
  Neighbour(20);
  ASSERT_TRUE(WaitFor(25, [&] { return Responses().empty(); })) << Get("/v1/interference").dump();
  WaitState("trainer", "running", 20);
}

}  // namespace
}  // namespace allot
