// Tests of the NVML backend run against the fake libnvidia-ml.so (tests/fakes/fake_nvml.cc): each
// test writes a config into a scratch directory and points FAKE_NVML_CONFIG at it; the fake keeps
// its MIG state in "<config>.state" and logs every mutating call to "<config>.log".
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include "agent/nvml.h"
#include "testing/scratch_dir.h"

namespace allot::testing {

// 8 × H100-80GB on four NVSwitches (an HGX board). GPU 2 is in MIG mode with a 3g.40gb (GI 1,
// running pid 5151) and a 2g.20gb (GI 2); GPU 3 is in MIG mode and empty; GPU 5 has ECC errors
// and an Xid 79 queued.
inline constexpr const char* kHgxConfig = R"(
driver version=550.54.15
gpus count=8 name="NVIDIA H100 80GB HBM3"
nvswitch count=4
gpu index=0 util=57 mem_util=12 power_mw=312000 temp_c=41
process gpu=0 pid=4242 used_mib=1024
gpu index=2 mig=on
gi gpu=2 profile=9 start=0     # 3g.40gb and its full compute instance
gi gpu=2 profile=14 start=4    # 2g.20gb
process gpu=2 pid=5151 used_mib=2048 gi=1 ci=0
gpu index=3 mig=on
gpu index=5 ecc_corrected=3 ecc_uncorrected=1
xid gpu=5 xid=79
)";

class FakeNvmlTest : public ::testing::Test {
 protected:
  FakeNvmlTest() : dir_("fake-nvml") {}

  // Writes the config and points the fake at it.
  void Configure(const std::string& text) {
    config_ = (dir_ / "nvml.conf").string();
    std::ofstream(config_) << text;
    ::setenv("FAKE_NVML_CONFIG", config_.c_str(), 1);
  }

  std::unique_ptr<GpuBackend> Open() {
    NvmlOptions options;
    options.library = FAKE_NVML_PATH;
    options.sysfs_root = (dir_ / "sys").string();
    auto backend = OpenNvml(options);
    EXPECT_TRUE(backend.has_value()) << (backend ? "" : backend.error().ToString());
    return backend ? std::move(*backend) : nullptr;
  }

  // What the fake was told, one call a line.
  std::string Log() const {
    std::ifstream in(config_ + ".log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  void WriteNumaNode(const std::string& sysfs_bus_id, int node) {
    auto dir = dir_ / "sys" / "bus" / "pci" / "devices" / sysfs_bus_id;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "numa_node") << node << "\n";
  }

  ScratchDir dir_;
  std::string config_;
};

}  // namespace allot::testing
