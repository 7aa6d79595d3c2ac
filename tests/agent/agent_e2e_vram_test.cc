// End to end, a time-slice task's stated VRAM (docs/arrays.md): a real allotd and agent on the
// fake NVML, whose live file gives each task's processes (found by a marker in their command
// line) their GPU memory. A task over its `vram:` is stopped by its agent and its job fails with
// the reason; a task within its vram on the same GPU runs on.
#include <fstream>

#include "agent/agent_e2e_fixture.h"

namespace allot {
namespace {

using testing::AgentE2eTest;

class VramE2eTest : public AgentE2eTest {};

TEST_F(VramE2eTest, ATimeSliceTaskOverItsVramIsStoppedWithTheReasonAndOneWithinRunsOn) {
  nvml_gpus_ = "driver version=550.54.15\ngpus count=1 name=\"NVIDIA H100 80GB HBM3\"\n";
  StartAllotd("tenants:\n  - {path: vfx}\n");
  StartAgent("gpu-t", "", {"--pool", "timeslice"});
  WaitReady("gpu-t");
  {
    std::ofstream live(dir_ / "gpu-t" / "nvml.conf.live.tmp");
    live << "proc_mem gpu=0 match=vram-e2e-hog used_mib=2253\n"     // 2.2 GiB
         << "proc_mem gpu=0 match=vram-e2e-small used_mib=512\n";
  }
  std::filesystem::rename(dir_ / "gpu-t" / "nvml.conf.live.tmp", dir_ / "gpu-t" / "nvml.conf.live");
  Submit("small", "vfx", "while :; do sleep 1; done # vram-e2e-small", R"({"timeslice": true})", R"("vram": "1Gi")");
  Submit("hog", "vfx", "while :; do sleep 1; done # vram-e2e-hog", R"({"timeslice": true})", R"("vram": "2GiB")");
  WaitState("small", "running");
  WaitState("hog", "failed", 30);
  Json hog = Job("hog");
  EXPECT_NE(hog.value("reason", "").find("used 2.2 GiB of VRAM over its vram: 2GiB"), std::string::npos) << hog.dump();
  EXPECT_EQ(hog["vram"], "2Gi");
  EXPECT_EQ(State("small"), "running") << "512 MiB within its 1Gi: left alone";
}

}  // namespace
}  // namespace allot
