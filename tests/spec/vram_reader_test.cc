// `vram:` in a job spec (docs/arrays.md): the GPU memory each task may use, 12Gi or 12GiB; an
// MPS share's memory limit (equal to mps.memory when both are written); refused with the field,
// the value and what was expected.
#include <gtest/gtest.h>

#include "spec/job_spec.h"
#include "state/cluster_state.h"

namespace allot {
namespace {

Result<std::vector<ScenarioJob>> Read(const std::string& yaml) { return ReadJobBatch(YAML::Load(yaml), "body"); }

TEST(VramReaderTest, AJobStatesItsTasksGpuMemoryWhichIsItsMpsLimit) {
  auto plain = Read("{name: a, tenant: t, command: [r], tasks: {timeslice: true}, vram: 12GiB}");
  ASSERT_TRUE(plain.has_value()) << plain.error().message();
  EXPECT_EQ(plain->front().spec.vram_mib, 12 * 1024);
  EXPECT_EQ(plain->front().spec.groups[0].gpu_memory, 0) << "a time-slice share holds no memory: the agent checks it";
  auto mps = Read("{name: a, tenant: t, command: [r], tasks: {mps: {percent: 25}}, vram: 12Gi}");
  ASSERT_TRUE(mps.has_value()) << mps.error().message();
  EXPECT_EQ(mps->front().spec.groups[0].gpu_memory, 12 * 1024) << "the MPS memory limit is the stated vram";
  auto both = Read("{name: a, tenant: t, command: [r], tasks: {mps: {percent: 25, memory: 12Gi}}, vram: 12Gi}");
  ASSERT_TRUE(both.has_value()) << both.error().message();
  // Per element of an array: every element states it.
  auto array = Read("{name: r, tenant: t, command: [r], tasks: {timeslice: true}, vram: 6Gi, time_limit: 2m, array: {frames: '1-3'}}");
  ASSERT_TRUE(array.has_value()) << array.error().message();
  EXPECT_EQ((*array)[2].spec.vram_mib, 6 * 1024);
  EXPECT_EQ((*array)[2].spec.time_limit_ms, 120000);
}

TEST(VramReaderTest, BadVramNamesTheFieldTheValueAndWhatWasExpected) {
  auto error = [](const std::string& yaml) {
    auto r = Read(yaml);
    return r ? std::string("accepted") : r.error().message();
  };
  const std::string job = "name: a, tenant: t, command: [r], ";
  EXPECT_EQ(error("{" + job + "tasks: {timeslice: true}, vram: lots}"),
            "body:1: job.vram: 'lots' is not a memory quantity; expected GPU memory per task from 1Mi to 1Ti, e.g. 12Gi or 12GiB");
  EXPECT_EQ(error("{" + job + "tasks: {timeslice: true}, vram: 2Ti}"),
            "body:1: job.vram: '2Ti' is out of range; expected GPU memory per task from 1Mi to 1Ti, e.g. 12Gi or 12GiB");
  EXPECT_EQ(error("{" + job + "tasks: {mps: {percent: 25, memory: 20Gi}}, vram: 12Gi}"),
            "body:1: job.vram: '12Gi' differs from job.tasks.mps.memory (20Gi); expected the same, or only one of them "
            "(vram is the MPS memory limit)");
}

TEST(VramReaderTest, AVramNoGpuOrMigInstanceOfTheJobCanHoldIsRefusedAtSubmit) {
  ClusterState state;
  ASSERT_TRUE(state.apply({0, NodeAdded{NodeSpec{"n0", "z", "r", "", 64000, 512 * 1024, "A100-40GB", 8}}}).ok());
  TenantSpec t;
  t.path = "vfx";
  ASSERT_TRUE(state.apply({0, TenantUpserted{t}}).ok());
  auto resolve = [&](const std::string& yaml) {
    auto jobs = Read(yaml);
    if (!jobs) return jobs.error().message();
    Status s = ResolveJob(jobs->front(), state, "job.");
    return s.ok() ? std::string("ok") : s.message();
  };
  EXPECT_EQ(resolve("{name: a, tenant: vfx, command: [r], tasks: {gpus: 1}, vram: 40Gi}"), "ok");
  EXPECT_EQ(resolve("{name: a, tenant: vfx, command: [r], tasks: {timeslice: true}, vram: 48Gi}"),
            "job.vram: 48Gi is more than a A100-40GB holds (40Gi); expected at most that");
  EXPECT_EQ(resolve("{name: a, tenant: vfx, command: [r], tasks: {mig: 1g.5gb}, vram: 6Gi}"),
            "job.vram: 6Gi is more than a 1g.5gb instance holds (5Gi); expected at most that");
  EXPECT_EQ(resolve("{name: a, tenant: vfx, command: [r], tasks: {gpus: 0, cpu: 1}, vram: 48Gi}"), "ok") << "no GPU: nothing to hold it";
}

}  // namespace
}  // namespace allot
