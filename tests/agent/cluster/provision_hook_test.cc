// The provisioning hook's contract (docs/dedicated-clusters.md) against small shell scripts:
// argv and environment as documented, stdout's last lines as the login details, and the errors
// of a hook that fails and of one that hangs.
#include "agent/cluster/provision_hook.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <string>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Trimmed(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class ProvisionHookTest : public ::testing::Test {
 protected:
  ProvisionHookTest() : dir_("hook") {
    window_.reservation = "r-17";
    window_.tenant = "research/nlp";
    window_.start_ms = 1795521600000;  // 2026-11-24T12:00:00Z
    window_.end_ms = 1795608000000;    // a day later
    window_.nodes = {"gpu-01", "gpu-02"};
  }
  // An executable script in the test's directory.
  std::string Hook(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(ReplaceFile(path, "#!/bin/sh\n" + body, 0755).ok());
    return path;
  }
  std::string Read(const std::string& name) {
    auto t = ReadText((dir_ / name).string());
    return t ? *t : "";
  }
  testing::ScratchDir dir_;
  ProvisionWindow window_;
};

TEST_F(ProvisionHookTest, GetsThePhaseAndTheWindowAndHandsOverTheLastLinesOfItsStdout) {
  const std::string seen = (dir_ / "seen").string();
  ProvisionHookOptions o;
  o.executable = Hook("hook", "echo \"argv: $# $1\" > " + seen + "\nenv | sort >> " + seen +
                                  "\nfor i in 1 2 3 4 5; do echo \"line $i\"; done\necho 'on stderr' >&2\n");
  o.answer_lines = 3;
  auto answer = RunProvisionHook(o, HookPhase::kStart, window_);
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->login_details, "line 3\nline 4\nline 5\n");
  // Only what the contract names (sh adds PWD itself).
  EXPECT_EQ(Read("seen"),
            "argv: 1 start\n"
            "ALLOT_NODES=gpu-01,gpu-02\n"
            "ALLOT_RESERVATION=r-17\n"
            "ALLOT_TENANT=research/nlp\n"
            "ALLOT_WINDOW_END=2026-11-25T12:00:00Z\n"
            "ALLOT_WINDOW_START=2026-11-24T12:00:00Z\n"
            "LANG=C.UTF-8\n"
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
            "PWD=/\n");
  ASSERT_TRUE(RunProvisionHook(o, HookPhase::kEnd, window_));
  EXPECT_THAT(Read("seen"), HasSubstr("argv: 1 end\n"));
}

TEST_F(ProvisionHookTest, AFailingHookIsAnErrorNamingTheHookItsCodeAndTheEndOfItsStderr) {
  ProvisionHookOptions o;
  o.executable = Hook("failing", "echo 'login: never'\nfor i in 1 2 3; do echo \"problem $i\" >&2; done\nexit 3\n");
  o.error_lines = 2;
  auto answer = RunProvisionHook(o, HookPhase::kStart, window_);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code(), Code::kUnavailable);
  EXPECT_EQ(answer.error().message(), "provision hook " + o.executable +
                                          " start exited with code 3; its stderr ended:\nproblem 2\nproblem 3\n");
}

TEST_F(ProvisionHookTest, AHangingHookIsKilledWithWhatItStartedAfterTheTimeoutAndTheErrorSaysSo) {
  const std::string pid_file = (dir_ / "child.pid").string();
  ProvisionHookOptions o;
  o.executable = Hook("hanging", "sleep 60 &\necho $! > " + pid_file + "\necho 'waiting for the API' >&2\nwait\n");
  o.timeout_ms = 500;
  auto answer = RunProvisionHook(o, HookPhase::kEnd, window_);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code(), Code::kUnavailable);
  EXPECT_EQ(answer.error().message(), "provision hook " + o.executable +
                                          " end timed out after 500 ms and was killed; its stderr ended:\n"
                                          "waiting for the API\n");
  // SIGKILLed with the hook's process group (delivery takes a moment); orphaned, it may stay a
  // zombie until init reaps it.
  const std::string stat = "/proc/" + Trimmed(Read("child.pid")) + "/stat";
  auto dead = [&] {
    auto text = ReadText(stat);
    return !text || text->find(") Z ") != std::string::npos;
  };
  for (int i = 0; i < 100 && !dead(); ++i) SleepMillis(20);
  EXPECT_TRUE(dead()) << "the hook's own child outlived it: " << ReadText(stat).value_or("");
}

TEST_F(ProvisionHookTest, AMissingHookAndABadWindowAreRefusedBeforeAnythingRuns) {
  ProvisionHookOptions o;
  o.executable = (dir_ / "absent").string();
  auto missing = RunProvisionHook(o, HookPhase::kStart, window_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("provision hook " + o.executable + " start: command"));

  o.executable = Hook("never", "touch " + (dir_ / "ran").string() + "\n");
  ProvisionWindow w = window_;
  w.nodes = {"gpu-01,gpu-03"};
  auto comma = RunProvisionHook(o, HookPhase::kStart, w);
  ASSERT_FALSE(comma);
  EXPECT_THAT(comma.error().message(), HasSubstr("nodes[0]: 'gpu-01,gpu-03' has the character ','"));
  w = window_;
  w.end_ms = w.start_ms;
  auto empty = RunProvisionHook(o, HookPhase::kStart, w);
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message(), HasSubstr("expected an end after the start"));
  w = window_;
  w.nodes.clear();
  EXPECT_FALSE(RunProvisionHook(o, HookPhase::kStart, w));
  EXPECT_FALSE(Exists((dir_ / "ran").string()));
}

}  // namespace
}  // namespace allot
