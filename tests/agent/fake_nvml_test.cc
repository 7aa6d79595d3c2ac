// The fake libnvidia-ml.so itself, called through its C ABI as the NVML backend would: its MIG
// rules (written from NVML-MIG.md §4) must agree with the catalog's (fleet/mig.h), and it must
// answer as NVML does: INVALID_ARGUMENT for a start the profile lacks, INSUFFICIENT_RESOURCES on
// overlap, IN_USE when a GPU instance still has compute instances.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/fake_nvml_fixture.h"
#include "agent/nvml_api.h"
#include "fleet/mig.h"

namespace allot {
namespace {

// The fake, dlopened directly; symbols looked up by name and signature.
class RawNvml {
 public:
  RawNvml() : lib_(dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL)) {}
  ~RawNvml() {
    if (lib_ != nullptr) dlclose(lib_);
  }
  template <class Fn>
  Fn Get(const char* name) {
    void* fn = dlsym(lib_, name);
    EXPECT_NE(fn, nullptr) << name;
    return reinterpret_cast<Fn>(fn);
  }

 private:
  void* lib_;
};

class FakeNvmlRulesTest : public testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    Configure("gpus count=2 name=\"NVIDIA H100 80GB HBM3\"\ngpu index=0 mig=on\ngpu index=1 name=\"NVIDIA A30\" mig=on\n");
    ASSERT_EQ(raw_.Get<nvml_api::InitFn>("nvmlInit_v2")(), NVML_SUCCESS);
    ASSERT_EQ(raw_.Get<nvml_api::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(0, &h100_), NVML_SUCCESS);
    ASSERT_EQ(raw_.Get<nvml_api::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(1, &a30_), NVML_SUCCESS);
  }
  void TearDown() override { raw_.Get<nvml_api::ShutdownFn>("nvmlShutdown")(); }

  nvmlReturn_t Create(nvmlDevice_t d, unsigned profile_id, unsigned start, unsigned size, nvmlGpuInstance_t* gi) {
    nvmlGpuInstancePlacement_t p{start, size};
    return raw_.Get<nvml_api::DeviceCreateGpuInstanceWithPlacementFn>("nvmlDeviceCreateGpuInstanceWithPlacement")(
        d, profile_id, &p, gi);
  }

  RawNvml raw_;
  nvmlDevice_t h100_ = nullptr;
  nvmlDevice_t a30_ = nullptr;
};

TEST_F(FakeNvmlRulesTest, PlacementsPerProfileMatchTheCatalog) {
  auto info = raw_.Get<nvml_api::DeviceGetGpuInstanceProfileInfoFn>("nvmlDeviceGetGpuInstanceProfileInfo");
  auto placements = raw_.Get<nvml_api::DeviceGetGpuInstancePossiblePlacementsFn>(
      "nvmlDeviceGetGpuInstancePossiblePlacements_v2");
  for (auto [device, model] : {std::pair{h100_, "H100-80GB"}, std::pair{a30_, "A30-24GB"}}) {
    const MigGeometry* g = FindMigGeometry(model);
    ASSERT_NE(g, nullptr);
    size_t matched = 0;
    for (unsigned index = 0;; ++index) {
      nvmlGpuInstanceProfileInfo_t p{};
      nvmlReturn_t r = info(device, index, &p);
      if (r == NVML_ERROR_INVALID_ARGUMENT) break;
      if (r == NVML_ERROR_NOT_SUPPORTED) continue;
      ASSERT_EQ(r, NVML_SUCCESS);
      unsigned n = 0;
      ASSERT_EQ(placements(device, p.id, nullptr, &n), NVML_SUCCESS);
      std::vector<nvmlGpuInstancePlacement_t> list(n);
      ASSERT_EQ(placements(device, p.id, list.data(), &n), NVML_SUCCESS);
      bool media = index == 0x7 || index == 0x8;
      for (const MigProfile& c : g->profiles) {
        if (c.compute_slices != static_cast<int>(p.sliceCount) || c.memory_slices != static_cast<int>(list[0].size) ||
            c.media_extensions != media) {
          continue;
        }
        ++matched;
        std::vector<int> starts;
        for (const auto& pl : list) starts.push_back(static_cast<int>(pl.start));
        EXPECT_EQ(starts, std::vector<int>(c.starts.begin(), c.starts.end())) << model << " " << c.name;
        EXPECT_EQ(static_cast<int>(p.instanceCount), c.max_count) << model << " " << c.name;
      }
    }
    // Every catalog profile has its NVML profile (A30's 2g+me has no catalog row).
    EXPECT_EQ(matched, g->profiles.size()) << model;
  }
}

TEST_F(FakeNvmlRulesTest, ProfileIdsAreReadNotAssumed) {
  auto info = raw_.Get<nvml_api::DeviceGetGpuInstanceProfileInfoFn>("nvmlDeviceGetGpuInstanceProfileInfo");
  nvmlGpuInstanceProfileInfo_t h{}, a{};
  ASSERT_EQ(info(h100_, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &h), NVML_SUCCESS);
  ASSERT_EQ(info(a30_, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &a), NVML_SUCCESS);
  EXPECT_EQ(h.id, 19u);
  EXPECT_EQ(a.id, 14u);  // the same kind, another ID (NVML-MIG.md §4)
  EXPECT_EQ(info(a30_, NVML_GPU_INSTANCE_PROFILE_3_SLICE, &a), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(info(h100_, NVML_GPU_INSTANCE_PROFILE_COUNT, &h), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlRulesTest, RefusesBadStartsOverlapsCountsAndMediaExtensions) {
  nvmlGpuInstance_t gi = nullptr;
  EXPECT_EQ(Create(h100_, 9, 2, 4, &gi), NVML_ERROR_INVALID_ARGUMENT);  // 3g starts at 0 or 4
  EXPECT_EQ(Create(h100_, 9, 4, 3, &gi), NVML_ERROR_INVALID_ARGUMENT);  // 3g takes 4 memory slices
  EXPECT_EQ(Create(h100_, 9, 4, 4, &gi), NVML_SUCCESS);
  EXPECT_EQ(Create(h100_, 19, 7, 1, &gi), NVML_ERROR_INVALID_ARGUMENT);  // 1g stops at 6
  EXPECT_EQ(Create(h100_, 19, 6, 1, &gi), NVML_ERROR_INSUFFICIENT_RESOURCES);  // overlaps 3g @4
  EXPECT_EQ(Create(h100_, 9, 0, 4, &gi), NVML_SUCCESS);
  // 3g + 3g: 6 compute slices on all 8 memory slices; nothing more fits.
  auto remaining = raw_.Get<nvml_api::DeviceGetGpuInstanceRemainingCapacityFn>("nvmlDeviceGetGpuInstanceRemainingCapacity");
  unsigned left = 9;
  ASSERT_EQ(remaining(h100_, 19, &left), NVML_SUCCESS);
  EXPECT_EQ(left, 0u);
  // A30: at most one +me instance.
  EXPECT_EQ(Create(a30_, 21, 0, 1, &gi), NVML_SUCCESS);
  EXPECT_EQ(Create(a30_, 21, 1, 1, &gi), NVML_ERROR_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(Create(a30_, 14, 1, 1, &gi), NVML_SUCCESS);
}

TEST_F(FakeNvmlRulesTest, GpuInstanceWithComputeInstancesIsInUse) {
  nvmlGpuInstance_t gi = nullptr;
  ASSERT_EQ(Create(h100_, 14, 2, 2, &gi), NVML_SUCCESS);  // 2g.20gb
  nvmlComputeInstance_t ci = nullptr;
  auto create_ci = raw_.Get<nvml_api::GpuInstanceCreateComputeInstanceFn>("nvmlGpuInstanceCreateComputeInstance");
  EXPECT_EQ(create_ci(gi, NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE, &ci), NVML_ERROR_INVALID_ARGUMENT);  // > 2 slices
  ASSERT_EQ(create_ci(gi, NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE, &ci), NVML_SUCCESS);
  auto destroy_gi = raw_.Get<nvml_api::GpuInstanceDestroyFn>("nvmlGpuInstanceDestroy");
  EXPECT_EQ(destroy_gi(gi), NVML_ERROR_IN_USE);
  ASSERT_EQ(raw_.Get<nvml_api::ComputeInstanceDestroyFn>("nvmlComputeInstanceDestroy")(ci), NVML_SUCCESS);
  EXPECT_EQ(destroy_gi(gi), NVML_SUCCESS);
  EXPECT_EQ(destroy_gi(gi), NVML_ERROR_INVALID_ARGUMENT);  // a stale handle
  EXPECT_THAT(Log(), ::testing::HasSubstr("nvmlGpuInstanceDestroy gpu=0 gi=1 -> NVML_ERROR_IN_USE"));
}

TEST_F(FakeNvmlRulesTest, ProcessListAnswersInsufficientSizeWithTheCount) {
  Configure("gpus count=1 name=\"NVIDIA H100 80GB HBM3\"\nprocess gpu=0 pid=1 used_mib=1\nprocess gpu=0 pid=2 used_mib=2\n");
  auto shutdown = raw_.Get<nvml_api::ShutdownFn>("nvmlShutdown");
  auto init = raw_.Get<nvml_api::InitFn>("nvmlInit_v2");
  ASSERT_EQ(shutdown(), NVML_SUCCESS);  // reload the world from the new config
  ASSERT_EQ(init(), NVML_SUCCESS);
  auto procs = raw_.Get<nvml_api::DeviceGetProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned count = 0;
  ASSERT_EQ(procs(h100_, &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  std::vector<nvmlProcessInfo_t> list(count);
  ASSERT_EQ(procs(h100_, &count, list.data()), NVML_SUCCESS);
  EXPECT_EQ(list[1].pid, 2u);
  EXPECT_EQ(list[1].usedGpuMemory, 2ull << 20);
  EXPECT_EQ(list[1].gpuInstanceId, 0xFFFFFFFFu);
}

}  // namespace
}  // namespace allot
