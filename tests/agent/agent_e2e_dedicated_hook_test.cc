// A dedicated cluster with the operator's provisioning hook, end to end (issue 16): allotd and a
// real allot-agent on the fake NVML run `--provision-hook` at the window's start with the
// documented argv and environment, hand its stdout to the tenant as login details, follow key
// changes into the running sshd (a key added logs in, a key removed no longer does), and tear it
// all down (the hook's `end`, the sshd, the directory) when the reservation is cancelled in the
// middle of its window; the next tenant's task on the node finds its GPUs scrubbed first. Needs root and Debian's openssh-server: fails, never skips, without them.
#include "agent/agent_e2e_fixture.h"
#include "agent/dedicated_e2e.h"
#include "core/calendar.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AccessOf;
using testing::AgentE2eTest;
using testing::Shell;

// The cluster's authorized_keys under the agent's cluster directory, or "" when there is none.
std::string AuthorizedKeys(const fs::path& clusters) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(clusters, ec)) {
    if (e.path().filename() != "authorized_keys") continue;
    std::ifstream in(e.path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  return "";
}

TEST_F(AgentE2eTest, AHookClusterRunsTheHookFollowsKeyChangesAndIsTornDownWhenCancelledInItsWindow) {
  ASSERT_EQ(::geteuid(), 0u) << "this test needs root (tenant users, a tenant's sshd); CI runs it as root";
  ASSERT_TRUE(fs::exists("/usr/sbin/sshd")) << "/usr/sbin/sshd is missing: apt-get install openssh-server (scripts/install-deps)";
  const int base = testing::ClusterPortBase();
  StartAllotd("tenants:\n  - {path: research}\n  - {path: other}\n", {"--cluster-port-base", std::to_string(base)});
  const fs::path clusters = "/tmp/adh-" + std::to_string(::getpid());
  fs::remove_all(clusters);
  // The hook records each call (argv and the variables of its contract) and, at start, prints
  // what the tenant is handed.
  const fs::path calls = dir_ / "hook-calls";
  const fs::path hook = dir_ / "hook.sh";
  std::ofstream(hook) << "#!/bin/sh\n"
                      << "echo \"$1 $ALLOT_RESERVATION $ALLOT_TENANT $ALLOT_NODES $ALLOT_WINDOW_START\" >> " << calls.string() << "\n"
                      << "if [ \"$1\" = start ]; then echo \"kubectl --context own-$ALLOT_NODES get nodes\"; fi\n";
  fs::permissions(hook, fs::perms::owner_all);
  const fs::path scrubs = dir_ / "scrubbed";
  StartAgent("dc-h", "", {"--cluster-dir", clusters.string(), "--provision-hook", hook.string(), "--scrub",
                          "echo \"$ALLOT_SCRUB_DEVICES\" >> " + scrubs.string()});
  WaitReady("dc-h");
  for (const char* who : {"first", "second"}) {
    ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C " + std::string(who) + " -f " + (dir_ / who).string()).c_str()), 0);
  }
  auto [k1, first] = Call("POST", "/v1/keys", Json{{"tenant", "research"}, {"key", ReadFile(dir_ / "first.pub")}}.dump());
  ASSERT_EQ(k1, 201) << first.dump();

  const int64_t start = testing::WholeSecondFromNow(3000), end = start + 600000;
  Json booking = {{"name", "own"}, {"tenant", "research"}, {"model", "H100-80GB"}, {"nodes", 1}, {"orchestrator", "hook"},
                  {"start", FormatRfc3339(start)}, {"end", FormatRfc3339(end)}};
  auto [bc, booked] = Call("POST", "/v1/reservations", booking.dump());
  ASSERT_EQ(bc, 201) << booked.dump();

  Json node;
  ASSERT_TRUE(WaitFor(30, [&] {
    node = AccessOf(Get("/v1/reservations/own"));
    return node.value("state", "") == "running" || node.value("state", "") == "failed";
  })) << Get("/v1/reservations/own").dump();
  ASSERT_EQ(node["state"], "running") << node.dump();
  EXPECT_LE(start, testing::WallMs()) << "started before its window";
  EXPECT_NE(node.value("login_details", "").find("kubectl --context own-dc-h get nodes"), std::string::npos) << node.dump();
  EXPECT_EQ(ReadFile(calls).rfind("start own research dc-h 20", 0), 0u) << ReadFile(calls);
  EXPECT_EQ(ReadFile(calls).find('\n'), ReadFile(calls).size() - 1) << "one call so far: " << ReadFile(calls);
  const std::string user = node["ssh"]["user"];
  auto ssh = [&](const std::string& who) {
    return Shell("ssh -F /dev/null -i " + (dir_ / who).string() + " -p " + std::to_string(base) +
                 " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o IdentitiesOnly=yes"
                 " -o LogLevel=ERROR -o ConnectTimeout=5 " + user + "@127.0.0.1 echo in-$(id -un)");
  };
  EXPECT_NE(ssh("first").find("in-"), std::string::npos) << "the registered key logs in";
  EXPECT_EQ(ssh("second").find("in-"), std::string::npos) << "a key not registered does not";

  // A key added and the first removed while the window is open reach the running sshd.
  auto [k2, second] = Call("POST", "/v1/keys", Json{{"tenant", "research"}, {"key", ReadFile(dir_ / "second.pub")}}.dump());
  ASSERT_EQ(k2, 201) << second.dump();
  auto [kd, removed] = Call("DELETE", "/v1/keys/" + first["id"].dump(), "");
  ASSERT_EQ(kd, 200) << removed.dump();
  const std::string second_body = ReadFile(dir_ / "second.pub").substr(0, 60);
  const std::string first_body = ReadFile(dir_ / "first.pub").substr(0, 60);
  ASSERT_TRUE(WaitFor(20, [&] {
    const std::string keys = AuthorizedKeys(clusters);
    return keys.find(second_body) != std::string::npos && keys.find(first_body) == std::string::npos;
  })) << AuthorizedKeys(clusters);
  EXPECT_NE(ssh("second").find("in-"), std::string::npos) << "the added key logs in";
  EXPECT_EQ(ssh("first").find("in-"), std::string::npos) << "the removed key no longer does";

  // Cancelled in its window: the hook's end runs, the sshd stops, the directory goes.
  auto [cc, cancelled] = Call("DELETE", "/v1/reservations/own", "");
  ASSERT_EQ(cc, 200) << cancelled.dump();
  ASSERT_TRUE(WaitFor(30, [&] { return ReadFile(calls).find("end own") != std::string::npos && fs::is_empty(clusters); }))
      << ReadFile(calls);
  EXPECT_LT(testing::WallMs(), end) << "torn down by the cancel, not the window's end";
  EXPECT_EQ(ssh("second").find("in-"), std::string::npos) << "no login after the cancel";
  fs::remove_all(clusters);

  // The GPUs were the cluster tenant's: another tenant's task gets them scrubbed first.
  Submit("after", "other", "true", R"({"gpus": 2})", R"("duration": "1m")");
  WaitState("after", "finished", 30);
  const std::string scrubbed = ReadFile(scrubs);
  EXPECT_EQ(std::count(scrubbed.begin(), scrubbed.end(), '\n'), 2) << "one scrub per GPU the task got: " << scrubbed;
  const std::string log = ReadFile(dir_ / "dc-h" / "agent.log");
  EXPECT_NE(log.find("(from 'research' to 'other')"), std::string::npos) << log;
}

// An agent killed in the window leaves its cluster behind; its next run stops what was left
// (the hook's end, the old sshd) before it registers, then starts the cluster again since the
// window is still open.
TEST_F(AgentE2eTest, AnAgentKilledInAClustersWindowStopsWhatItLeftThenStartsTheClusterAgain) {
  ASSERT_EQ(::geteuid(), 0u) << "this test needs root (tenant users, a tenant's sshd); CI runs it as root";
  ASSERT_TRUE(fs::exists("/usr/sbin/sshd")) << "/usr/sbin/sshd is missing: apt-get install openssh-server (scripts/install-deps)";
  const int base = testing::ClusterPortBase();
  StartAllotd("tenants:\n  - {path: research}\n", {"--cluster-port-base", std::to_string(base)});
  const fs::path clusters = "/tmp/adk-" + std::to_string(::getpid());
  fs::remove_all(clusters);
  const fs::path calls = dir_ / "hook-calls";
  const fs::path hook = dir_ / "hook.sh";
  std::ofstream(hook) << "#!/bin/sh\necho \"$1\" >> " << calls.string() << "\necho ready\n";
  fs::permissions(hook, fs::perms::owner_all);
  const std::vector<std::string> args = {"--cluster-dir", clusters.string(), "--provision-hook", hook.string()};
  StartAgent("dc-k", "", args);
  WaitReady("dc-k");
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C k -f " + (dir_ / "key").string()).c_str()), 0);
  ASSERT_EQ(Call("POST", "/v1/keys", Json{{"tenant", "research"}, {"key", ReadFile(dir_ / "key.pub")}}.dump()).first, 201);
  const int64_t start = testing::WholeSecondFromNow(2000);
  Json booking = {{"name", "own"}, {"tenant", "research"}, {"model", "H100-80GB"}, {"nodes", 1}, {"orchestrator", "hook"},
                  {"start", FormatRfc3339(start)}, {"duration", "10m"}};
  ASSERT_EQ(Call("POST", "/v1/reservations", booking.dump()).first, 201);
  auto state = [&] { return AccessOf(Get("/v1/reservations/own")).value("state", ""); };
  ASSERT_TRUE(WaitFor(30, [&] { return state() == "running"; })) << Get("/v1/reservations/own").dump();
  ASSERT_EQ(ReadFile(calls), "start\n");

  pid_t agent = AgentPid("dc-k");
  ::kill(agent, SIGKILL);
  ::waitpid(agent, nullptr, 0);
  StartAgent("dc-k", "", args);
  ASSERT_TRUE(WaitFor(30, [&] { return ReadFile(calls) == "start\nend\nstart\n"; })) << ReadFile(calls);
  const std::string log = ReadFile(dir_ / "dc-k" / "agent.log");
  EXPECT_NE(log.find("stopped 1 dedicated cluster(s) left by a previous run\n"), std::string::npos) << log;
  ASSERT_TRUE(WaitFor(30, [&] { return state() == "running"; })) << Get("/v1/reservations/own").dump();
  const std::string user = Get("/v1/reservations/own")["access"][0]["ssh"]["user"];
  const std::string out = Shell("ssh -F /dev/null -i " + (dir_ / "key").string() + " -p " + std::to_string(base) +
                                " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes"
                                " -o IdentitiesOnly=yes -o LogLevel=ERROR -o ConnectTimeout=5 " + user + "@127.0.0.1 echo in");
  EXPECT_EQ(out, "in\n") << "the sshd of the new run takes the port";
  ASSERT_EQ(Call("DELETE", "/v1/reservations/own", "").first, 200);
  ASSERT_TRUE(WaitFor(30, [&] { return fs::is_empty(clusters); }));
  fs::remove_all(clusters);
}

}  // namespace
}  // namespace allot
