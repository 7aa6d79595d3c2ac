// The NVML GPU backend, through a real dlopen of the fake libnvidia-ml.so: discovery, MIG
// management, state seen by a second Open (an agent restart), telemetry, and the refusals when
// NVML is missing, incomplete or fails to initialise.
#include "agent/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "agent/fake_nvml_fixture.h"

namespace allot {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::kHgxConfig;

// The UUID the fake derives for GPU i.
std::string Uuid(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-0000-4000-8000-%012x", 0x5eed0000u + i, i);
  return buf;
}

class NvmlBackendTest : public testing::FakeNvmlTest {};

TEST_F(NvmlBackendTest, DiscoversEightH100sWithNvSwitchPeersMigModeAndInstances) {
  Configure(kHgxConfig);
  WriteNumaNode("0000:18:00.0", 0);
  WriteNumaNode("0000:9a:00.0", 1);
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv) << inv.error().ToString();
  EXPECT_EQ(inv->driver_version, "550.54.15");
  ASSERT_EQ(inv->gpus.size(), 8u);
  for (const GpuInfo& g : inv->gpus) {
    EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.model, "H100-80GB");
    EXPECT_EQ(g.uuid, Uuid(g.index));
    EXPECT_EQ(g.memory_bytes, 81559ull << 20);
    EXPECT_TRUE(g.problem.empty()) << g.problem;
    EXPECT_TRUE(g.mig_capable);
    // Each GPU's 18 links reach the four NVSwitches, so every GPU reaches every other.
    EXPECT_EQ(g.nvlinks.size(), 18u);
    std::vector<int> others;
    for (int i = 0; i < 8; ++i) {
      if (i != g.index) others.push_back(i);
    }
    EXPECT_EQ(g.nvlink_peers, others) << "GPU " << g.index;
  }
  EXPECT_EQ(inv->gpus[0].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(inv->gpus[0].numa_node, 0);
  EXPECT_EQ(inv->gpus[4].numa_node, 1);
  EXPECT_EQ(inv->gpus[1].numa_node, -1);  // no sysfs entry: unknown
  EXPECT_EQ(inv->gpus[0].nvlinks[0].peer_gpu, -1);  // a switch, not a GPU

  EXPECT_FALSE(inv->gpus[0].mig_enabled);
  const GpuInfo& mig = inv->gpus[2];
  EXPECT_TRUE(mig.mig_enabled);
  EXPECT_TRUE(mig.mig_pending);
  ASSERT_EQ(mig.mig.size(), 2u);
  EXPECT_EQ(mig.mig[0].profile, "3g.40gb");
  EXPECT_EQ(mig.mig[0].nvml_profile_id, 9u);
  EXPECT_EQ(mig.mig[0].id, 1u);
  EXPECT_EQ(mig.mig[0].start, 0);
  EXPECT_EQ(mig.mig[0].size, 4);
  EXPECT_EQ(mig.mig[0].compute_slices, 3);
  ASSERT_EQ(mig.mig[0].compute.size(), 1u);
  EXPECT_EQ(mig.mig[0].compute[0].size, 3);
  EXPECT_THAT(mig.mig[0].compute[0].uuid, ::testing::StartsWith("MIG-"));
  EXPECT_EQ(mig.mig[1].profile, "2g.20gb");
  EXPECT_EQ(mig.mig[1].start, 4);
  EXPECT_EQ(mig.mig[1].size, 2);
  EXPECT_NE(mig.mig[1].compute[0].uuid, mig.mig[0].compute[0].uuid);
  EXPECT_TRUE(inv->gpus[3].mig_enabled);
  EXPECT_TRUE(inv->gpus[3].mig.empty());
}

TEST_F(NvmlBackendTest, DirectNvLinksJoinOnlyTheLinkedGpus) {
  Configure(R"(
gpus count=4 name="NVIDIA A100-SXM4-80GB"
gpu index=4 name="NVIDIA L40S"
nvlink a=0 b=1 links=2
nvlink a=2 b=3 links=1
)");
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv) << inv.error().ToString();
  ASSERT_EQ(inv->gpus.size(), 5u);
  EXPECT_THAT(inv->gpus[0].nvlink_peers, ElementsAre(1));
  EXPECT_THAT(inv->gpus[1].nvlink_peers, ElementsAre(0));
  EXPECT_THAT(inv->gpus[2].nvlink_peers, ElementsAre(3));
  EXPECT_EQ(inv->gpus[0].nvlinks.size(), 2u);
  EXPECT_EQ(inv->gpus[0].nvlinks[0].peer_gpu, 1);
  EXPECT_EQ(inv->gpus[4].model, "L40S-48GB");
  EXPECT_FALSE(inv->gpus[4].mig_capable);  // GetMigMode: NOT_SUPPORTED
  EXPECT_TRUE(inv->gpus[4].nvlinks.empty());
}

TEST_F(NvmlBackendTest, CreatesMigInstancesAtValidStartsAndRefusesOthersWithTheReason) {
  Configure(kHgxConfig);
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto created = backend->CreateMigInstance(Uuid(3), "3g.40gb", 4);
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ(created->profile, "3g.40gb");
  EXPECT_EQ(created->start, 4);
  EXPECT_EQ(created->size, 4);
  ASSERT_EQ(created->compute.size(), 1u);
  EXPECT_EQ(created->compute[0].size, 3);  // the full-size compute instance CUDA needs
  EXPECT_THAT(created->compute[0].uuid, ::testing::StartsWith("MIG-"));

  // 3g may start only at memory slice 0 or 4 (NVML-MIG.md §4): refused before NVML is asked.
  auto bad_start = backend->CreateMigInstance(Uuid(3), "3g.40gb", 2);
  ASSERT_FALSE(bad_start);
  EXPECT_EQ(bad_start.error().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad_start.error().message(), HasSubstr("cannot start at memory slice 2"));
  EXPECT_THAT(bad_start.error().message(), HasSubstr("NVML allows starts 0, 4"));
  EXPECT_THAT(Log(), Not(HasSubstr("start=2")));

  // 1g at slice 5 overlaps the 3g at 4–7: NVML says INSUFFICIENT_RESOURCES; the error says which.
  auto overlap = backend->CreateMigInstance(Uuid(3), "1g.10gb", 5);
  ASSERT_FALSE(overlap);
  EXPECT_EQ(overlap.error().code(), Code::kConflict);
  EXPECT_THAT(overlap.error().message(), HasSubstr("overlaps GI 1 (3g.40gb at memory slices 4–7)"));
  EXPECT_THAT(Log(), HasSubstr("nvmlDeviceCreateGpuInstanceWithPlacement gpu=3 profile=19 start=5 size=1 -> "
                               "NVML_ERROR_INSUFFICIENT_RESOURCES"));

  auto unknown = backend->CreateMigInstance(Uuid(3), "5g.50gb", 0);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message(), HasSubstr("'5g.50gb' does not exist on H100-80GB; expected one of 1g.10gb"));

  auto mig_off = backend->CreateMigInstance(Uuid(1), "1g.10gb", 0);
  ASSERT_FALSE(mig_off);
  EXPECT_EQ(mig_off.error().code(), Code::kFailedPrecondition);
  EXPECT_THAT(mig_off.error().message(), HasSubstr("MIG is off on GPU 1"));

  // 4g at 0 beside 3g at 4: 4 + 3 compute slices, memory 0–3 and 4–7.
  ASSERT_TRUE(backend->CreateMigInstance(Uuid(3), "4g.40gb", 0));
  auto inv = backend->Discover();
  ASSERT_TRUE(inv);
  ASSERT_EQ(inv->gpus[3].mig.size(), 2u);
  EXPECT_EQ(inv->gpus[3].mig[0].profile, "4g.40gb");
  EXPECT_EQ(inv->gpus[3].mig[1].profile, "3g.40gb");
}

TEST_F(NvmlBackendTest, DestroyIsRefusedWhileProcessesRunAndNamesThem) {
  Configure(kHgxConfig);
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  Status busy = backend->DestroyMigInstance(Uuid(2), "3g.40gb", 0);
  EXPECT_EQ(busy.code(), Code::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("GI 1 (3g.40gb at memory slices 0–3)"));
  EXPECT_THAT(busy.message(), HasSubstr("is in use"));
  EXPECT_THAT(busy.message(), HasSubstr("processes 5151"));
  EXPECT_THAT(Log(), HasSubstr("nvmlComputeInstanceDestroy gpu=2 gi=1 ci=0 -> NVML_ERROR_IN_USE"));

  Status wrong = backend->DestroyMigInstance(Uuid(2), "1g.10gb", 4);
  EXPECT_EQ(wrong.code(), Code::kConflict);
  EXPECT_THAT(wrong.message(), HasSubstr("is GI 2 (2g.20gb at memory slices 4–5), not 1g.10gb"));
  Status missing = backend->DestroyMigInstance(Uuid(2), "1g.10gb", 6);
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("no MIG instance starts at memory slice 6"));

  Status ok = backend->DestroyMigInstance(Uuid(2), "2g.20gb", 4);
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  // Compute instance first, then the GPU instance.
  std::string log = Log();
  size_t ci = log.find("nvmlComputeInstanceDestroy gpu=2 gi=2 ci=0 -> NVML_SUCCESS");
  size_t gi = log.find("nvmlGpuInstanceDestroy gpu=2 gi=2 -> NVML_SUCCESS");
  ASSERT_NE(ci, std::string::npos) << log;
  ASSERT_NE(gi, std::string::npos) << log;
  EXPECT_LT(ci, gi);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv);
  ASSERT_EQ(inv->gpus[2].mig.size(), 1u);
}

TEST_F(NvmlBackendTest, InstancesCreatedBeforeAreSeenByASecondOpen) {
  Configure(kHgxConfig);
  MigGpuInstanceInfo made;
  {
    auto backend = Open();
    ASSERT_NE(backend, nullptr);
    auto created = backend->CreateMigInstance(Uuid(3), "1g.10gb", 6);
    ASSERT_TRUE(created) << created.error().ToString();
    made = *created;
    ASSERT_TRUE(backend->DestroyMigInstance(Uuid(2), "2g.20gb", 4).ok());
  }
  EXPECT_THAT(Log(), HasSubstr("nvmlShutdown -> NVML_SUCCESS"));  // the backend shut NVML down
  auto again = Open();  // a new nvmlInit_v2: the fake reloads its world from the state file
  ASSERT_NE(again, nullptr);
  auto inv = again->Discover();
  ASSERT_TRUE(inv);
  ASSERT_EQ(inv->gpus[3].mig.size(), 1u);
  EXPECT_EQ(inv->gpus[3].mig[0].id, made.id);
  EXPECT_EQ(inv->gpus[3].mig[0].start, 6);
  EXPECT_EQ(inv->gpus[3].mig[0].compute[0].uuid, made.compute[0].uuid);
  ASSERT_EQ(inv->gpus[2].mig.size(), 1u);
  EXPECT_EQ(inv->gpus[2].mig[0].profile, "3g.40gb");
}

TEST_F(NvmlBackendTest, MigModeChangesOnlyOnAnIdleGpuAndSaysWhenItIsPending) {
  Configure(std::string(kHgxConfig) + "gpu index=7 reset_blocked=on\n");
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(backend->SetMigMode(Uuid(1), true).ok());
  Status busy = backend->SetMigMode(Uuid(0), true);  // pid 4242 runs there
  EXPECT_EQ(busy.code(), Code::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("In use by another client (NVML_ERROR_IN_USE)"));
  Status with_instances = backend->SetMigMode(Uuid(2), false);
  EXPECT_THAT(with_instances.message(), HasSubstr("destroy its MIG instances"));
  Status pending = backend->SetMigMode(Uuid(7), true);
  EXPECT_EQ(pending.code(), Code::kFailedPrecondition);
  EXPECT_THAT(pending.message(), HasSubstr("only after a GPU reset: GPU requires restart (NVML_ERROR_RESET_REQUIRED)"));
  Status stranger = backend->SetMigMode("GPU-nope", true);
  EXPECT_EQ(stranger.code(), Code::kNotFound);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv);
  EXPECT_TRUE(inv->gpus[1].mig_enabled);
  EXPECT_FALSE(inv->gpus[0].mig_enabled);
  EXPECT_FALSE(inv->gpus[7].mig_enabled);
  EXPECT_TRUE(inv->gpus[7].mig_pending);
  EXPECT_THAT(Log(), HasSubstr("nvmlDeviceSetMigMode gpu=1 mode=1 -> NVML_SUCCESS activation=NVML_SUCCESS"));
}

TEST_F(NvmlBackendTest, TelemetryReportsReadingsProcessesEccAndXidOnce) {
  Configure(kHgxConfig);
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto samples = backend->Sample();
  ASSERT_TRUE(samples) << samples.error().ToString();
  ASSERT_EQ(samples->size(), 8u);
  const GpuSample& g0 = (*samples)[0];
  EXPECT_TRUE(g0.status.ok());
  EXPECT_EQ(g0.utilization_percent, 57u);
  EXPECT_EQ(g0.memory_utilization_percent, 12u);
  EXPECT_EQ(g0.power_mw, 312000u);
  EXPECT_EQ(g0.temperature_c, 41u);
  EXPECT_EQ(g0.memory_used_bytes, 1024ull << 20);
  EXPECT_EQ(g0.ecc_corrected, 0u);
  EXPECT_FALSE(g0.retired_pages.has_value());  // H100 remaps rows instead
  ASSERT_TRUE(g0.remapped_rows.has_value());
  ASSERT_EQ(g0.processes.size(), 1u);
  EXPECT_EQ(g0.processes[0].pid, 4242u);
  EXPECT_EQ(g0.processes[0].used_bytes, 1024ull << 20);
  EXPECT_FALSE(g0.processes[0].gpu_instance_id.has_value());
  EXPECT_TRUE(g0.notes.empty()) << g0.notes[0];

  const GpuSample& g2 = (*samples)[2];
  EXPECT_FALSE(g2.utilization_percent.has_value());  // NOT_SUPPORTED on a MIG GPU
  EXPECT_FALSE(g2.remapped_rows.has_value());        // NOT_SUPPORTED with MIG instances
  ASSERT_EQ(g2.processes.size(), 1u);
  EXPECT_EQ(g2.processes[0].gpu_instance_id, 1u);
  EXPECT_EQ(g2.processes[0].compute_instance_id, 0u);

  const GpuSample& g5 = (*samples)[5];
  EXPECT_EQ(g5.ecc_corrected, 3u);
  EXPECT_EQ(g5.ecc_uncorrected, 1u);
  ASSERT_EQ(g5.xids.size(), 1u);
  EXPECT_EQ(g5.xids[0].xid, 79u);
  EXPECT_FALSE(g5.xids[0].gpu_instance_id.has_value());

  auto next = backend->Sample();
  ASSERT_TRUE(next);
  EXPECT_TRUE((*next)[5].xids.empty());  // an event is reported once
  backend.reset();
  auto restarted = Open();
  ASSERT_NE(restarted, nullptr);
  auto after_restart = restarted->Sample();
  ASSERT_TRUE(after_restart);
  EXPECT_TRUE((*after_restart)[5].xids.empty());  // nor again after a restart
}

TEST_F(NvmlBackendTest, ALostGpuIsReportedWithoutHidingTheOthers) {
  Configure(std::string(kHgxConfig) + "gpu index=6 lost=yes\n");
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv) << inv.error().ToString();
  EXPECT_THAT(inv->gpus[6].problem, HasSubstr("GPU is lost (NVML_ERROR_GPU_IS_LOST)"));
  EXPECT_TRUE(inv->gpus[5].problem.empty());
  auto samples = backend->Sample();
  ASSERT_TRUE(samples);
  EXPECT_EQ((*samples)[6].status.code(), Code::kUnavailable);
  EXPECT_THAT((*samples)[6].status.message(), HasSubstr("GPU 6 cannot be used"));
  EXPECT_TRUE((*samples)[5].status.ok());
}

TEST_F(NvmlBackendTest, AGpuOutsideTheCatalogIsDiscoveredButNotUsable) {
  Configure("gpu index=0 name=\"NVIDIA RTX 9999\" memory_mib=1000\n");
  auto backend = Open();
  ASSERT_NE(backend, nullptr);
  auto inv = backend->Discover();
  ASSERT_TRUE(inv);
  EXPECT_EQ(inv->gpus[0].model, "");
  EXPECT_THAT(inv->gpus[0].problem, HasSubstr("GPU model 'NVIDIA RTX 9999' (NVML's name) is not in allot's catalog"));
}

TEST(NvmlModelNames, MapNvmlNamesToCatalogModels) {
  EXPECT_EQ(CatalogModelForNvmlName("NVIDIA H100 80GB HBM3").value(), "H100-80GB");
  EXPECT_EQ(CatalogModelForNvmlName("NVIDIA A100-SXM4-80GB").value(), "A100-80GB");
  EXPECT_EQ(CatalogModelForNvmlName("A100-SXM4-40GB").value(), "A100-40GB");  // R450 names lack "NVIDIA "
  EXPECT_EQ(CatalogModelForNvmlName("NVIDIA H100 NVL").value(), "H100-94GB");
  EXPECT_EQ(CatalogModelForNvmlName("Tesla T4").value(), "T4-16GB");
  auto unknown = CatalogModelForNvmlName("NVIDIA GeForce RTX 4090");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Code::kNotFound);
  EXPECT_THAT(unknown.error().message(), HasSubstr("expected one of NVIDIA B200, NVIDIA H200"));
}

// --- Refusals: no library, a library missing symbols, a driver that fails to initialise -------

TEST(NvmlOpen, MissingLibraryIsRefusedClearly) {
  NvmlOptions options;
  options.library = "/nonexistent/libnvidia-ml.so.1";
  auto backend = OpenNvml(options);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().code(), Code::kUnavailable);
  EXPECT_THAT(backend.error().message(), ::testing::StartsWith("no NVML at /nonexistent/libnvidia-ml.so.1: "));
  EXPECT_THAT(backend.error().message(), ::testing::EndsWith("; the agent will not register GPUs"));
}

TEST(NvmlOpen, ALibraryThatIsNotNvmlIsRefusedNamingTheSymbol) {
  NvmlOptions options;
  options.library = "libc.so.6";
  auto backend = OpenNvml(options);
  ASSERT_FALSE(backend);
  EXPECT_THAT(backend.error().message(), HasSubstr("NVML at libc.so.6 lacks nvmlInit_v2, nvmlShutdown"));
}

TEST(NvmlOpen, AnOlderDriverWithoutVersionedSymbolsIsRefusedNamingThem) {
  NvmlOptions options;
  options.library = FAKE_NVML_OLD_PATH;
  auto backend = OpenNvml(options);
  ASSERT_FALSE(backend);
  const std::string& m = backend.error().message();
  EXPECT_THAT(m, HasSubstr("lacks nvmlDeviceGetGpuInstancePossiblePlacements_v2 (expected"));
  // ComputeRunningProcesses_v3 is missing too, but _v2 fills the same record and is taken instead.
  EXPECT_THAT(m, Not(HasSubstr("ComputeRunningProcesses")));
}

TEST_F(NvmlBackendTest, AFailingNvmlInitIsRefusedWithNvmlsReason) {
  Configure("init_error code=9\n");
  NvmlOptions options;
  options.library = FAKE_NVML_PATH;
  auto backend = OpenNvml(options);
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.error().message(), std::string("NVML at ") + FAKE_NVML_PATH +
                                           ": nvmlInit_v2 failed: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)"
                                           "; the agent will not register GPUs");
}

}  // namespace
}  // namespace allot
