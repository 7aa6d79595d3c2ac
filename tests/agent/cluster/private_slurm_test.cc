// A real private Slurm on loopback (RECIPES.md, "Slurm"): munged, slurmctld and two slurmds with
// two fake GPUs each (mknod'd like /dev/null), started, used by the tenant's uid through srun
// and sbatch, and stopped with nothing of it left. Needs root and the packages slurm-wlm and
// munge (scripts/install-deps); without them these tests fail, never skip: CI has both.
#include "agent/cluster/private_slurm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agent/run/command.h"
#include "agent/run/proc_tree.h"
#include "agent/run/sys_files.h"
#include "testing/free_port.h"

namespace allot {
namespace {

using ::testing::HasSubstr;

// A short directory of the test's own (ScratchDir's names the test, and the cluster's Unix
// sockets must fit 107 bytes), which the tenant's uid may enter.
class ShortDir {
 public:
  ShortDir() {
    std::string pattern = ::testing::TempDir() + "slurm-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr && ::chmod(pattern.c_str(), 0755) == 0) path_ = pattern;
  }
  ~ShortDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

class PrivateSlurmTest : public ::testing::Test {
 protected:

  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "a private Slurm's slurmd runs as root: run this test as root (CI does)";
    ASSERT_FALSE(scratch_.path().empty()) << "mkdtemp under " << ::testing::TempDir() << ": " << ErrnoText(errno);
    // The tenant: an unprivileged user with a passwd entry, as Slurm wants its SlurmUser.
    const passwd* pw = ::getpwnam("nobody");
    ASSERT_NE(pw, nullptr) << "no passwd entry for 'nobody' to play the tenant";
    spec_.cluster = "tenant-a";
    spec_.dir = (scratch_ / "cluster").string();
    spec_.uid = pw->pw_uid;
    spec_.gid = pw->pw_gid;
    spec_.user = "nobody";
    spec_.controller_port = testing::FreeListenPort();
    std::filesystem::create_directories(scratch_ / "dev");
    for (int node = 1, gpu = 0; node <= 2; ++node) {
      PrivateSlurmNode n{.name = "n" + std::to_string(node), .gpus = 2, .cpus = 4, .memory_mib = 4096,
                         .port = testing::FreeListenPort()};
      for (int k = 0; k < 2; ++k, ++gpu) {
        // A GPU's device node as Slurm's gres sees it: a character device (this one is /dev/null's).
        const std::string file = (scratch_ / "dev" / ("gpu" + std::to_string(gpu))).string();
        ASSERT_EQ(::mknod(file.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << file << ": " << ErrnoText(errno);
        n.gpu_files.push_back(file);
      }
      spec_.nodes.push_back(n);
    }
  }

  // A Slurm client command as the tenant, the way it would run it after reading LoginDetails.
  CommandResult AsTenant(const std::vector<std::string>& command, int64_t timeout_ms = 60000) {
    CommandSpec c;
    c.argv = {"setpriv", "--reuid=" + std::to_string(spec_.uid), "--regid=" + std::to_string(spec_.gid),
              "--clear-groups"};
    c.argv.insert(c.argv.end(), command.begin(), command.end());
    c.env = {{"SLURM_CONF", spec_.dir + "/etc/slurm.conf"}};
    c.timeout_ms = timeout_ms;
    auto r = RunCommand(c);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : CommandResult{};
  }

  ShortDir scratch_;
  PrivateSlurmSpec spec_;
};

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t at; (at = text.find('\n', start)) != std::string::npos; start = at + 1)
    lines.push_back(text.substr(start, at - start));
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_F(PrivateSlurmTest, StartsTwoGpuNodesThatRunTheTenantsJobsAndStopsLeavingNothing) {
  PrivateSlurm slurm(spec_);
  Status started = slurm.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  Status ready = slurm.WaitReady(30000);
  ASSERT_TRUE(ready.ok()) << ready.message();
  const std::vector<pid_t> daemons = slurm.DaemonPids();
  ASSERT_EQ(daemons.size(), 4u);  // munged, slurmctld, two slurmds
  struct stat key{}, sockets{};
  ASSERT_EQ(::stat((spec_.dir + "/munge/munge.key").c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 07777, 0400u);
  EXPECT_EQ(key.st_uid, spec_.uid);
  EXPECT_EQ(key.st_size, 1024);
  ASSERT_EQ(::stat((spec_.dir + "/munge-socket").c_str(), &sockets), 0);
  EXPECT_EQ(sockets.st_mode & 07777, 0755u);

  auto sinfo = AsTenant({"sinfo", "--noheader", "--Node", "--format=%N %t %G"});
  EXPECT_EQ(sinfo.output_tail, "n1 idle gpu:2\nn2 idle gpu:2\n");

  // One step on each node with both its GPUs, as the tenant's uid.
  auto srun = AsTenant({"srun", "-N2", "--gres=gpu:2", "--label", "sh", "-c",
                        "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $(id -u)"});
  EXPECT_EQ(srun.exit_code, 0) << srun.output_tail;
  const std::string uid = std::to_string(spec_.uid);
  EXPECT_EQ(SortedLines(srun.output_tail), (std::vector<std::string>{"0: n1 0,1 " + uid, "1: n2 0,1 " + uid}));

  // A job still running when the window ends: Stop cancels it.
  auto sbatch = AsTenant({"sbatch", "-N1", "--gres=gpu:1", "--parsable", "--output=/dev/null", "--wrap", "exec sleep 300"});
  ASSERT_EQ(sbatch.exit_code, 0) << sbatch.output_tail;
  const std::string job = sbatch.output_tail.substr(0, sbatch.output_tail.find_first_of(";\n"));
  std::string state;
  for (const int64_t until = WallMillis() + 30000; state != "RUNNING\n" && WallMillis() < until; SleepMillis(100))
    state = AsTenant({"squeue", "--noheader", "--job=" + job, "--format=%T"}).output_tail;
  ASSERT_EQ(state, "RUNNING\n");

  EXPECT_THAT(slurm.LoginDetails(), HasSubstr("export SLURM_CONF=" + spec_.dir + "/etc/slurm.conf\n"));
  EXPECT_THAT(slurm.LoginDetails(), HasSubstr("controller 127.0.0.1:" + std::to_string(spec_.controller_port)));

  const std::string conf_env = "SLURM_CONF=" + slurm.ConfPath();
  EXPECT_FALSE(ProcessesWithEnv(conf_env).empty());
  Status stopped = slurm.Stop(5000);
  EXPECT_TRUE(stopped.ok()) << stopped.message();
  EXPECT_TRUE(slurm.DaemonPids().empty());
  for (pid_t p : daemons) EXPECT_NE(::kill(p, 0), 0) << "daemon " << p << " still runs";
  // No slurmstepd, no job step, no daemon with this cluster's configuration.
  EXPECT_EQ(ProcessesWithEnv(conf_env), std::vector<pid_t>{});
  EXPECT_FALSE(std::filesystem::exists(spec_.dir));
  EXPECT_TRUE(slurm.Stop(5000).ok()) << "a second Stop";
}

TEST_F(PrivateSlurmTest, WaitReadyNamesTheNodeThatDidNotComeUpWithTheEndOfItsLog) {
  spec_.nodes[1].gpu_files[1] = (scratch_ / "dev" / "missing-gpu").string();
  PrivateSlurm slurm(spec_);
  Status started = slurm.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  Status ready = slurm.WaitReady(4000);
  ASSERT_FALSE(ready.ok());
  EXPECT_EQ(ready.code(), Code::kUnavailable);
  EXPECT_THAT(ready.message(), HasSubstr("slurmd-n2"));
  EXPECT_THAT(ready.message(), HasSubstr("missing-gpu")) << "the slurmd's log names the device file it lacks";
  const std::string conf_env = "SLURM_CONF=" + slurm.ConfPath();
  EXPECT_TRUE(slurm.Stop(1000).ok());
  EXPECT_EQ(ProcessesWithEnv(conf_env), std::vector<pid_t>{});
  EXPECT_FALSE(std::filesystem::exists(spec_.dir));
}

TEST_F(PrivateSlurmTest, AFailedStartLeavesNothingAndStopIsSafeBeforeAndAfterIt) {
  PrivateSlurm never(spec_);
  EXPECT_TRUE(never.Stop(0).ok()) << "Stop before Start";

  PrivateSlurmOptions nowhere;
  nowhere.path = (scratch_ / "dev").string();  // no Slurm there
  PrivateSlurm without(spec_, nowhere);
  Status no_binaries = without.Start();
  EXPECT_EQ(no_binaries.code(), Code::kNotFound);
  EXPECT_THAT(no_binaries.message(), HasSubstr("munged, slurmctld, slurmd, sinfo, squeue, scancel not found in PATH="));
  EXPECT_THAT(no_binaries.message(), HasSubstr("expected the Debian packages slurm-wlm and munge"));
  EXPECT_FALSE(std::filesystem::exists(spec_.dir));

  spec_.uid += 1;  // not nobody's uid
  PrivateSlurm slurm(spec_);
  Status started = slurm.Start();
  EXPECT_EQ(started.code(), Code::kFailedPrecondition);
  EXPECT_THAT(started.message(), HasSubstr("user: 'nobody' is uid"));
  EXPECT_FALSE(std::filesystem::exists(spec_.dir));
  EXPECT_TRUE(slurm.Stop(0).ok());
  EXPECT_TRUE(slurm.Stop(0).ok());

  // A directory already in use is not the cluster's: refused, and left as it was.
  spec_.uid -= 1;
  std::filesystem::create_directories(spec_.dir);
  ASSERT_TRUE(ReplaceFile(spec_.dir + "/someone-elses", "", 0644).ok());
  PrivateSlurm busy(spec_);
  EXPECT_THAT(busy.Start().message(), HasSubstr("exists and is not empty"));
  EXPECT_TRUE(busy.Stop(0).ok());
  EXPECT_TRUE(Exists(spec_.dir + "/someone-elses"));
}

}  // namespace
}  // namespace allot
