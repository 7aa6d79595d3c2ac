// allotd and allot-agent as real processes when things go wrong: a returning owner preempts a
// borrower, which checkpoints and later resumes; a partitioned node fences its task before the
// job runs elsewhere; a node with a hardware fault goes to repair and an operator's check is
// answered.
#include <sstream>

#include "agent/agent_e2e_fixture.h"
#include "testing/tcp_proxy.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n  - {path: prod}\n";

// A training loop: a step every 0.1 s in $ALLOT_CHECKPOINT_DIR/progress. On SIGTERM it saves the
// step as its checkpoint and exits; started with a checkpoint, it says so and ends 5 steps later.
constexpr const char* kTrainer =
    "cd \"$ALLOT_CHECKPOINT_DIR\"; step=0; last=1000000; "
    "if [ -f ckpt ]; then step=$(cat ckpt); last=$((step + 5)); echo \"resumed at step $step\"; fi; "
    "trap 'echo $step > ckpt; echo \"checkpointed at step $step, deadline $(cat \"$ALLOT_PREEMPT_FILE\")\"; exit 0' TERM; "
    "echo STARTED; while [ $step -lt $last ]; do step=$((step + 1)); echo $step > progress; sleep 0.1 & wait $!; done; "
    "echo \"done at step $step\"";

TEST_F(AgentE2eTest, AReturningOwnerPreemptsABorrowerThatCheckpointsAndLaterResumesFromItsCheckpoint) {
  StartAllotd(kTenants);
  StartAgent("gpu-a");
  WaitReady("gpu-a");
  // A guarantee on a GPU model needs a node of that model: given once the agent registered.
  auto [code, body] = Call("POST", "/v1/tenants", R"({"path": "prod", "guarantee": {"gpu/H100-80GB": 8}})");
  ASSERT_TRUE(code == 200 || code == 201) << code << " " << body.dump();

  Submit("train", "research", kTrainer, R"({"gpus": 8, "cpu": 1, "memory": "256Mi"})", R"("grace": "5s")");
  WaitLog("train", "STARTED", 0, 0);
  Submit("owner", "prod", "echo OWNER; sleep 1", R"({"gpus": 8, "cpu": 1, "memory": "256Mi"})");

  // The borrower was told (SIGTERM, the deadline in its preempt file), saved and stopped.
  std::string first = WaitLog("train", "checkpointed at step", 0, 0);
  std::istringstream words(first.substr(first.find("checkpointed at step")));
  std::string w1, w2, w3, step, w4, deadline;
  words >> w1 >> w2 >> w3 >> step >> w4 >> deadline;
  EXPECT_GT(std::stoi(step.substr(0, step.size() - 1)), 0) << first;
  EXPECT_GT(std::atoll(deadline.c_str()), 0) << "ALLOT_PREEMPT_FILE holds the kill deadline: " << first;
  step = step.substr(0, step.size() - 1);  // "12," → "12"

  // The owner ran and ended; then the borrower ran again, from its checkpoint, to its end.
  WaitLog("owner", "OWNER");
  WaitState("owner", "finished");
  std::string second = WaitLog("train", "done at step", 0, 1);
  EXPECT_NE(second.find("resumed at step " + step + "\n"), std::string::npos) << second;
  WaitState("train", "finished");
  EXPECT_GE(Job("train").value("preemptions", 0), 1) << Job("train").dump();
}

// The lease: an agent that cannot reach allotd stops its tasks once its lease (2/3 of the node
// timeout) runs out, before allotd declares the node lost (the timeout) and runs the job
// elsewhere. The partition is a proxy in front of allotd that stops answering (packets lost, not
// refused). An agent that is itself stopped or killed is agent_e2e_faults_test.cc's (its watchdog).
TEST_F(AgentE2eTest, APartitionedNodeFencesItsTaskBeforeTheJobRunsElsewhereAndRegistersAgainAfter) {
  StartAllotd(kTenants, {"--node-timeout", "3s"});
  testing::TcpProxy proxy(port_);
  StartAgent("gpu-a", "", {}, proxy.port());
  WaitReady("gpu-a");
  // Each run appends "start T" then "alive T" every 0.1 s to its node's directory (T: wall s).
  Submit("solo", "research",
         "echo \"start $(date +%s.%N)\" >> marks; echo STARTED; "
         "while :; do echo \"alive $(date +%s.%N)\" >> marks; sleep 0.1; done",
         R"({"gpus": 8, "cpu": 1, "memory": "256Mi"})");
  WaitLog("solo", "STARTED", 0, 0);
  StartAgent("gpu-b");
  WaitReady("gpu-b");

  proxy.Blackhole();
  fs::path marks_a = TaskDir("gpu-a", "research") / "marks", marks_b = TaskDir("gpu-b", "research") / "marks";
  ASSERT_TRUE(WaitFor(20, [&] { return fs::exists(marks_b); })) << "the job did not run on gpu-b: " << Job("solo").dump();
  EXPECT_EQ(Condition("gpu-a"), "down");
  ASSERT_TRUE(WaitFor(10, [&] { return ReadFile(dir_ / "gpu-a" / "agent.log").find("fenced") != std::string::npos; }));

  ExpectEndedBeforeStart(marks_a, marks_b);

  // Healed: gpu-a registers afresh and does not start the job again; it runs once, on gpu-b.
  proxy.Heal();
  WaitReady("gpu-a");
  size_t a_marks = ReadFile(marks_a).size();
  EXPECT_EQ(MarkTimes(ReadFile(marks_a), "start").size(), 1u);
  EXPECT_EQ(State("solo"), "running");
  Json node_b = Get("/v1/nodes/gpu-b");
  EXPECT_EQ(node_b["jobs"], Json::array({"solo"})) << node_b.dump();
  EXPECT_EQ(ReadFile(marks_a).size(), a_marks) << "gpu-a's fenced run stays dead";
}

TEST_F(AgentE2eTest, ANodeWithAnUncorrectedEccErrorGoesToRepairAndAnOperatorsCheckIsAnswered) {
  StartAllotd(kTenants);
  StartAgent("gpu-bad", "gpu index=5 ecc_uncorrected=1\n");
  StartAgent("gpu-ok");
  WaitReady("gpu-ok");
  ASSERT_TRUE(WaitFor(20, [&] { return Condition("gpu-bad") == "repair"; })) << Get("/v1/nodes/gpu-bad").dump();

  // Two jobs that each need a whole node: one runs on gpu-ok, the other waits.
  Submit("first", "research", "echo STARTED; while [ ! -e go ]; do sleep 0.05; done", R"({"gpus": 8, "cpu": 1})");
  WaitLog("first", "STARTED");
  Submit("second", "research", "echo STARTED", R"({"gpus": 8, "cpu": 1})");
  EXPECT_EQ(Get("/v1/nodes/gpu-ok")["jobs"], Json::array({"first"}));
  // Once the scheduler has looked at it, it waits: gpu-bad's 8 GPUs do not count as free.
  EXPECT_TRUE(WaitFor(10, [&] { return Job("second")["reason"].is_string(); })) << Job("second").dump();
  EXPECT_EQ(State("second"), "pending");
  EXPECT_NE(Job("second").value("reason", "").find("0 free in the fleet"), std::string::npos) << Job("second").dump();
  EXPECT_EQ(Get("/v1/nodes/gpu-bad")["jobs"], Json::array());

  // An operator asks gpu-ok for a check: accepted, and its agent's next report carries it.
  auto [code, body] = Call("POST", "/v1/nodes/gpu-ok/check");
  ASSERT_EQ(code, 202) << body.dump();
  uint64_t check = body["check"];
  EXPECT_GT(check, 0u);
  ASSERT_TRUE(WaitFor(20, [&] {
    Json h = Get("/v1/nodes/gpu-ok")["agent"]["health"];
    return h.is_object() && h["check"] == check && h["ok"] == true;
  })) << Get("/v1/nodes/gpu-ok").dump();
  EXPECT_EQ(Condition("gpu-ok"), "ready");
  std::ofstream(TaskDir("gpu-ok", "research") / "go") << "";
}

}  // namespace
}  // namespace allot
