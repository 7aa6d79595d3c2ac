// Deleting and moving tenants in a live cluster: what may go, what moves with a subtree, and
// that the state stays consistent (usage equals allocations) through both.
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class TenantLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("h100-", 2, "z", "r", 64, 512, testing::kH100, 8);
    c_.Tenant("a");
    c_.Tenant("a/team");
    c_.Tenant("b");
  }
  Status Try(EventBody body) { return c_.state.apply({1000, std::move(body)}); }
  Cluster c_;
};

TEST_F(TenantLifecycleTest, ATenantWithPendingOrRunningJobsCannotBeDeleted) {
  c_.Submit(JobBuilder("run").Tenant("a/team").Gpus(8));
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("run"), JobState::kRunning);
  c_.Submit(JobBuilder("wait").Tenant("a/team").Gpus(8).Tasks(2));
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("wait"), JobState::kPending);
  Status s = Try(TenantRemoved{"a/team"});
  EXPECT_EQ(s.message(), "tenant 'a/team' has 1 pending job(s): cancel them first");
  c_.Apply(JobCancelled{c_.Id("wait")});
  s = Try(TenantRemoved{"a/team"});
  EXPECT_NE(s.message().find("still has jobs holding resources"), std::string::npos) << s.ToString();
  c_.Finish("run", 2000);
  ASSERT_TRUE(Try(TenantRemoved{"a/team"}).ok());
  EXPECT_FALSE(c_.state.tenants().Find("a/team").valid());
  // Its finished job keeps its tenant's name; nothing new can be submitted there.
  EXPECT_EQ(c_.state.tenants().tenant(c_.job("run").spec.tenant).path, "a/team");
  JobSpec late = JobBuilder("late").Tenant("a").Gpus(1).Build(c_.state);
  late.tenant = c_.job("run").spec.tenant;
  EXPECT_NE(Try(JobSubmitted{late}).message().find("tenant: does not exist"), std::string::npos);
  EXPECT_TRUE(c_.state.VerifyInvariants().ok());
}

TEST_F(TenantLifecycleTest, DeletingATenantRevokesTheTokensScopedAtIt) {
  TenantId team = c_.state.tenants().Find("a/team");
  c_.Apply(TokenIssued{TokenRecord{std::string(64, '1'), Principal{"tom", Role::kTeamAdmin, team}, 0, false}});
  c_.Apply(TokenIssued{TokenRecord{std::string(64, '2'), Principal{"olga", Role::kOrgAdmin, c_.state.tenants().Find("a")}, 0, false}});
  ASSERT_TRUE(Try(TenantRemoved{"a/team"}).ok());
  EXPECT_EQ(c_.state.access().Find(std::string(64, '1')), nullptr) << "revoked";
  EXPECT_NE(c_.state.access().Find(std::string(64, '2')), nullptr) << "the parent's tokens stay";
  // A token cannot be issued for a deleted tenant.
  EXPECT_FALSE(Try(TokenIssued{TokenRecord{std::string(64, '3'), Principal{"x", Role::kMember, team}, 0, false}}).ok());
}

TEST_F(TenantLifecycleTest, RunningJobsMoveWithTheirTenantAndKeepRunning) {
  c_.Submit(JobBuilder("run").Tenant("a/team").Gpus(8));
  c_.RunPass(0);
  ASSERT_EQ(c_.StateOf("run"), JobState::kRunning);
  ResourceId gpu = c_.Res("gpu/H100-80GB");
  ASSERT_TRUE(Try(TenantMoved{"a/team", "b/team"}).ok());
  EXPECT_EQ(c_.StateOf("run"), JobState::kRunning);
  EXPECT_EQ(c_.state.tenants().tenant(c_.job("run").spec.tenant).path, "b/team");
  EXPECT_EQ(c_.state.tenants().tenant(c_.state.tenants().Find("b")).usage[gpu], 8 * kGpuUnit);
  EXPECT_TRUE(c_.state.tenants().tenant(c_.state.tenants().Find("a")).usage.IsZero());
  Status inv = c_.state.VerifyInvariants();
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  // It finishes from its new place; usage returns to zero everywhere.
  c_.Finish("run", 5000);
  EXPECT_TRUE(c_.state.tenants().tenant(c_.state.tenants().root()).usage.IsZero());
  EXPECT_TRUE(c_.state.VerifyInvariants().ok());
}

// floor+burst bills each tenant's own part of its org's guarantee for the time it held: every
// tenant event that changes one is recorded with its time, a rejected one records nothing, and
// the history survives a snapshot.
TEST_F(TenantLifecycleTest, EveryChangeOfAFloorIsRecordedWithItsTimeAndSurvivesASnapshot) {
  ResourceId gpu = c_.Res("gpu/H100-80GB");
  TenantId a = c_.state.tenants().Find("a"), team = c_.state.tenants().Find("a/team");
  auto upsert = [&](const std::string& path, const std::string& g, int64_t at) {
    return c_.state.apply({at, TenantUpserted{testing::MakeTenantSpec(c_.state.resource_names(), path,
                                                                      {{"gpu/H100-80GB", g}})}});
  };
  ASSERT_TRUE(upsert("a", "8", 1000).ok());
  ASSERT_TRUE(upsert("a/team", "6", 2000).ok());         // a keeps 2
  EXPECT_FALSE(upsert("a/team", "9", 3000).ok());        // over a's guarantee: refused
  ASSERT_TRUE(c_.state.apply({4000, TenantMoved{"a/team", "b/team"}}).ok());  // a keeps 8 again
  const std::vector<FloorChange>& h = c_.state.billing().floor_changes();
  std::vector<FloorChange> want = {
      {1000, a, gpu, 0, 8 * kGpuUnit},
      {2000, a, gpu, 8 * kGpuUnit, 2 * kGpuUnit},
      {2000, team, gpu, 0, 6 * kGpuUnit},
      {4000, a, gpu, 2 * kGpuUnit, 8 * kGpuUnit},
  };
  EXPECT_EQ(h, want);

  std::string bytes = EncodeSnapshot(c_.state);
  ClusterState restored;
  Status r = RestoreSnapshot(bytes, restored);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(restored.billing().floor_changes(), want);
}

}  // namespace
}  // namespace allot
