// Job names in the state: unique within a tenant (by the tenant's id, so a moved tenant keeps
// its jobs' names), not across tenants, through the journal and through a snapshot.
#include <gtest/gtest.h>

#include "state/snapshot.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class JobNamesStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNodes("h100-", 1, "z1", "r1", 64, 512, testing::kH100, 8);
    a_ = c_.Tenant("org-a");
    b_ = c_.Tenant("org-b");
  }
  Status Submit(const std::string& name, const std::string& tenant) {
    return c_.state.apply({0, JobSubmitted{JobBuilder(name).Tenant(tenant).Gpus(1).Build(c_.state)}});
  }
  Cluster c_;
  TenantId a_, b_;
};

TEST_F(JobNamesStateTest, TwoTenantsMayEachSubmitAJobOfTheSameNameButOneTenantOnlyOnce) {
  ASSERT_TRUE(Submit("train", "org-a").ok());
  Status second = Submit("train", "org-b");
  ASSERT_TRUE(second.ok()) << second.ToString();  // was: conflict, "job 'train' already exists"
  Status again = Submit("train", "org-a");
  EXPECT_EQ(again.code(), Code::kConflict);
  EXPECT_EQ(again.message(), "job 'train' already exists in tenant 'org-a'");
  ASSERT_EQ(c_.state.jobs().size(), 2u);
  EXPECT_EQ(c_.state.jobs()[0].spec.tenant, a_);
  EXPECT_EQ(c_.state.jobs()[1].spec.tenant, b_);
}

TEST_F(JobNamesStateTest, ASnapshotWithTheSameNameInTwoTenantsRestores) {
  ASSERT_TRUE(Submit("train", "org-a").ok());
  ASSERT_TRUE(Submit("train", "org-b").ok());
  ClusterState restored;
  Status r = RestoreSnapshot(EncodeSnapshot(c_.state), restored);
  ASSERT_TRUE(r.ok()) << r.ToString();  // was: internal, "job 'train' appears twice"
  ASSERT_EQ(restored.jobs().size(), 2u);
  EXPECT_EQ(restored.jobs()[1].spec.tenant, b_);
  EXPECT_EQ(restored.apply({0, JobSubmitted{JobBuilder("train").Tenant("org-b").Gpus(1).Build(restored)}}).code(),
            Code::kConflict);
}

}  // namespace
}  // namespace allot
