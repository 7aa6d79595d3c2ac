#include "tenancy/quota_tree.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::MakeTenantSpec;
using testing::Quota;

class QuotaTreeTest : public ::testing::Test {
 protected:
  QuotaTreeTest() { gpu_ = names_.Intern("gpu/H100-80GB"); }

  Result<TenantId> Upsert(const std::string& path, const Quota& guarantee = {}, const Quota& max = {}) {
    return tree_.Upsert(MakeTenantSpec(names_, path, guarantee, max), names_);
  }
  std::string ErrorOf(const Result<TenantId>& r) {
    EXPECT_FALSE(r.has_value());
    return r.has_value() ? "" : r.error().message();
  }
  const Tenant& At(const std::string& path) { return tree_.tenant(tree_.Find(path)); }

  ResourceNames names_;
  QuotaTree tree_;
  ResourceId gpu_;
};

TEST_F(QuotaTreeTest, BuildsAPathTreeUnderTheRoot) {
  ASSERT_TRUE(Upsert("research").has_value());
  ASSERT_TRUE(Upsert("research/nlp").has_value());
  const Tenant& nlp = At("research/nlp");
  EXPECT_EQ(nlp.depth, 2);
  EXPECT_EQ(nlp.parent, tree_.Find("research"));
  EXPECT_EQ(tree_.tenant(tree_.root()).children.size(), 1u);
  EXPECT_EQ(ParentPath("research/nlp"), "research");
  EXPECT_EQ(ParentPath("research"), "");
}

TEST_F(QuotaTreeTest, RejectsMalformedPathsAndWeights) {
  for (const char* path : {"", "/research", "research/", "a//b"}) {
    Result<TenantId> r = Upsert(path);
    ASSERT_FALSE(r.has_value()) << path;
    EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
  }
  TenantSpec spec = MakeTenantSpec(names_, "research");
  spec.weight = 0;
  EXPECT_NE(ErrorOf(tree_.Upsert(spec, names_)).find("weight"), std::string::npos);
}

TEST_F(QuotaTreeTest, RejectsAnUnknownParentNamingIt) {
  Result<TenantId> r = Upsert("research/nlp");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_NE(r.error().message().find("parent 'research' does not exist"), std::string::npos) << r.error().message();
}

TEST_F(QuotaTreeTest, RejectsAGuaranteeAboveItsOwnMax) {
  std::string e = ErrorOf(Upsert("research", {{"gpu/H100-80GB", "16"}}, {{"gpu/H100-80GB", "8"}}));
  EXPECT_NE(e.find("guarantee.gpu/H100-80GB: 16 exceeds its own max 8"), std::string::npos) << e;
}

TEST_F(QuotaTreeTest, RejectsAChildMaxAboveItsParentsMax) {
  ASSERT_TRUE(Upsert("research", {}, {{"gpu/H100-80GB", "32"}}).has_value());
  std::string e = ErrorOf(Upsert("research/nlp", {}, {{"gpu/H100-80GB", "33"}}));
  EXPECT_NE(e.find("max.gpu/H100-80GB: 33 exceeds the max of parent 'research' (32)"), std::string::npos) << e;
  EXPECT_TRUE(Upsert("research/nlp", {}, {{"gpu/H100-80GB", "32"}}).has_value());
}

TEST_F(QuotaTreeTest, RejectsLoweringAParentMaxBelowAChilds) {
  ASSERT_TRUE(Upsert("research", {}, {{"gpu/H100-80GB", "32"}}).has_value());
  ASSERT_TRUE(Upsert("research/nlp", {}, {{"gpu/H100-80GB", "16"}}).has_value());
  std::string e = ErrorOf(Upsert("research", {}, {{"gpu/H100-80GB", "8"}}));
  EXPECT_NE(e.find("is below the max of child 'research/nlp' (16)"), std::string::npos) << e;
}

TEST_F(QuotaTreeTest, RejectsANewChildWhoseGuaranteePushesSiblingsPastTheParent) {
  // research guarantees 16; nlp takes 10; vision asking 8 would make 10 + 8 = 18 > 16.
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  ASSERT_TRUE(Upsert("research/nlp", {{"gpu/H100-80GB", "10"}}).has_value());
  std::string e = ErrorOf(Upsert("research/vision", {{"gpu/H100-80GB", "8"}}));
  EXPECT_NE(e.find("guarantees under 'research' would sum to 18, past its guarantee of 16"), std::string::npos) << e;
  EXPECT_FALSE(tree_.Find("research/vision").valid());
  EXPECT_TRUE(Upsert("research/vision", {{"gpu/H100-80GB", "6"}}).has_value());  // 10 + 6 = 16 fits
}

TEST_F(QuotaTreeTest, RejectsAFirstChildWhoseGuaranteeExceedsTheParents) {
  // 20 > 16 with no siblings at all.
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  std::string e = ErrorOf(Upsert("research/nlp", {{"gpu/H100-80GB", "20"}}));
  EXPECT_NE(e.find("would sum to 20, past its guarantee of 16"), std::string::npos) << e;
}

TEST_F(QuotaTreeTest, RejectsRaisingAnExistingChildsGuaranteePastTheParent) {
  // 10 + 6 = 16 fits; raising vision to 7 makes 17 > 16.
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  ASSERT_TRUE(Upsert("research/nlp", {{"gpu/H100-80GB", "10"}}).has_value());
  ASSERT_TRUE(Upsert("research/vision", {{"gpu/H100-80GB", "6"}}).has_value());
  std::string e = ErrorOf(Upsert("research/vision", {{"gpu/H100-80GB", "7"}}));
  EXPECT_NE(e.find("would sum to 17"), std::string::npos) << e;
}

TEST_F(QuotaTreeTest, CountsGrandchildrenThroughAChildWithoutAGuarantee) {
  // research 16 ← team (no guarantee) ← {a 10, b 8}: nearest guaranteed descendants sum to 18.
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  ASSERT_TRUE(Upsert("research/team").has_value());
  ASSERT_TRUE(Upsert("research/team/a", {{"gpu/H100-80GB", "10"}}).has_value());
  std::string e = ErrorOf(Upsert("research/team/b", {{"gpu/H100-80GB", "8"}}));
  EXPECT_NE(e.find("would sum to 18"), std::string::npos) << e;
  EXPECT_EQ(tree_.EffectiveGuarantee(tree_.Find("research/team"), gpu_), 10 * kGpuUnit);
}

TEST_F(QuotaTreeTest, RejectsLoweringAParentGuaranteeBelowItsChildren) {
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  ASSERT_TRUE(Upsert("research/nlp", {{"gpu/H100-80GB", "12"}}).has_value());
  std::string e = ErrorOf(Upsert("research", {{"gpu/H100-80GB", "8"}}));
  EXPECT_NE(e.find("guarantee.gpu/H100-80GB: 8 is less than its children's guarantees (12)"), std::string::npos) << e;
}

TEST_F(QuotaTreeTest, ChangesNothingWhenAnUpdateIsRejected) {
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}, {{"gpu/H100-80GB", "32"}}).has_value());
  ASSERT_TRUE(Upsert("research/nlp", {{"gpu/H100-80GB", "12"}}).has_value());
  size_t before = tree_.size();
  EXPECT_FALSE(Upsert("research", {{"gpu/H100-80GB", "8"}}, {{"gpu/H100-80GB", "64"}}).has_value());
  EXPECT_FALSE(Upsert("research/vision", {{"gpu/H100-80GB", "8"}}).has_value());
  EXPECT_EQ(tree_.size(), before);
  const Tenant& r = At("research");
  EXPECT_EQ(r.guarantee[gpu_], 16 * kGpuUnit);
  EXPECT_EQ(r.max[gpu_], 32 * kGpuUnit);
  EXPECT_EQ(r.children.size(), 1u);
}

TEST_F(QuotaTreeTest, UpdateKeepsChildrenAndUsage) {
  ASSERT_TRUE(Upsert("research").has_value());
  ASSERT_TRUE(Upsert("research/nlp").has_value());
  tree_.AddUsage(tree_.Find("research/nlp"), {gpu_, 8 * kGpuUnit, 0, 0}, true, +1);
  ASSERT_TRUE(Upsert("research", {{"gpu/H100-80GB", "16"}}).has_value());
  EXPECT_EQ(At("research").children.size(), 1u);
  EXPECT_EQ(At("research").usage[gpu_], 8 * kGpuUnit);
}

TEST_F(QuotaTreeTest, UsageRollsUpToEveryAncestorAndBack) {
  ASSERT_TRUE(Upsert("research").has_value());
  ASSERT_TRUE(Upsert("research/nlp").has_value());
  ASSERT_TRUE(Upsert("research/vision").has_value());
  Demand eight{gpu_, 8 * kGpuUnit, 16000, 64 * 1024};
  tree_.AddUsage(tree_.Find("research/nlp"), eight, /*guaranteed=*/true, +1);
  tree_.AddUsage(tree_.Find("research/vision"), eight, /*guaranteed=*/false, +1);
  // research: 8 + 8 GPUs in use, of which 8 guaranteed; the root sees the same.
  for (const char* path : {"research", ""}) {
    EXPECT_EQ(At(path).usage[gpu_], 16 * kGpuUnit) << path;
    EXPECT_EQ(At(path).usage[kCpu], 32000) << path;
    EXPECT_EQ(At(path).guaranteed_usage[gpu_], 8 * kGpuUnit) << path;
  }
  EXPECT_EQ(At("research/vision").guaranteed_usage[gpu_], 0);
  tree_.AddUsage(tree_.Find("research/nlp"), eight, true, -1);
  tree_.AddUsage(tree_.Find("research/vision"), eight, false, -1);
  EXPECT_TRUE(At("").usage.IsZero());
  EXPECT_TRUE(At("").guaranteed_usage.IsZero());
}

TEST_F(QuotaTreeTest, EffectiveGuaranteeSumsChildrenWhereUnset) {
  // org (unset) ← {a 4, b (unset) ← b/x 3}: org passes up 4 + 3 = 7.
  ASSERT_TRUE(Upsert("org").has_value());
  ASSERT_TRUE(Upsert("org/a", {{"gpu/H100-80GB", "4"}}).has_value());
  ASSERT_TRUE(Upsert("org/b").has_value());
  ASSERT_TRUE(Upsert("org/b/x", {{"gpu/H100-80GB", "3"}}).has_value());
  EXPECT_EQ(tree_.EffectiveGuarantee(tree_.Find("org"), gpu_), 7 * kGpuUnit);
  EXPECT_EQ(tree_.EffectiveGuarantee(tree_.root(), gpu_), 7 * kGpuUnit);
}

TEST_F(QuotaTreeTest, RemovesALeafWithNoUsageAndKeepsItsIdAsATombstone) {
  ASSERT_TRUE(Upsert("org").has_value());
  ASSERT_TRUE(Upsert("org/team").has_value());
  TenantId team = tree_.Find("org/team");
  EXPECT_NE(ErrorOf(tree_.Remove("org")).find("has 1 child tenant(s), e.g. 'org/team': delete or move them first"),
            std::string::npos);
  tree_.AddUsage(team, {gpu_, kGpuUnit, 0, 0}, false, +1);
  EXPECT_NE(ErrorOf(tree_.Remove("org/team")).find("still has jobs holding resources"), std::string::npos);
  tree_.AddUsage(team, {gpu_, kGpuUnit, 0, 0}, false, -1);
  ASSERT_EQ(tree_.Remove("org/team").value(), team);
  EXPECT_FALSE(tree_.Find("org/team").valid());
  EXPECT_TRUE(At("org").children.empty());
  EXPECT_TRUE(tree_.tenant(team).removed);
  EXPECT_EQ(tree_.tenant(team).path, "org/team") << "finished jobs still name it";
  EXPECT_NE(ErrorOf(tree_.Remove("org/team")).find("does not exist"), std::string::npos);
  // The path can be used again, as a new tenant.
  ASSERT_TRUE(Upsert("org/team").has_value());
  EXPECT_NE(tree_.Find("org/team"), team);
}

TEST_F(QuotaTreeTest, MovesASubtreeWithItsUsageAndRenamesEveryPathUnderIt) {
  ASSERT_TRUE(Upsert("a").has_value());
  ASSERT_TRUE(Upsert("b").has_value());
  ASSERT_TRUE(Upsert("a/team").has_value());
  ASSERT_TRUE(Upsert("a/team/p").has_value());
  TenantId p = tree_.Find("a/team/p");
  Demand two{gpu_, 2 * kGpuUnit, 4000, 0};
  tree_.AddUsage(p, two, /*guaranteed=*/true, +1);
  ASSERT_TRUE(tree_.Move("a/team", "b/renamed", names_).has_value());
  EXPECT_FALSE(tree_.Find("a/team").valid());
  EXPECT_FALSE(tree_.Find("a/team/p").valid());
  EXPECT_EQ(tree_.Find("b/renamed/p"), p) << "ids survive a move";
  EXPECT_EQ(At("b/renamed/p").depth, 3);
  EXPECT_EQ(At("b/renamed").parent, tree_.Find("b"));
  // Usage left a and arrived at b; the root is unchanged.
  EXPECT_TRUE(At("a").usage.IsZero());
  EXPECT_EQ(At("b").usage[gpu_], 2 * kGpuUnit);
  EXPECT_EQ(At("b").guaranteed_usage[gpu_], 2 * kGpuUnit);
  EXPECT_EQ(At("").usage[gpu_], 2 * kGpuUnit);
  // To the top level, under a new name.
  ASSERT_TRUE(tree_.Move("b/renamed", "c", names_).has_value());
  EXPECT_EQ(At("c/p").depth, 2);
  EXPECT_TRUE(At("b").usage.IsZero());
}

TEST_F(QuotaTreeTest, RefusesAMoveThatBreaksQuotasOrTheTreeAndChangesNothing) {
  ASSERT_TRUE(Upsert("small", {{"gpu/H100-80GB", "4"}}, {{"gpu/H100-80GB", "8"}}).has_value());
  ASSERT_TRUE(Upsert("big", {{"gpu/H100-80GB", "16"}}).has_value());
  ASSERT_TRUE(Upsert("big/team", {{"gpu/H100-80GB", "6"}}).has_value());
  ASSERT_TRUE(Upsert("big/team/p").has_value());
  ASSERT_TRUE(Upsert("big/wide", {}, {{"gpu/H100-80GB", "12"}}).has_value());
  // 6 guaranteed GPUs do not fit under small's 4.
  EXPECT_NE(ErrorOf(tree_.Move("big/team", "small/team", names_)).find("to: moving 'big/team' to 'small/team' breaks a quota: tenant 'small' guarantee.gpu/H100-80GB: 4 is less than its children's guarantees (6)"),
            std::string::npos);
  // A max of 12 does not fit under small's max of 8.
  EXPECT_NE(ErrorOf(tree_.Move("big/wide", "small/wide", names_)).find("is below the max of child 'small/wide' (12)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(tree_.Move("big/team", "big/team/p/x", names_)).find("inside the subtree being moved"),
            std::string::npos);
  EXPECT_NE(ErrorOf(tree_.Move("big/team", "big/wide", names_)).find("already exists"), std::string::npos);
  EXPECT_NE(ErrorOf(tree_.Move("big/team", "nowhere/team", names_)).find("the new parent 'nowhere' does not exist"),
            std::string::npos);
  EXPECT_NE(ErrorOf(tree_.Move("big/ghost", "small/ghost", names_)).find("does not exist"), std::string::npos);
  EXPECT_NE(ErrorOf(tree_.Move("big/team", "small//x", names_)).find("to: 'small//x' is not a path"), std::string::npos);
  EXPECT_TRUE(tree_.Find("big/team/p").valid());
  EXPECT_EQ(At("big").children.size(), 2u);
  EXPECT_TRUE(At("small").children.empty());
}

// What the pass reads per tenant without a walk: pools intersected down the path and trust
// inherited, kept as an ancestor changes and as a subtree moves.
TEST_F(QuotaTreeTest, PathPoolsAndTrustFollowAncestorsThroughUpdatesAndMoves) {
  ASSERT_TRUE(Upsert("a").has_value());
  ASSERT_TRUE(Upsert("a/team").has_value());
  ASSERT_TRUE(Upsert("a/team/p").has_value());
  ASSERT_TRUE(Upsert("b").has_value());
  EXPECT_EQ(At("a/team/p").path_pools, 0xF);
  EXPECT_FALSE(At("a/team/p").path_untrusted);
  TenantSpec a = MakeTenantSpec(names_, "a", {}, {});
  a.pools = 0x3;
  a.trust = Trust::kUntrusted;
  ASSERT_TRUE(tree_.Upsert(a, names_).has_value());
  TenantSpec team = MakeTenantSpec(names_, "a/team", {}, {});
  team.pools = 0x6;
  ASSERT_TRUE(tree_.Upsert(team, names_).has_value());
  EXPECT_EQ(At("a/team/p").path_pools, 0x2) << "0x3 & 0x6 & 0xF";
  EXPECT_TRUE(At("a/team/p").path_untrusted) << "an untrusted ancestor";
  EXPECT_FALSE(At("b").path_untrusted);
  ASSERT_TRUE(tree_.Move("a/team", "b/team", names_).has_value());
  EXPECT_EQ(At("b/team/p").path_pools, 0x6);
  EXPECT_FALSE(At("b/team/p").path_untrusted) << "no longer under a";
  a.trust = Trust::kTrusted;
  ASSERT_TRUE(tree_.Upsert(a, names_).has_value());
  EXPECT_FALSE(At("a").path_untrusted);
}

TEST_F(QuotaTreeTest, TopLevelGuaranteesMustFitTheFleet) {
  ASSERT_TRUE(Upsert("a", {{"gpu/H100-80GB", "8"}}).has_value());
  ASSERT_TRUE(Upsert("b", {{"gpu/H100-80GB", "9"}}).has_value());
  Resources capacity;
  capacity[gpu_] = 16 * kGpuUnit;
  Status s = tree_.ValidateAgainstCapacity(capacity, names_);
  EXPECT_NE(s.message().find("guarantees for gpu/H100-80GB sum to 17, more than the fleet has (16)"), std::string::npos)
      << s.ToString();
  capacity[gpu_] = 17 * kGpuUnit;
  EXPECT_TRUE(tree_.ValidateAgainstCapacity(capacity, names_).ok());
}

}  // namespace
}  // namespace allot
