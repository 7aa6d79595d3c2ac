// Both sandboxes, bubblewrap's and allot's own, observed from inside a real task: private /tmp,
// read-only system, another tenant's directory absent, its own pid namespace, no network unless
// allowed, no capability, and the tenant's own uid (when the tests run as root). Plus bwrap's
// argv as built, allot's own set-up as planned, and which sandbox a mode resolves to.
#include "agent/run/sandbox.h"

#include <sched.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agent/run/native_sandbox.h"
#include "agent/run/runner.h"
#include "agent/runner_fixture.h"

namespace allot {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunnerTest;

TEST(BwrapArgvTest, HidesTheWorkRootBeforeBindingBackOnlyTheTasksDirectories) {
  SandboxSpec spec;
  spec.work_root = "/srv/allot";
  spec.work_dir = "/srv/allot/t/work";
  spec.checkpoint_dir = "/srv/allot/t/ck";
  auto a = BwrapArgv(spec, {"/usr/bin/python3", "train.py"});
  auto at = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) - a.begin(); };
  EXPECT_LT(at("/srv/allot"), at("/srv/allot/t/work"));  // the tmpfs first, so the binds stay
  EXPECT_NE(at("--unshare-all"), static_cast<long>(a.size()));
  EXPECT_EQ(at("--share-net"), static_cast<long>(a.size()));
  EXPECT_THAT(std::vector<std::string>(a.end() - 3, a.end()), ElementsAre("--", "/usr/bin/python3", "train.py"));
  spec.network = true;
  auto b = BwrapArgv(spec, {"/bin/true"});
  EXPECT_NE(std::find(b.begin(), b.end(), "--share-net"), b.end());
}

TEST(BwrapArgvTest, ModeBwrapWithoutBwrapIsRefusedAndAutoFallsBackToNone) {
  EXPECT_FALSE(ResolveSandbox(SandboxMode::kBwrap, "/nonexistent/bwrap"));
  EXPECT_EQ(*ResolveSandbox(SandboxMode::kAuto, "/nonexistent/bwrap"), false);
  EXPECT_EQ(*ResolveSandbox(SandboxMode::kNone, "/usr/bin/bwrap"), false);
}

TEST(SandboxKindTest, NativeNeedsRootAndAllotInitAndAutoPrefersItAsRoot) {
  const std::string init = ALLOT_INIT_BINARY;
  auto no_init = ResolveSandboxKind(SandboxMode::kNative, "/usr/bin/bwrap", "/nonexistent/allot-init", true);
  ASSERT_FALSE(no_init);
  EXPECT_EQ(no_init.error().message(), "sandbox mode native: allot-init '/nonexistent/allot-init' is not an executable file");
  auto no_root = ResolveSandboxKind(SandboxMode::kNative, "/usr/bin/bwrap", init, false);
  ASSERT_FALSE(no_root);
  EXPECT_EQ(no_root.error().message(), "sandbox mode native: the agent makes the namespaces itself and needs root");
  if (!NativeSandboxHostLacks().empty()) {
    // Then native is refused naming what is missing, and auto falls back.
    auto lacking = ResolveSandboxKind(SandboxMode::kNative, "/nonexistent/bwrap", init, true);
    ASSERT_FALSE(lacking);
    EXPECT_EQ(lacking.error().message(), "sandbox mode native: this host lacks " + NativeSandboxHostLacks());
    EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kAuto, "/nonexistent/bwrap", init, true), SandboxKind::kNone);
    GTEST_SKIP() << "NOT RUN (the rest): this host lacks " << NativeSandboxHostLacks();
  }
  EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kNative, "/nonexistent/bwrap", init, true), SandboxKind::kNative);
  EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kAuto, "/nonexistent/bwrap", init, true), SandboxKind::kNative);
  EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kAuto, "/nonexistent/bwrap", init, false), SandboxKind::kNone);
  EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kAuto, "/nonexistent/bwrap", "/nonexistent/allot-init", true), SandboxKind::kNone);
  EXPECT_EQ(*ResolveSandboxKind(SandboxMode::kNone, "/usr/bin/bwrap", init, true), SandboxKind::kNone);
  EXPECT_FALSE(ResolveSandboxKind(SandboxMode::kBwrap, "/nonexistent/bwrap", init, true));
}

TEST(NativeSandboxPlanTest, HidesTheWorkRootBeforeBindingBackOnlyTheTasksDirectoriesOnTheHostsRootMadeReadOnly) {
  SandboxSpec spec;
  spec.work_root = "/srv/allot";
  spec.work_dir = "/srv/allot/t/work";
  spec.checkpoint_dir = "/srv/allot/t/ck";
  NativeSandbox n = NativeSandboxPlan(spec, "/srv/roots/.stage", false);
  EXPECT_TRUE(n.read_only_root);
  EXPECT_EQ(n.pivot_to, "");
  EXPECT_TRUE(n.clone_flags & CLONE_NEWNET);
  EXPECT_TRUE(n.clone_flags & CLONE_NEWPID);
  EXPECT_TRUE(n.loopback);
  auto at = [&](MountStep::Kind kind, const std::string& target) {
    for (size_t i = 0; i < n.steps.size(); ++i)
      if (n.steps[i].kind == kind && n.steps[i].target == target) return static_cast<long>(i);
    return -1L;
  };
  const long hide = at(MountStep::Kind::kTmpfs, "/srv/allot");
  ASSERT_GE(hide, 0);
  EXPECT_GT(at(MountStep::Kind::kBind, "/srv/allot/t/work"), hide);  // the tmpfs first, so the binds stay
  EXPECT_GT(at(MountStep::Kind::kBind, "/srv/allot/t/ck"), hide);
  EXPECT_GE(at(MountStep::Kind::kProc, "/proc"), 0);
  EXPECT_EQ(at(MountStep::Kind::kTmpfs, "/proc/driver"), -1);  // the host has none
  int proc_read_only = 0;  // what would let a task reconfigure the kernel
  for (const MountStep& s : n.steps)
    if (s.kind == MountStep::Kind::kBind && s.target.rfind("/proc/", 0) == 0) proc_read_only += s.read_only && s.in_place;
  EXPECT_EQ(proc_read_only, 4);
  // The work directory is the host's, taken before the work root's tmpfs covered its path.
  EXPECT_FALSE(n.steps[at(MountStep::Kind::kBind, "/srv/allot/t/work")].in_place);
  spec.network = true;
  NativeSandbox shared = NativeSandboxPlan(spec, "/srv/roots/.stage", false);
  EXPECT_FALSE(shared.clone_flags & CLONE_NEWNET);
  EXPECT_FALSE(shared.loopback);
  // A volume at a path the host lacks: a tmpfs root of the host's entries, pivoted into.
  spec.host_root = {{"usr", ""}, {"bin", "usr/bin"}};
  NativeSandbox staged = NativeSandboxPlan(spec, "/srv/roots/.stage", false);
  EXPECT_TRUE(staged.read_only_root);  // the host's, before the stage's tmpfs is mounted
  EXPECT_EQ(staged.pivot_to, "/srv/roots/.stage");
  // After the root's own steps, every path is inside the new root (no step reaches the host's).
  ASSERT_EQ(staged.root_steps, 4u);  // the tmpfs, usr's mount point and bind, bin's link
  for (size_t i = staged.root_steps; i < staged.steps.size(); ++i)
    EXPECT_NE(staged.steps[i].target.rfind("/srv/roots/.stage", 0), 0u) << staged.steps[i].target;
  EXPECT_EQ(staged.steps[0].kind, MountStep::Kind::kTmpfs);
  EXPECT_EQ(staged.steps[0].target, "/srv/roots/.stage");
  bool usr = false, bin = false;
  for (const MountStep& s : staged.steps) {
    usr = usr || (s.kind == MountStep::Kind::kBind && s.source == "/usr" && s.target == "/srv/roots/.stage/usr" && s.read_only);
    bin = bin || (s.kind == MountStep::Kind::kSymlink && s.source == "usr/bin" && s.target == "/srv/roots/.stage/bin");
  }
  EXPECT_TRUE(usr);
  EXPECT_TRUE(bin);
}

// Lines "if <name>" a task printed for the interfaces it sees.
int Interfaces(const std::string& log) {
  int n = 0;
  for (size_t at = 0; (at = log.find("if ", at)) != std::string::npos; ++at)
    if (at == 0 || log[at - 1] == '\n') ++n;
  return n;
}

class SandboxTest : public RunnerTest, public ::testing::WithParamInterface<SandboxMode> {
 protected:
  void SetUp() override {
    if (std::string why = testing::SandboxMissing(GetParam()); !why.empty()) GTEST_SKIP() << why;
    runner_ = Make(GetParam());
    ASSERT_NE(runner_, nullptr);
    ASSERT_EQ(runner_->sandbox(), GetParam() == SandboxMode::kNative ? SandboxKind::kNative : SandboxKind::kBwrap);
  }
  // Runs `script` in the sandbox and returns its log.
  std::string RunInside(TaskLaunch l, const std::string& script) {
    l = Sh(std::move(l), script);
    auto pid = runner_->Start(l);
    EXPECT_TRUE(pid) << pid.error().ToString();
    if (!pid) return "";
    auto e = WaitFor(*runner_, l.key);
    EXPECT_TRUE(e && e->exit_code == 0) << (e ? e->reason : "") << "\n" << Read(l.log_path);
    return Read(l.log_path);
  }
  std::unique_ptr<Runner> runner_;
};

TEST_P(SandboxTest, TheTaskSeesAPrivateTmpAReadOnlySystemAndOnlyItsOwnTenantsDirectories) {
  const std::string other = root() + "/research/vision/work";
  std::filesystem::create_directories(other);
  ASSERT_TRUE(WriteText(other + "/secret", "theirs").ok());
  const std::string host_tmp = "/tmp/allot-sandbox-host-" + std::to_string(::getpid());
  ASSERT_TRUE(WriteText(host_tmp, "host").ok());
  TaskLaunch l = Launch("look", {});
  const std::string log = RunInside(
      l, "test -e " + host_tmp + " && echo host-tmp-visible || echo host-tmp-private\n"
         "echo x > /tmp/mine && echo tmp-writable\n"
         "touch /usr/allot-probe 2>/dev/null && echo system-writable || echo system-read-only\n"
         "test -e " + other + " && echo other-visible || echo other-hidden\n"
         "ls " + root() + "\n"
         "echo work > \"$HOME/out\" && echo work-writable\n");
  ::unlink(host_tmp.c_str());
  EXPECT_THAT(log, HasSubstr("host-tmp-private"));
  EXPECT_THAT(log, HasSubstr("tmp-writable"));
  EXPECT_THAT(log, HasSubstr("system-read-only"));
  EXPECT_THAT(log, HasSubstr("other-hidden"));
  EXPECT_THAT(log, Not(HasSubstr("vision")));  // the work root lists only this tenant
  EXPECT_THAT(log, HasSubstr("work-writable"));
  EXPECT_EQ(Read(l.work_dir + "/out"), "work\n");

}

// Nor another task's image root (its overlay's upper layer holds what that task wrote), with the
// agent's directories outside /tmp (which the sandbox covers anyway), as on a node.
TEST_P(SandboxTest, TheTaskCannotReadAnotherTasksImageRoot) {
  const std::string base = "/var/tmp/allot-roots-" + std::to_string(::getpid());
  const std::string upper = base + "/roots/theirs/upper";
  std::filesystem::create_directories(upper);
  ASSERT_TRUE(WriteText(upper + "/written", "theirs").ok());
  std::string log;
  {
    RunnerOptions o = Options(GetParam());
    o.work_root = base + "/work";
    o.cgroup_group += "-roots";
    auto runner = Runner::Create(o);
    ASSERT_TRUE(runner) << runner.error().ToString();
    TaskLaunch l = Sh(LaunchIn(o.work_root, "roots", {}), "cat " + upper + "/written 2>/dev/null || echo roots-hidden");
    ASSERT_TRUE((*runner)->Start(l));
    auto e = WaitFor(**runner, l.key);
    EXPECT_TRUE(e && e->exit_code == 0);
    log = Read(l.log_path);
  }
  std::filesystem::remove_all(base);
  EXPECT_EQ(log, "roots-hidden\n");
}

TEST_P(SandboxTest, TheTaskHasItsOwnPidNamespaceAndNoNetworkUnlessAllowed) {
  const std::string script =
      "for p in /proc/[0-9]*; do echo \"pid ${p#/proc/}\"; done\n"
      "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sed 's/^/if /'\n";
  std::string log = RunInside(Launch("pids", {}), script);
  // bwrap's init is 1, the shell 2, and a few short-lived helpers; the agent's pids are absent.
  EXPECT_THAT(log, HasSubstr("pid 1\n"));
  EXPECT_THAT(log, Not(HasSubstr("pid " + std::to_string(::getpid()) + "\n")));
  EXPECT_LE(std::count(log.begin(), log.end(), '\n'), 8) << log;
  EXPECT_THAT(log, HasSubstr("if lo\n"));
  EXPECT_EQ(Interfaces(log), 1) << log;

  auto host_ifaces = ReadText("/proc/net/dev");
  ASSERT_TRUE(host_ifaces);
  if (std::count(host_ifaces->begin(), host_ifaces->end(), '\n') <= 3)
    GTEST_SKIP() << "this machine has only loopback: a shared network looks the same";
  TaskLaunch net = Launch("net", {});
  net.network = true;
  std::string shared = RunInside(net, script);
  EXPECT_GT(Interfaces(shared), 1) << shared;
}

TEST_P(SandboxTest, EachTenantRunsAsItsOwnUidAndOwnsItsFiles) {
  if (::geteuid() != 0) {
    EXPECT_FALSE(runner_->per_tenant_users());
    GTEST_SKIP() << "not root: tasks run as the agent's user";
  }
  ASSERT_TRUE(runner_->per_tenant_users());
  TaskLaunch a = Launch("uid-a", {}, "research/nlp");
  TaskLaunch b = Launch("uid-b", {}, "research/vision");
  std::string log_a = RunInside(a, "id -u; id -g; id -G; touch \"$HOME/made\"");
  std::string log_b = RunInside(b, "id -u");
  const std::string uids = Read(root() + "/.allot-tenant-uids");
  EXPECT_EQ(uids, "200000 research/nlp\n200001 research/vision\n");
  EXPECT_EQ(log_a, "200000\n200000\n200000\n");  // no supplementary groups of the agent's
  EXPECT_EQ(log_b, "200001\n");
  struct stat st{};
  ASSERT_EQ(::stat((a.work_dir + "/made").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200000u);  // its real uid outside, not root mapped inside
  ASSERT_EQ(::stat(b.work_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200001u);
}

TEST_P(SandboxTest, TheTaskHasNoCapabilityAndCannotGainOne) {
  const std::string log = RunInside(Launch("caps", {}), "grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status");
  EXPECT_THAT(log, HasSubstr("CapInh:\t0000000000000000\n"));
  EXPECT_THAT(log, HasSubstr("CapPrm:\t0000000000000000\n"));
  EXPECT_THAT(log, HasSubstr("CapEff:\t0000000000000000\n"));
  EXPECT_THAT(log, HasSubstr("CapAmb:\t0000000000000000\n"));
  EXPECT_THAT(log, HasSubstr("NoNewPrivs:\t1\n"));
  if (GetParam() == SandboxMode::kNative) {
    // Dropped from the bounding set too, before the uid drop.
    EXPECT_THAT(RunInside(Launch("bounding", {}), "grep '^CapBnd:' /proc/self/status"), HasSubstr("CapBnd:\t0000000000000000\n"));
  }
}

TEST_P(SandboxTest, NothingItMountsReachesTheHostAndTheHostsMountsStayAsTheyWere) {
  auto mounts = [] {
    auto text = ReadText("/proc/self/mountinfo");
    EXPECT_TRUE(text);
    return text ? *text : "";
  };
  const std::string before = mounts();
  const std::string log = RunInside(Launch("mounts", {}), "grep -c . /proc/self/mountinfo");
  EXPECT_FALSE(log.empty());
  EXPECT_EQ(mounts(), before);  // no tmpfs, bind or proc of the task's, and no flag changed

  // Under a shared mount (systemd makes "/" one), a mount the sandbox made would propagate back
  // to the host's peer unless the sandbox's namespace is private (or a slave, bwrap's choice).
  // A work root on a shared tmpfs outside /tmp (which the sandbox covers with its own).
  if (::geteuid() != 0) GTEST_SKIP() << "NOT RUN (the shared-mount half): making a shared mount needs root";
  const std::string shared_dir = "/var/tmp/allot-sandbox-shared-" + std::to_string(::getpid());
  std::filesystem::create_directories(shared_dir);
  ASSERT_EQ(::mount("tmpfs", shared_dir.c_str(), "tmpfs", 0, "mode=0755"), 0) << ErrnoText(errno);
  ASSERT_EQ(::mount(nullptr, shared_dir.c_str(), nullptr, MS_SHARED, nullptr), 0) << ErrnoText(errno);
  std::string during, shared;
  {
    RunnerOptions o = Options(GetParam());
    o.work_root = shared_dir + "/work";
    o.cgroup_group += "-shared";
    auto runner = Runner::Create(o);
    ASSERT_TRUE(runner) << runner.error().ToString();
    TaskLaunch l = Sh(LaunchIn(o.work_root, "mounts-shared", {}), "touch ready; sleep 1");
    shared = mounts();
    ASSERT_TRUE((*runner)->Start(l));
    // Looked at while the task runs (a namespace's end takes its mounts' copies with it).
    for (int i = 0; i < 500 && !std::filesystem::exists(l.work_dir + "/ready"); ++i) ::usleep(10000);
    EXPECT_TRUE(std::filesystem::exists(l.work_dir + "/ready"));
    during = mounts();
    EXPECT_TRUE(WaitFor(**runner, l.key));
  }
  while (::umount2(shared_dir.c_str(), MNT_DETACH) == 0) {
  }
  std::filesystem::remove_all(shared_dir);
  EXPECT_EQ(during, shared);
}

// allot-init, pid 1 of the task's namespace, passes a signal it gets to the command's process
// group (a namespace's init gets only signals it handles), and ends with the command's code.
TEST_P(SandboxTest, AllotInitPassesASignalItGetsToTheCommandAndEndsWithItsCode) {
  if (GetParam() != SandboxMode::kNative) GTEST_SKIP() << "bwrap's init passes no signal on (the runner signals the task)";
  TaskLaunch l = Sh(Launch("init-signal", {}), "trap 'echo got-term; exit 7' TERM; touch ready; while :; do sleep 0.05; done");
  auto pid = runner_->Start(l);
  ASSERT_TRUE(pid) << pid.error().ToString();
  ASSERT_TRUE(WaitForFile(l.work_dir + "/ready"));
  ASSERT_EQ(::kill(*pid, SIGTERM), 0);  // to allot-init itself, not to the command
  auto e = WaitFor(*runner_, l.key);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 7) << e->reason;
  EXPECT_EQ(e->signal, 0);
  EXPECT_THAT(Read(l.log_path), HasSubstr("got-term"));
}

// A volume at a path the host lacks, below a host symlink (/var/run → /run): the sandbox's root
// is then a tmpfs of the host's entries, and the symlink must resolve inside it (read-only), never
// onto the host's own /run, where a root set-up would make the directory for real.
TEST_P(SandboxTest, AVolumeBelowAHostSymlinkIsNeverMadeOnTheHost) {
  std::error_code ec;
  if (!std::filesystem::is_symlink("/var/run", ec) || std::filesystem::read_symlink("/var/run", ec) != "/run")
    GTEST_SKIP() << "NOT RUN: this host's /var/run is not a link to /run";
  const std::string name = "allot-probe-" + std::to_string(::getpid());
  const std::string volume = root() + "/volume";
  std::filesystem::create_directories(volume);
  TaskLaunch l = Sh(Launch("below-link", {}), "true");
  l.writable_binds = {{volume, "/var/run/" + name}};
  auto pid = runner_->Start(l);
  if (pid) {
    auto e = WaitFor(*runner_, l.key);
    ASSERT_TRUE(e);
    EXPECT_NE(e->exit_code, 0) << "the host's /run is read-only inside, so the volume cannot be placed";
  }
  EXPECT_FALSE(std::filesystem::exists("/run/" + name));
  std::filesystem::remove_all("/run/" + name, ec);
}

INSTANTIATE_TEST_SUITE_P(Modes, SandboxTest, ::testing::Values(SandboxMode::kBwrap, SandboxMode::kNative),
                         testing::ModeName);

}  // namespace
}  // namespace allot
