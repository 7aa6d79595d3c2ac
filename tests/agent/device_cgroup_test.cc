// The device cgroup: the generated BPF program's meaning (run by a small interpreter here, for
// every rule shape), then both kernel interfaces for real on this host: a v1 devices cgroup and
// a v2 cgroup with the program attached, each refusing a denied GPU node with EPERM where an
// allowed one gets past the cgroup and fails only for want of a driver (ENXIO). The kernel tests
// need root (mknod, cgroup writes, bpf) and the hierarchy; where either is missing they skip
// and say so.
#include "agent/run/device_cgroup.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "agent/run/cgroup_layout.h"
#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::HasSubstr;

// Runs a cgroup-device program over one access: the subset of eBPF DeviceProgram emits.
int RunProgram(const std::vector<bpf_insn>& p, uint32_t type, uint32_t access, uint32_t major, uint32_t minor) {
  const uint32_t ctx[3] = {access << 16 | type, major, minor};
  uint64_t r[11] = {};
  for (size_t pc = 0; pc < p.size(); ++pc) {
    const bpf_insn& i = p[pc];
    switch (i.code) {
      case BPF_LDX | BPF_MEM | BPF_W: r[i.dst_reg] = ctx[i.off / 4]; break;
      case BPF_ALU | BPF_MOV | BPF_X: r[i.dst_reg] = static_cast<uint32_t>(r[i.src_reg]); break;
      case BPF_ALU64 | BPF_MOV | BPF_K: r[i.dst_reg] = static_cast<uint64_t>(static_cast<int64_t>(i.imm)); break;
      case BPF_ALU | BPF_AND | BPF_K: r[i.dst_reg] = static_cast<uint32_t>(r[i.dst_reg]) & static_cast<uint32_t>(i.imm); break;
      case BPF_ALU | BPF_RSH | BPF_K: r[i.dst_reg] = static_cast<uint32_t>(r[i.dst_reg]) >> i.imm; break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (r[i.dst_reg] != static_cast<uint64_t>(static_cast<int64_t>(i.imm))) pc += i.off;
        break;
      case BPF_JMP | BPF_EXIT: return static_cast<int>(r[0]);
      default: ADD_FAILURE() << "unexpected instruction code " << int(i.code) << " at " << pc; return -1;
    }
  }
  ADD_FAILURE() << "the program ran off its end";
  return -1;
}

constexpr uint32_t kChar = BPF_DEVCG_DEV_CHAR, kBlock = BPF_DEVCG_DEV_BLOCK;
constexpr uint32_t kRead = BPF_DEVCG_ACC_READ, kWrite = BPF_DEVCG_ACC_WRITE, kMknod = BPF_DEVCG_ACC_MKNOD;

TEST(DeviceProgramTest, AllowsExactlyTheRulesDevicesAndAccessesAndRefusesEverythingElse) {
  std::vector<DeviceRule> rules = DefaultDeviceRules();
  rules.push_back({'c', 195, 255, "rw"});  // nvidiactl
  rules.push_back({'c', 195, 3, "rw"});    // the task's GPU
  const auto p = DeviceProgram(rules);
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 195, 3), 1);
  EXPECT_EQ(RunProgram(p, kChar, kRead, 195, 255), 1);
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 195, 2), 0);       // another GPU
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 195, 254), 0);     // nvidia-modeset
  EXPECT_EQ(RunProgram(p, kChar, kMknod, 195, 3), 0);               // rw does not include mknod
  EXPECT_EQ(RunProgram(p, kBlock, kRead, 195, 3), 0);               // a block device of the same numbers
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 1, 3), 1);         // /dev/null
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 136, 17), 1);      // /dev/pts/17: any minor
  EXPECT_EQ(RunProgram(p, kChar, kRead | kWrite, 137, 17), 0);
  EXPECT_EQ(RunProgram(p, kBlock, kRead, 8, 0), 0);                 // a disk
  EXPECT_EQ(RunProgram(DeviceProgram({}), kChar, kRead, 1, 3), 0);  // no rules: nothing
  EXPECT_EQ(RunProgram(DeviceProgram({{'b', -1, -1, "rwm"}}), kBlock, kRead | kWrite | kMknod, 8, 1), 1);
}

TEST(DeviceProgramTest, RulesReadAsTheV1DevicesAllowLines) {
  EXPECT_EQ(DeviceRuleText({'c', 195, 0, "rw"}), "c 195:0 rw");
  EXPECT_EQ(DeviceRuleText({'c', 136, -1, "rw"}), "c 136:* rw");
  EXPECT_EQ(DeviceRuleText({'b', -1, -1, "m"}), "b *:* m");
}

// What open() of a node gives a child process placed in `procs` (one or more cgroup.procs files):
// 0 when it opened, else the errno.
int OpenErrnoIn(const std::vector<std::string>& procs, const std::string& node) {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const std::string& p : procs)
      if (!WriteText(p, "0", IfMissing::kFail).ok()) _exit(200);
    int fd = ::open(node.c_str(), O_RDWR);
    _exit(fd >= 0 ? 0 : errno);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class DeviceCgroupKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: needs root (mknod, cgroup writes, bpf)";
    std::filesystem::create_directories(dir_.path());
    for (auto [name, minor] : {std::pair{"nvidia0", 0}, {"nvidia1", 1}}) {
      const std::string path = (dir_ / name).string();
      ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, makedev(195, minor)), 0) << path << ": " << ErrnoText(errno);
    }
    rules_ = DefaultDeviceRules();
    rules_.push_back({'c', 195, 0, "rw"});
    layout_ = DetectCgroups();
    name_ = "allot-devtest-" + std::to_string(::getpid());
  }
  void TearDown() override {
    for (const std::string& d : made_) ::rmdir(d.c_str());
  }
  std::string MakeCgroup(const std::string& root) {
    std::string d = root + "/" + name_;
    EXPECT_EQ(::mkdir(d.c_str(), 0755), 0) << d << ": " << ErrnoText(errno);
    made_.push_back(d);
    return d;
  }

  testing::ScratchDir dir_{"devcg"};
  std::vector<DeviceRule> rules_;
  CgroupLayout layout_;
  std::string name_;
  std::vector<std::string> made_;
};

TEST_F(DeviceCgroupKernelTest, AV1DevicesCgroupRefusesAnUnassignedGpuWithEpermAndLetsTheAssignedOneReachTheDriver) {
  if (layout_.devices.empty()) GTEST_SKIP() << "SKIPPED LOUDLY: no v1 devices controller here (" << layout_.Describe() << ")";
  const std::string cg = MakeCgroup(layout_.devices);
  ASSERT_TRUE(ApplyV1DeviceRules(cg, rules_).ok());
  EXPECT_THAT(*ReadText(cg + "/devices.list"), HasSubstr("c 195:0 rw"));
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, (dir_ / "nvidia0").string()), ENXIO);  // allowed; no driver
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, (dir_ / "nvidia1").string()), EPERM);  // denied
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, "/dev/null"), 0);
}

TEST_F(DeviceCgroupKernelTest, AV2CgroupWithTheProgramAttachedRefusesAnUnassignedGpuWithEperm) {
  if (layout_.v2.empty()) GTEST_SKIP() << "SKIPPED LOUDLY: no cgroup v2 tree here (" << layout_.Describe() << ")";
  // Outside the v1 devices controller's reach (the test process sits at its root), so only the
  // program decides.
  const std::string cg = MakeCgroup(layout_.v2);
  Status s = AttachV2DeviceProgram(cg, rules_);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, (dir_ / "nvidia0").string()), ENXIO);
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, (dir_ / "nvidia1").string()), EPERM);
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, "/dev/null"), 0);
  EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, "/dev/kmsg"), EPERM);  // c 1:11, not in the defaults
}

TEST_F(DeviceCgroupKernelTest, TheSameRulesShareOneLoadedProgramAndOtherRulesGetTheirOwnEachStillConfined) {
  if (layout_.v2.empty()) GTEST_SKIP() << "SKIPPED LOUDLY: no cgroup v2 tree here (" << layout_.Describe() << ")";
  std::vector<DeviceRule> gpu1 = DefaultDeviceRules();
  gpu1.push_back({'c', 195, 1, "rw"});
  const std::string a = MakeCgroup(layout_.v2), b = a + "-b", c = a + "-c";
  for (const std::string& d : {b, c}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d << ": " << ErrnoText(errno);
    made_.push_back(d);
  }
  DeviceProgramCache programs;
  for (const auto& [cg, rules] : {std::pair{a, rules_}, {b, rules_}, {c, gpu1}}) {
    Status s = AttachV2DeviceProgram(cg, rules, &programs);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The verifier ran once per distinct rule set: GPU 0's program twice attached, GPU 1's once.
  EXPECT_EQ(programs.loads(), 2);
  EXPECT_EQ(programs.size(), 2u);
  auto ids = [](const std::string& cg) {
    auto r = AttachedDeviceProgramIds(cg);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : std::vector<uint32_t>{};
  };
  const std::vector<uint32_t> ida = ids(a), idb = ids(b), idc = ids(c);
  ASSERT_EQ(ida.size(), 1u);
  EXPECT_EQ(idb, ida) << "the same GPU set shares one program";
  ASSERT_EQ(idc.size(), 1u);
  EXPECT_NE(idc, ida) << "another GPU set gets its own";
  auto cached = programs.Program(rules_);
  ASSERT_TRUE(cached);
  EXPECT_EQ(DeviceProgramId(*cached).value_or(0), ida[0]);
  EXPECT_EQ(programs.loads(), 2);
  // Sharing widened nothing: each cgroup opens its own GPU (ENXIO: allowed, no driver) and is
  // refused the other's.
  const std::string n0 = (dir_ / "nvidia0").string(), n1 = (dir_ / "nvidia1").string();
  for (const std::string& cg : {a, b}) {
    EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, n0), ENXIO) << cg;
    EXPECT_EQ(OpenErrnoIn({cg + "/cgroup.procs"}, n1), EPERM) << cg;
  }
  EXPECT_EQ(OpenErrnoIn({c + "/cgroup.procs"}, n0), EPERM);
  EXPECT_EQ(OpenErrnoIn({c + "/cgroup.procs"}, n1), ENXIO);
}

TEST_F(DeviceCgroupKernelTest, ACacheAtCapacityClosesItsLeastRecentlyUsedProgramAndTheCgroupsKeepTheirs) {
  if (layout_.v2.empty()) GTEST_SKIP() << "SKIPPED LOUDLY: no cgroup v2 tree here (" << layout_.Describe() << ")";
  std::vector<DeviceRule> gpu1 = DefaultDeviceRules();
  gpu1.push_back({'c', 195, 1, "rw"});
  const std::string a = MakeCgroup(layout_.v2);
  DeviceProgramCache programs(1);
  ASSERT_TRUE(AttachV2DeviceProgram(a, rules_, &programs).ok());
  ASSERT_TRUE(programs.Program(gpu1));  // evicts GPU 0's program from the cache
  EXPECT_EQ(programs.size(), 1u);
  EXPECT_EQ(programs.loads(), 2);
  // The cgroup's attachment holds the evicted program: still GPU 0 only.
  EXPECT_EQ(OpenErrnoIn({a + "/cgroup.procs"}, (dir_ / "nvidia0").string()), ENXIO);
  EXPECT_EQ(OpenErrnoIn({a + "/cgroup.procs"}, (dir_ / "nvidia1").string()), EPERM);
  ASSERT_TRUE(programs.Program(rules_));  // loaded again
  EXPECT_EQ(programs.loads(), 3);
}

TEST_F(DeviceCgroupKernelTest, AttachingTheSharedProgramToACgroupThatAlreadyHoldsItSucceedsOnce) {
  if (layout_.v2.empty()) GTEST_SKIP() << "SKIPPED LOUDLY: no cgroup v2 tree here (" << layout_.Describe() << ")";
  // A task's cgroup left from an earlier life of the same key, found again.
  const std::string a = MakeCgroup(layout_.v2);
  DeviceProgramCache programs;
  ASSERT_TRUE(AttachV2DeviceProgram(a, rules_, &programs).ok());
  Status again = AttachV2DeviceProgram(a, rules_, &programs);
  ASSERT_TRUE(again.ok()) << again.ToString();
  auto ids = AttachedDeviceProgramIds(a);
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->size(), 1u);
  EXPECT_EQ(OpenErrnoIn({a + "/cgroup.procs"}, (dir_ / "nvidia1").string()), EPERM);
}

TEST(DeviceCgroupTest, AttachingToSomethingThatIsNotACgroupFailsNamingIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: needs root (bpf)";
  testing::ScratchDir dir("devcg-not");
  Status s = AttachV2DeviceProgram(dir.path().string(), DefaultDeviceRules());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("attaching the device cgroup program to " + dir.path().string()));
}

}  // namespace
}  // namespace allot
