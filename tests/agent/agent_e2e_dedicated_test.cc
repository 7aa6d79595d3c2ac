// A dedicated cluster end to end (issue 16): allotd and a real allot-agent on the fake NVML; a
// tenant registers a key and books one whole node with orchestrator slurm for a window of a few
// seconds. At the window's start the agent starts the tenant's sshd and a private Slurm (real
// munged, slurmctld and slurmd), reports the login details, and GET /v1/reservations/NAME shows
// them; sinfo against the SLURM_CONF they name sees the node idle; at the window's end it is all
// torn down. Then two agents booked as one 2-node Slurm: one controller on the first node, a
// slurmd on each, one munge key; srun runs a step on both, and at the end nothing is left. Needs
// root and Debian's slurm-wlm, munge and openssh-server: fails, never skips, without them.
#include "agent/agent_e2e_fixture.h"
#include "agent/dedicated_e2e.h"
#include "core/calendar.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AccessOf;
using testing::AgentE2eTest;
using testing::Listening;
using testing::Shell;

// The value of "export SLURM_CONF=…" in login details.
std::string SlurmConf(const std::string& details) {
  const std::string tag = "export SLURM_CONF=";
  auto at = details.find(tag);
  if (at == std::string::npos) return "";
  auto end = details.find('\n', at);
  return details.substr(at + tag.size(), end - at - tag.size());
}

TEST_F(AgentE2eTest, ADedicatedSlurmStartsInItsWindowAnswersSinfoAndIsTornDownAtItsEnd) {
  ASSERT_EQ(::geteuid(), 0u) << "this test needs root (tenant users, slurmd, a tenant's sshd); CI runs it as root";
  for (const char* tool : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/sbin/sshd"}) {
    ASSERT_TRUE(fs::exists(tool)) << tool << " is missing: apt-get install slurm-wlm munge openssh-server (scripts/install-deps)";
  }
  const int base = testing::ClusterPortBase();
  StartAllotd("tenants:\n  - {path: research}\n", {"--cluster-port-base", std::to_string(base)});
  // A short cluster directory: munged's socket must fit 107 bytes, the scratch path is long.
  const fs::path clusters = "/tmp/adc-" + std::to_string(::getpid());
  fs::remove_all(clusters);
  StartAgent("dc-a", "", {"--cluster-dir", clusters.string()});
  WaitReady("dc-a");
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C e2e -f " + (dir_ / "key").string()).c_str()), 0);
  auto [kc, key] = Call("POST", "/v1/keys", Json{{"tenant", "research"}, {"key", ReadFile(dir_ / "key.pub")}}.dump());
  ASSERT_EQ(kc, 201) << key.dump();

  const int64_t start = testing::WholeSecondFromNow(3000), end = start + 12000;
  Json booking = {{"name", "own"}, {"tenant", "research"}, {"model", "H100-80GB"}, {"nodes", 1}, {"orchestrator", "slurm"},
                  {"start", FormatRfc3339(start)}, {"end", FormatRfc3339(end)}};
  auto [bc, booked] = Call("POST", "/v1/reservations", booking.dump());
  ASSERT_EQ(bc, 201) << booked.dump();

  // In the window: running, with the node's ssh and the Slurm's login details.
  Json node;
  ASSERT_TRUE(WaitFor(30, [&] {
    node = AccessOf(Get("/v1/reservations/own"));
    return node.value("state", "") == "running" || node.value("state", "") == "failed";
  })) << Get("/v1/reservations/own").dump();
  ASSERT_EQ(node["state"], "running") << node.dump();
  EXPECT_LE(start, testing::WallMs()) << "started before its window";
  EXPECT_EQ(node["node"], "dc-a");
  EXPECT_EQ(node["ssh"]["host"], "dc-a.e2e");
  EXPECT_EQ(node["ssh"]["port"], base);
  EXPECT_TRUE(Listening(base)) << "the tenant's sshd";
  const std::string details = node.value("login_details", "");
  const std::string conf = SlurmConf(details);
  ASSERT_FALSE(conf.empty()) << details;
  EXPECT_TRUE(fs::exists(conf));
  std::string sinfo = Shell("SLURM_CONF=" + conf + " sinfo -h -N -o '%N %t %G'");
  EXPECT_NE(sinfo.find("dc-a idle gpu:8"), std::string::npos) << sinfo;

  // After the window: torn down and reported so.
  ASSERT_TRUE(WaitFor(40, [&] {
    node = AccessOf(Get("/v1/reservations/own"));
    return node.value("state", "") == "stopped";
  })) << Get("/v1/reservations/own").dump();
  EXPECT_GE(testing::WallMs(), end);
  EXPECT_FALSE(node.contains("error")) << node.dump();
  EXPECT_FALSE(fs::exists(conf)) << "the cluster's directory is removed";
  EXPECT_FALSE(Listening(base)) << "the tenant's sshd is stopped";
  EXPECT_FALSE(Listening(base + 1)) << "slurmctld is stopped";
  EXPECT_EQ(Shell("grep -l 'SLURM_CONF=" + conf + "' /proc/[0-9]*/environ 2>/dev/null | grep -v self"), "")
      << "no process carries the cluster's SLURM_CONF";
  EXPECT_TRUE(fs::is_empty(clusters));
  fs::remove_all(clusters);
}

TEST_F(AgentE2eTest, ATwoNodeDedicatedSlurmHasOneControllerASlurmdOnEachNodeRunsAStepOnBothAndLeavesNothing) {
  ASSERT_EQ(::geteuid(), 0u) << "this test needs root (tenant users, slurmd); CI runs it as root";
  for (const char* tool : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/srun"}) {
    ASSERT_TRUE(fs::exists(tool)) << tool << " is missing: apt-get install slurm-wlm munge (scripts/install-deps)";
  }
  const int base = testing::ClusterPortBase();
  StartAllotd("tenants:\n  - {path: research}\n", {"--cluster-port-base", std::to_string(base)});
  // Both agents on this host: each its own cluster directory (short: munged's socket is under
  // it), both registered at 127.0.0.1, the address the other node's daemons reach them at.
  const std::string tmp = "/tmp/adc-" + std::to_string(::getpid());
  const std::map<std::string, fs::path> dirs = {{"dc-a", tmp + "-a"}, {"dc-b", tmp + "-b"}};
  struct RemoveAtEnd {
    const std::map<std::string, fs::path>& dirs;
    ~RemoveAtEnd() {
      for (const auto& [node, d] : dirs) fs::remove_all(d);
    }
  } remove_at_end{dirs};  // also when an assertion ends the test early
  for (const auto& [node, d] : dirs) {
    fs::remove_all(d);
    StartAgent(node, "", {"--cluster-dir", d.string(), "--address", "127.0.0.1"});
  }
  WaitReady("dc-a");
  WaitReady("dc-b");

  const int64_t start = testing::WholeSecondFromNow(3000), end = start + 20000;
  Json booking = {{"name", "pair"}, {"tenant", "research"}, {"model", "H100-80GB"}, {"nodes", 2}, {"orchestrator", "slurm"},
                  {"start", FormatRfc3339(start)}, {"end", FormatRfc3339(end)}};
  auto [bc, booked] = Call("POST", "/v1/reservations", booking.dump());
  ASSERT_EQ(bc, 201) << booked.dump();

  // Both nodes running: the controller's agent once both are idle, the other once the
  // controller sees it idle.
  Json r;
  auto states = [&] {
    r = Get("/v1/reservations/pair");
    std::vector<std::string> out;
    for (const Json& a : r.value("access", Json::array())) out.push_back(a.value("state", ""));
    return out;
  };
  ASSERT_TRUE(WaitFor(40, [&] {
    auto s = states();
    return s.size() == 2 && (std::count(s.begin(), s.end(), "failed") > 0 || std::count(s.begin(), s.end(), "running") == 2);
  })) << r.dump();
  ASSERT_EQ(states(), (std::vector<std::string>{"running", "running"})) << r.dump();
  EXPECT_LE(start, testing::WallMs()) << "started before its window";
  const std::string first = r["access"][0]["node"], second = r["access"][1]["node"];
  const std::string conf = SlurmConf(AccessOf(r, first).value("login_details", ""));
  const std::string other_conf = SlurmConf(AccessOf(r, second).value("login_details", ""));
  ASSERT_FALSE(conf.empty()) << r.dump();
  ASSERT_FALSE(other_conf.empty()) << r.dump();
  EXPECT_NE(conf, other_conf) << "each agent its own directory";
  EXPECT_NE(AccessOf(r, first)["login_details"].get<std::string>().find("controller 127.0.0.1:" + std::to_string(base + 1)),
            std::string::npos)
      << "reservation 0, node 0: slot 0, slurmctld on base + 1: " << r.dump();

  // One controller: only the first node's agent runs slurmctld; each runs its own slurmd.
  auto with_conf = [](const std::string& daemon, const std::string& c) {
    return Shell("for p in $(pgrep -x " + daemon + "); do grep -qz '^SLURM_CONF=" + c + "$' /proc/$p/environ && echo $p; done");
  };
  EXPECT_NE(with_conf("slurmctld", conf), "") << "the controller runs on the first node";
  EXPECT_EQ(with_conf("slurmctld", other_conf), "") << "and nowhere else";
  EXPECT_NE(with_conf("slurmd", conf), "");
  EXPECT_NE(with_conf("slurmd", other_conf), "");
  EXPECT_NE(with_conf("munged", conf), "");
  EXPECT_NE(with_conf("munged", other_conf), "");
  // The same key in both (munge would refuse the other node's credentials otherwise).
  const fs::path key_a = fs::path(conf).parent_path().parent_path() / "munge" / "munge.key";
  const fs::path key_b = fs::path(other_conf).parent_path().parent_path() / "munge" / "munge.key";
  EXPECT_EQ(ReadFile(key_a).size(), 1024u);
  EXPECT_EQ(ReadFile(key_a), ReadFile(key_b)) << "one munge key for the window";

  std::string sinfo = Shell("SLURM_CONF=" + conf + " sinfo -h -N -o '%N %t %G'");
  EXPECT_NE(sinfo.find("dc-a idle gpu:8"), std::string::npos) << sinfo;
  EXPECT_NE(sinfo.find("dc-b idle gpu:8"), std::string::npos) << sinfo;
  std::string step = Shell("cd /tmp && SLURM_CONF=" + conf + " timeout 30 srun -N2 -l --gres=gpu:1 printenv SLURMD_NODENAME | sort");
  EXPECT_NE(step.find(": dc-a\n"), std::string::npos) << "a step on both nodes: " << step;
  EXPECT_NE(step.find(": dc-b\n"), std::string::npos) << "a step on both nodes: " << step;
  // Through the other node's configuration too: it reaches the same controller (right after the
  // step a node may still be "comp", completing, so only the nodes are looked for).
  std::string other_sinfo = Shell("SLURM_CONF=" + other_conf + " sinfo -h -N -o '%N %t'");
  EXPECT_NE(other_sinfo.find(first + " "), std::string::npos) << other_sinfo;
  EXPECT_NE(other_sinfo.find(second + " "), std::string::npos) << other_sinfo;
  // A job on both nodes still running at the window's end.
  std::string batch = Shell("cd /tmp && SLURM_CONF=" + conf + " sbatch -N2 --output=/dev/null --wrap 'srun -N2 sleep 600'");
  EXPECT_NE(batch.find("Submitted batch job"), std::string::npos) << batch;

  ASSERT_TRUE(WaitFor(60, [&] {
    auto s = states();
    return s == std::vector<std::string>{"stopped", "stopped"};
  })) << r.dump();
  EXPECT_GE(testing::WallMs(), end);
  for (const Json& a : r["access"]) EXPECT_FALSE(a.contains("error")) << a.dump();
  for (const std::string& c : {conf, other_conf}) {
    EXPECT_FALSE(fs::exists(c)) << "the cluster's directory is removed";
    EXPECT_EQ(Shell("grep -l 'SLURM_CONF=" + c + "' /proc/[0-9]*/environ 2>/dev/null | grep -v self"), "")
        << "no process carries " << c << " (daemons, slurmstepd, the job's steps)";
  }
  EXPECT_FALSE(Listening(base + 1)) << "slurmctld is stopped";
  EXPECT_FALSE(Listening(base + 2)) << "the first node's slurmd is stopped";
  EXPECT_FALSE(Listening(base + 3 + 2)) << "the second node's slurmd is stopped";
  for (const auto& [node, d] : dirs) EXPECT_TRUE(fs::is_empty(d)) << d;
}

}  // namespace
}  // namespace allot
