// A real OpenSSH sshd run as a tenant's uid: the registered key logs in as that uid, any other is
// refused, a key taken away stops working, and Stop closes the port, ends open sessions and
// removes the keys — from this object or from a new one after an agent restart.
//
// Needs root (the sshd runs as a tenant's uid, whose passwd entry the test makes and removes) and
// OpenSSH's server and client (scripts/install-deps). Without them every test here FAILS, saying
// which is missing: a host that lacks them must not pass by skipping.
#include "agent/cluster/tenant_sshd.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "agent/cluster/tenant_user.h"
#include "agent/run/command.h"
#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kSshd = "/usr/sbin/sshd";

// A port nobody listens on now: the kernel's pick for a socket bound to port 0.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return -1;
  ::close(fd);
  return ntohs(a.sin_port);
}

bool Accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Live processes whose real uid is `uid`.
std::vector<pid_t> ProcessesOf(uid_t uid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto status = ReadText(e.path().string() + "/status");
    if (!status) continue;
    size_t at = status->find("\nUid:\t");
    if (at != std::string::npos && std::stoul(status->substr(at + 6)) == uid &&
        status->find("\nState:\tZ") == std::string::npos)
      out.push_back(std::stoi(name));
  }
  return out;
}

class TenantSshdTest : public ::testing::Test {
 protected:
  // One user for the suite, in the tenant range but far above where the runner's tests start.
  static void SetUpTestSuite() {
    const uid_t uid = 265000 + static_cast<uid_t>(::getpid() % 500);
    user_ = {TenantUserName(uid), uid, uid, "/", "/bin/sh"};
    made_ = ::geteuid() == 0 ? EnsureTenantUser(user_) : FailedPrecondition("not root");
  }
  static void TearDownTestSuite() {
    if (::geteuid() == 0) {
      Status s = RemoveTenantUser(user_.name);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }

  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "NOT SKIPPED, FAILED: the tenant sshd test needs root (it runs sshd as a "
                                  "tenant's uid and makes that uid's passwd entry); CI runs it as root";
    ASSERT_EQ(::access(kSshd, X_OK), 0) << "NOT SKIPPED, FAILED: no " << kSshd
                                        << ": run scripts/install-deps (openssh-server)";
    ASSERT_TRUE(ResolveCommand("ssh", kTaskPath)) << "NOT SKIPPED, FAILED: no ssh client: run scripts/install-deps";
    ASSERT_TRUE(made_.ok()) << "making the test's user " << user_.name << ": " << made_.ToString();
    for (const char* who : {"alice", "mallory"}) {
      CommandSpec keygen;
      keygen.argv = {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", (dir_ / who).string()};
      auto r = RunCommand(keygen);
      ASSERT_TRUE(r && r->exit_code == 0) << "ssh-keygen: " << (r ? r->output_tail : r.error().ToString());
    }
  }
  void TearDown() override {
    for (auto& sshd : started_) EXPECT_TRUE(sshd->Stop().ok());
  }

  std::string PublicKey(const std::string& who) {
    auto text = ReadText((dir_ / (who + ".pub")).string());
    return text ? text->substr(0, text->find('\n')) : "";
  }
  TenantSshdSpec Spec() {
    TenantSshdSpec s;
    s.dir = (dir_ / "sshd" / "b-1").string();
    s.uid = user_.uid;
    s.gid = user_.gid;
    s.user = user_.name;
    s.port = FreePort();
    s.authorized_keys = {PublicKey("alice")};
    return s;
  }
  TenantSshd* Started(const TenantSshdSpec& spec) {
    started_.push_back(std::make_unique<TenantSshd>(spec));
    Status s = started_.back()->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok() ? started_.back().get() : nullptr;
  }
  std::vector<std::string> SshArgv(const std::string& who, int port, const std::string& command) {
    return {"ssh", "-F", "/dev/null", "-i", (dir_ / who).string(), "-p", std::to_string(port),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
            "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=5",
            user_.name + "@127.0.0.1", command};
  }
  CommandResult Ssh(const std::string& who, int port, const std::string& command) {
    CommandSpec spec;
    spec.argv = SshArgv(who, port, command);
    spec.timeout_ms = 20000;
    auto r = RunCommand(spec);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : CommandResult{};
  }

  static TenantUser user_;
  static Status made_;
  testing::ScratchDir dir_{"sshd"};
  std::vector<std::unique_ptr<TenantSshd>> started_;
};

TenantUser TenantSshdTest::user_;
Status TenantSshdTest::made_;

TEST_F(TenantSshdTest, TheRegisteredKeyLogsInAsTheTenantsUidAndAnyOtherKeyIsRefused) {
  TenantSshd* sshd = Started(Spec());
  ASSERT_NE(sshd, nullptr);
  const std::string uid = std::to_string(user_.uid);
  CommandResult in = Ssh("alice", sshd->spec().port, "id -u; id -g");
  EXPECT_EQ(in.exit_code, 0) << in.output_tail;
  EXPECT_EQ(in.output_tail, uid + "\n" + uid + "\n");
  CommandResult out = Ssh("mallory", sshd->spec().port, "id -u");
  EXPECT_EQ(out.exit_code, 255);
  EXPECT_THAT(out.output_tail, HasSubstr("Permission denied (publickey)"));
  EXPECT_THAT(*ReadText(sshd->LogPath()), HasSubstr("Accepted publickey for " + user_.name));

  // The listener is the tenant's; its keys are root's, readable by the tenant's group only.
  struct stat st{};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(sshd->pid())).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  ASSERT_EQ(::stat(sshd->KeysPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, user_.gid);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat(sshd->spec().dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
}

TEST_F(TenantSshdTest, StopRevokesTheKeysClosesThePortAndRemovesItsDirectoryAndASecondStopIsOk) {
  TenantSshd* sshd = Started(Spec());
  ASSERT_NE(sshd, nullptr);
  const int port = sshd->spec().port;
  ASSERT_EQ(Ssh("alice", port, "true").exit_code, 0);
  ASSERT_TRUE(sshd->Stop().ok());
  EXPECT_FALSE(Accepts(port));
  EXPECT_FALSE(fs::exists(sshd->KeysPath()));
  EXPECT_FALSE(fs::exists(sshd->spec().dir));
  CommandResult after = Ssh("alice", port, "true");
  EXPECT_EQ(after.exit_code, 255);
  EXPECT_THAT(after.output_tail, HasSubstr("Connection refused"));
  EXPECT_TRUE(sshd->Stop().ok());
  EXPECT_TRUE(ProcessesOf(user_.uid).empty());
}

TEST_F(TenantSshdTest, StopEndsTheSessionsStillOpen) {
  TenantSshd* sshd = Started(Spec());
  ASSERT_NE(sshd, nullptr);
  SpawnPlan plan;
  plan.argv = SshArgv("alice", sshd->spec().port, "echo started; sleep 600");
  plan.argv[0] = *ResolveCommand("ssh", kTaskPath);
  plan.env = {{"PATH", kTaskPath}};
  plan.log_path = (dir_ / "session.log").string();
  auto client = Spawn(plan);
  ASSERT_TRUE(client) << client.error().ToString();
  for (int i = 0; i < 500 && ReadText(plan.log_path).value_or("").find("started") == std::string::npos; ++i)
    SleepMillis(20);
  ASSERT_THAT(ReadText(plan.log_path).value_or(""), HasSubstr("started"));
  EXPECT_GE(ProcessesOf(user_.uid).size(), 3u);  // the listener, the connection's sshd, the session's sleep

  ASSERT_TRUE(sshd->Stop().ok());
  EXPECT_TRUE(ProcessesOf(user_.uid).empty());
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && (done = ::waitpid(*client, &status, WNOHANG)) == 0; ++i) SleepMillis(20);
  EXPECT_EQ(done, *client) << "the ssh client still runs after its sshd was stopped";
  if (done != *client) {
    ::kill(*client, SIGKILL);
    ::waitpid(*client, &status, 0);
  }
}

TEST_F(TenantSshdTest, AKeyTakenAwayMidWindowNoLongerLogsInAndOneAddedDoes) {
  TenantSshd* sshd = Started(Spec());
  ASSERT_NE(sshd, nullptr);
  const int port = sshd->spec().port;
  ASSERT_EQ(Ssh("alice", port, "true").exit_code, 0);
  ASSERT_TRUE(sshd->SetAuthorizedKeys({PublicKey("mallory")}).ok());
  EXPECT_EQ(Ssh("alice", port, "true").exit_code, 255);
  EXPECT_EQ(Ssh("mallory", port, "true").exit_code, 0);
  EXPECT_EQ(sshd->SetAuthorizedKeys({"ssh-dss AAAA"}).code(), Code::kInvalidArgument);
  EXPECT_EQ(Ssh("mallory", port, "true").exit_code, 0);  // a refused list changes nothing
}

TEST_F(TenantSshdTest, ARestartedAgentStopsTheSshdItFindsRecordedInTheDirectory) {
  const TenantSshdSpec spec = Spec();
  TenantSshd* first = Started(spec);
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(Ssh("alice", spec.port, "true").exit_code, 0);
  TenantSshd after_restart(spec);  // knows nothing but the spec
  ASSERT_TRUE(after_restart.Stop().ok());
  EXPECT_FALSE(Accepts(spec.port));
  EXPECT_FALSE(fs::exists(spec.dir));
  EXPECT_TRUE(first->Stop().ok());
}

TEST_F(TenantSshdTest, RefusesAUserWithoutItsPasswdEntryAndADirectoryAnEarlierSshdLeft) {
  TenantSshdSpec stranger = Spec();
  stranger.user = "allot-nobody-here";
  TenantSshd a(stranger);
  Status s = a.Start();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("user 'allot-nobody-here': no passwd entry on this node"));
  EXPECT_FALSE(fs::exists(stranger.dir));

  TenantSshdSpec spec = Spec();
  fs::create_directories(spec.dir);
  ASSERT_TRUE(WriteText(spec.dir + "/sshd.log", "kept").ok());
  TenantSshd b(spec);
  s = b.Start();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("exists: an earlier sshd's? Stop it first"));
  EXPECT_EQ(ReadText(spec.dir + "/sshd.log").value_or(""), "kept");
}

TEST_F(TenantSshdTest, SaysWhatSshdSaidWhenItCannotListenAndLeavesNothingBehind) {
  TenantSshdSpec spec = Spec();
  int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(spec.port));
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  TenantSshd sshd(spec);
  Status s = sshd.Start();
  ::close(taken);
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("before listening on 127.0.0.1 port " + std::to_string(spec.port)));
  EXPECT_THAT(s.message(), HasSubstr("Address already in use"));
  EXPECT_FALSE(fs::exists(spec.dir));
  EXPECT_TRUE(ProcessesOf(user_.uid).empty());
}

TEST_F(TenantSshdTest, ItsUserIsMadeOnceAndAUidOrNameHeldOtherwiseIsRefused) {
  EXPECT_TRUE(EnsureTenantUser(user_).ok());  // made by the suite: taken as it is
  EXPECT_TRUE(CheckTenantUser(user_.name, user_.uid, user_.gid).ok());
  TenantUser other = user_;
  other.name = "allot-other-name";
  Status s = EnsureTenantUser(other);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("uid " + std::to_string(user_.uid) + " already belongs to '" + user_.name + "'"));
  TenantUser moved = user_;
  moved.uid = moved.gid = user_.uid + 1000;
  s = EnsureTenantUser(moved);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'" + user_.name + "' already exists with uid " + std::to_string(user_.uid)));

  TenantUser second{TenantUserName(user_.uid + 1000), user_.uid + 1000, user_.uid + 1000};
  ASSERT_TRUE(EnsureTenantUser(second).ok());
  EXPECT_TRUE(CheckTenantUser(second.name, second.uid, second.gid).ok());
  ASSERT_TRUE(RemoveTenantUser(second.name).ok());
  EXPECT_EQ(CheckTenantUser(second.name, second.uid, second.gid).code(), Code::kFailedPrecondition);
  EXPECT_TRUE(RemoveTenantUser(second.name).ok());
}

}  // namespace
}  // namespace allot
