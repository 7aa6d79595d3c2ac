// Usage over a window, from the jobs' runs: preempted runs, the final run, a run cancelled
// midway, a run still open; each tenant's figure covers its subtree.
#include "state/usage.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class UsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("h100-", 2, "z", "r", 64, 512, testing::kH100, 8);
    c_.Tenant("org");
    c_.Tenant("org/a");
    c_.Tenant("org/b");
    gpu_ = c_.Res("gpu/H100-80GB");
  }
  // GPU-unit·ms of `path` over [from, to) at `now`, in GPU·ms.
  int64_t GpuMs(const std::string& path, int64_t from, int64_t to, int64_t now) {
    WindowUsage u = UsageOver(c_.state, from, to, now);
    return static_cast<int64_t>(u.by_tenant[c_.state.tenants().Find(path).value()][gpu_] / kGpuUnit);
  }
  Cluster c_;
  ResourceId gpu_ = 0;
};

TEST_F(UsageTest, CountsEveryRunInsideTheWindowOnce) {
  c_.Submit(JobBuilder("a").Tenant("org/a").Gpus(8));
  c_.Submit(JobBuilder("b").Tenant("org/b").Gpus(4));
  c_.RunPass(0);
  c_.Stop("a", 1000);             // a: run 1 is [0, 1000)
  c_.Apply(JobCancelled{c_.Id("b")}, 700);  // b: [0, 700), cancelled while running
  c_.RunPass(2000);               // a: run 2 from 2000
  ASSERT_EQ(c_.StateOf("a"), JobState::kRunning);
  // Still running at 4000: the open run counts up to now.
  EXPECT_EQ(GpuMs("org/a", 0, 10000, 4000), 8 * (1000 + 2000));
  c_.Finish("a", 5000);           // a: [2000, 5000)
  EXPECT_EQ(GpuMs("org/a", 0, 10000, 9000), 8 * (1000 + 3000));
  EXPECT_EQ(GpuMs("org/a", 500, 2500, 9000), 8 * (500 + 500)) << "clipped at both ends, the gap not counted";
  EXPECT_EQ(GpuMs("org/a", 1000, 2000, 9000), 0) << "requeued, holding nothing";
  EXPECT_EQ(GpuMs("org/b", 0, 10000, 9000), 4 * 700);
  EXPECT_EQ(GpuMs("org", 0, 10000, 9000), 8 * 4000 + 4 * 700) << "a parent covers its subtree";
  WindowUsage u = UsageOver(c_.state, 0, 10000, 9000);
  EXPECT_EQ(u.jobs[c_.state.tenants().Find("org").value()], 2);
  EXPECT_EQ(u.jobs[c_.state.tenants().Find("org/b").value()], 1);
  EXPECT_EQ(UsageOver(c_.state, 800, 900, 9000).jobs[c_.state.tenants().Find("org").value()], 1) << "only a ran then";
}

TEST_F(UsageTest, AJobCancelledBeforeItRanCountsNothingAndADeletedTenantStaysInItsParent) {
  c_.Submit(JobBuilder("big").Tenant("org/a").Gpus(8));
  c_.Apply(JobCancelled{c_.Id("big")}, 0);  // before any pass placed it
  c_.Submit(JobBuilder("small").Tenant("org/b").Gpus(2));
  c_.RunPass(0);
  c_.Finish("small", 1000);
  ASSERT_TRUE(c_.state.apply({1000, TenantRemoved{"org/b"}}).ok());
  EXPECT_EQ(GpuMs("org/a", 0, 5000, 5000), 0);
  EXPECT_EQ(GpuMs("org", 0, 5000, 5000), 2 * 1000);
}

}  // namespace
}  // namespace allot
