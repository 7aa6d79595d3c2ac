// A task's device nodes and driver proc files, found in a fake node made by
// scripts/fake-gpu-node (mknod'd nodes when root, /dev/null links otherwise).
#include "agent/run/gpu_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

class GpuDevicesTest : public ::testing::Test {
 protected:
  void Make(bool mig) {
    std::string cmd = std::string(ALLOT_SOURCE_DIR) + "/scripts/fake-gpu-node " + dir_.path().string() + " --gpus 4" +
                      (mig ? " --mig" : "") + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    roots_.dev = (dir_ / "dev").string();
    roots_.proc_driver = (dir_ / "proc").string();
  }
  std::vector<std::string> Inside(const std::vector<DeviceNode>& nodes) {
    std::vector<std::string> out;
    for (const DeviceNode& n : nodes) out.push_back(n.sandbox_path);
    return out;
  }
  testing::ScratchDir dir_{"gpu-devices"};
  DriverRoots roots_;
};

TEST_F(GpuDevicesTest, ATwoGpuTaskGetsTheControlNodesAndItsTwoGpusByMinorNumber) {
  Make(false);
  // Minor numbers, not indices: this task's GPUs are /dev/nvidia3 and /dev/nvidia1.
  auto nodes = TaskDeviceNodes(roots_, {{3, "00000000:5D:00.0", {}}, {1, "00000000:2A:00.0", {}}});
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  EXPECT_THAT(Inside(*nodes), ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia3",
                                          "/dev/nvidia1"));
  EXPECT_EQ((*nodes)[3].host_path, roots_.dev + "/nvidia3");
  if (::geteuid() == 0) {  // real nodes: the numbers the cgroup rule will name
    EXPECT_EQ((*nodes)[0].major, 195u);
    EXPECT_EQ((*nodes)[0].minor, 255u);
    EXPECT_EQ((*nodes)[1].major, 235u);  // nvidia-uvm's dynamic major, read from the node
    EXPECT_EQ((*nodes)[3].minor, 3u);
    auto rules = TaskDeviceRules(*nodes);
    EXPECT_EQ(DeviceRuleText(rules.back()), "c 195:1 rw");
  }
  auto none = TaskDeviceNodes(roots_, {});
  ASSERT_TRUE(none);
  EXPECT_THAT(*none, IsEmpty());  // a CPU task: not even nvidiactl
}

TEST_F(GpuDevicesTest, AMigSliceGetsItsParentGpuAndTheCapsOfItsOwnGpuAndComputeInstance) {
  Make(true);
  auto nodes = TaskDeviceNodes(roots_, {{2, "00000000:3A:00.0", MigSlice{5, 0}}});
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  // 3 + 2*135 + 5*9 = 318 for GI 5 of GPU 2, and 319 for its CI 0.
  EXPECT_THAT(Inside(*nodes), ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia2",
                                          "/dev/nvidia-caps/nvidia-cap318", "/dev/nvidia-caps/nvidia-cap319"));
  auto binds = ProcDriverBinds(roots_, {{2, "00000000:3A:00.0", MigSlice{5, 0}}}, "/work/driver/params");
  EXPECT_THAT(binds, ElementsAre(Pair(roots_.proc_driver + "/version", "/proc/driver/nvidia/version"),
                                 Pair("/work/driver/params", "/proc/driver/nvidia/params"),
                                 Pair(roots_.proc_driver + "/gpus/0000:3a:00.0", "/proc/driver/nvidia/gpus/0000:3a:00.0"),
                                 Pair(roots_.proc_driver + "/capabilities/gpu2/mig/gi5/access",
                                      "/proc/driver/nvidia/capabilities/gpu2/mig/gi5/access"),
                                 Pair(roots_.proc_driver + "/capabilities/gpu2/mig/gi5/ci0/access",
                                      "/proc/driver/nvidia/capabilities/gpu2/mig/gi5/ci0/access")));
}

TEST_F(GpuDevicesTest, AMissingNodeOrCapsFileIsNamed) {
  Make(false);
  auto no_caps = TaskDeviceNodes(roots_, {{0, "00000000:18:00.0", MigSlice{1, 0}}});
  ASSERT_FALSE(no_caps);
  EXPECT_THAT(no_caps.error().message(), HasSubstr("capabilities/gpu0/mig/gi1/access"));
  std::filesystem::remove(dir_ / "dev" / "nvidiactl");
  auto no_ctl = TaskDeviceNodes(roots_, {{0, "00000000:18:00.0", {}}});
  ASSERT_FALSE(no_ctl);
  EXPECT_THAT(no_ctl.error().message(), HasSubstr(roots_.dev + "/nvidiactl"));
  auto unknown = TaskDeviceNodes(roots_, {{-1, "00000000:18:00.0", {}}});
  ASSERT_FALSE(unknown);
}

TEST(GpuDevicesPureTest, ParamsTellTheDriverNotToMakeNodesAndBusIdsAreTheProcForm) {
  EXPECT_EQ(ParamsWithoutDeviceFileChanges("ResmanDebugLevel: 1\nModifyDeviceFiles: 1\nDeviceFileMode: 438\n"),
            "ResmanDebugLevel: 1\nModifyDeviceFiles: 0\nDeviceFileMode: 438\n");
  EXPECT_EQ(ProcBusId("00000000:AB:00.0"), "0000:ab:00.0");
}

}  // namespace
}  // namespace allot
