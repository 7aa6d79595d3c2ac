// End to end, node isolation: a GPU task sees exactly its own device nodes and driver files in
// its sandbox, and its device cgroup refuses every other GPU's node even where a task can name
// it (no sandbox). Real allotd and agents on the fake NVML, with the fake device nodes and
// driver proc tree of scripts/fake-gpu-node (real mknod'd nodes when root).
#include <unistd.h>

#include <regex>
#include <set>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n";

// The lines of `log` that match `re`, as a sorted set.
std::set<std::string> Lines(const std::string& log, const std::string& re) {
  std::set<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, std::regex(re))) out.insert(line);
  return out;
}

TEST_F(AgentE2eTest, ATwoGpuTaskSeesExactlyItsTwoGpuNodesThePlatformNodesAndItsGpusDriverFiles) {
  StartAllotd(kTenants);
  StartAgent("gpu-i");
  WaitReady("gpu-i");
  Submit("two", "research",
         "ls /dev | sed 's/^/dev:/'; ls /proc/driver/nvidia/gpus | sed 's/^/bus:/'; "
         "grep -h Minor /proc/driver/nvidia/gpus/*/information | tr -d ' \\t' | sed 's/^/info:/'; "
         "grep ModifyDeviceFiles /proc/driver/nvidia/params; echo CUDA=$CUDA_VISIBLE_DEVICES",
         R"({"gpus": 2})");
  WaitState("two", "finished");
  std::string log = WaitLog("two", "CUDA=");
  std::set<std::string> nvidia = Lines(log, "dev:nvidia.*");
  std::set<std::string> gpus = Lines(log, "dev:nvidia[0-9]+");
  ASSERT_EQ(gpus.size(), 2u) << log;
  std::set<std::string> expected = {"dev:nvidiactl", "dev:nvidia-uvm", "dev:nvidia-uvm-tools"};
  expected.insert(gpus.begin(), gpus.end());
  EXPECT_EQ(nvidia, expected) << "no nvidia-modeset, no nvidia-caps, no other GPU:\n" << log;
  // The driver's proc tree shows the same two GPUs (their minors), and tells the driver not to
  // make device nodes inside.
  std::set<std::string> info;
  for (const std::string& g : gpus) info.insert("info:DeviceMinor:" + g.substr(std::string("dev:nvidia").size()));
  EXPECT_EQ(Lines(log, "info:.*"), info) << log;
  EXPECT_EQ(Lines(log, "bus:.*").size(), 2u) << log;
  EXPECT_NE(log.find("ModifyDeviceFiles: 0"), std::string::npos) << log;
  // The platform's usual nodes are there.
  EXPECT_NE(log.find("dev:null"), std::string::npos) << log;
}

TEST_F(AgentE2eTest, TheDeviceCgroupRefusesEveryOtherGpusNodeEvenToATaskThatCanNameIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: needs root (mknod'd nodes the cgroup can tell apart)";
  StartAllotd(kTenants);
  // No sandbox: the task sees the host's files, so only the device cgroup stands in its way.
  StartAgent("gpu-c", "", {"--sandbox", "none"});
  WaitReady("gpu-c");
  const std::string dev = (dir_ / "gpu-c" / "gpu" / "dev").string();
  Submit("probe", "research",
         "for k in 0 1 2 3 4 5 6 7; do python3 -c 'import os,sys,errno\ntry:\n os.open(sys.argv[1], os.O_RDWR)\n "
         "print(sys.argv[2], \"opened\")\nexcept OSError as e:\n print(sys.argv[2], errno.errorcode[e.errno])' " +
             dev + "/nvidia$k $k; done; echo CUDA=$CUDA_VISIBLE_DEVICES",
         R"({"gpus": 1})");
  WaitState("probe", "finished");
  std::string log = WaitLog("probe", "CUDA=");
  auto env = EnvLines(log);
  // The fake's GPU i has UUID GPU-5eed000i-… and minor number i.
  ASSERT_EQ(env["CUDA"].rfind("GPU-5eed000", 0), 0u) << log;
  const std::string mine = env["CUDA"].substr(11, 1);
  for (int k = 0; k < 8; ++k) {
    const std::string want = std::to_string(k) == mine ? " ENXIO" : " EPERM";  // allowed: no driver; denied
    EXPECT_NE(log.find(std::to_string(k) + want), std::string::npos) << "GPU " << k << ":\n" << log;
  }
}

TEST_F(AgentE2eTest, AMigTaskSeesItsOwnCapsNodesAndAccessFilesAndNoOther) {
  StartAllotd(kTenants);
  std::string mig_on;
  for (int g = 0; g < 8; ++g) mig_on += "gpu index=" + std::to_string(g) + " mig=on\n";
  StartAgent("gpu-m", mig_on, {"--pool", "mig", "--mig-layout", "3g.40gb,3g.40gb"});
  WaitReady("gpu-m");
  Submit("slice", "research",
         "ls /dev/nvidia-caps | sed 's/^/cap:/'; ls /dev | grep -c '^nvidia[0-9]' | sed 's/^/gpus:/'; "
         "find /proc/driver/nvidia/capabilities -name access | sort | while read f; do "
         "echo \"file:$(grep DeviceFileMinor $f | tr -dc 0-9)\"; done; echo done",
         R"({"mig": "3g.40gb"})");
  WaitState("slice", "finished");
  std::string log = WaitLog("slice", "done");
  std::set<std::string> caps = Lines(log, "cap:nvidia-cap[0-9]+");
  ASSERT_EQ(caps.size(), 2u) << "its GPU instance's and compute instance's caps only:\n" << log;
  EXPECT_NE(log.find("gpus:1"), std::string::npos) << "its parent GPU only:\n" << log;
  // The access files it can read name exactly the caps nodes it has.
  std::set<std::string> files;
  for (const std::string& c : caps) files.insert("file:" + c.substr(std::string("cap:nvidia-cap").size()));
  EXPECT_EQ(Lines(log, "file:.*"), files) << log;
}

}  // namespace
}  // namespace allot
