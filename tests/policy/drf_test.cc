#include "policy/drf.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace allot {
namespace {

TEST(ShareTest, ComparesFractionsExactly) {
  struct Case {
    Share a, b;
    std::strong_ordering want;
  };
  const Case cases[] = {
      {{1, 3}, {2, 6}, std::strong_ordering::equal},     // 1·6 = 2·3
      {{1, 3}, {333, 1000}, std::strong_ordering::greater},  // 1000 > 999
      {{2, 9}, {1, 3}, std::strong_ordering::less},      // 2·3 = 6 < 1·9 = 9
      {{0, 5}, {0, 7}, std::strong_ordering::equal},
      // Shares a double cannot tell apart: (2^53 + 1) / 2^53 vs 1.
      {{(1LL << 53) + 1, 1LL << 53}, {1, 1}, std::strong_ordering::greater},
      // Products past 64 bits: (2^62 - 1)/(2^62) vs (2^62 - 2)/(2^62 - 1).
      {{(1LL << 62) - 1, 1LL << 62}, {(1LL << 62) - 2, (1LL << 62) - 1}, std::strong_ordering::greater},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE((c.a <=> c.b) == c.want) << c.a.num << "/" << c.a.den << " vs " << c.b.num << "/" << c.b.den;
  }
  EXPECT_EQ((Share{1, 3}), (Share{2, 6}));
  EXPECT_DOUBLE_EQ((Share{1, 4}).ToDouble(), 0.25);
}

class DrfTest : public ::testing::Test {
 protected:
  DrfTest() {
    gpu_ = names_.Intern("gpu/H100-80GB");
    capacity_[kCpu] = 9000;
    capacity_[kMemory] = 18 * 1024;
    capacity_[gpu_] = 0;  // no GPUs: skipped, never divided by
  }
  TenantId Upsert(const std::string& path, int64_t weight = kMilli) {
    TenantSpec spec = testing::MakeTenantSpec(names_, path, {}, {}, weight);
    return tree_.Upsert(spec, names_).value();
  }
  Share ShareOf(TenantId t) {
    UsageOverlay usage(tree_);
    return WeightedDominantShare(usage, t, capacity_, names_.size());
  }

  ResourceNames names_;
  QuotaTree tree_;
  Resources capacity_;
  ResourceId gpu_;
};

TEST_F(DrfTest, DominantShareIsTheLargestShareOverResources) {
  // ⟨1 CPU, 4Gi⟩ of ⟨9 CPU, 18Gi⟩: cpu 1/9, memory 4/18 = 2/9 → dominant 2/9 (memory).
  TenantId a = Upsert("a");
  tree_.AddUsage(a, {kCpu, 0, 1000, 4 * 1024}, false, +1);
  EXPECT_EQ(ShareOf(a), (Share{2, 9}));
  // ⟨3 CPU, 1Gi⟩: cpu 3/9 = 1/3, memory 1/18 → dominant 1/3 (cpu).
  TenantId b = Upsert("b");
  tree_.AddUsage(b, {kCpu, 0, 3000, 1024}, false, +1);
  EXPECT_EQ(ShareOf(b), (Share{1, 3}));
  EXPECT_LT(ShareOf(a), ShareOf(b));
}

TEST_F(DrfTest, WeightDividesTheShare) {
  // Both use 3 of 9 CPUs (1/3); b has weight 2, so its share is 1/6.
  TenantId a = Upsert("a");
  TenantId b = Upsert("b", 2 * kMilli);
  tree_.AddUsage(a, {kCpu, 0, 3000, 0}, false, +1);
  tree_.AddUsage(b, {kCpu, 0, 3000, 0}, false, +1);
  EXPECT_EQ(ShareOf(a), (Share{1, 3}));
  EXPECT_EQ(ShareOf(b), (Share{1, 6}));
  // b at 6 CPUs with weight 2 equals a at 3 CPUs with weight 1: 6/9/2 = 3/9.
  tree_.AddUsage(b, {kCpu, 0, 3000, 0}, false, +1);
  EXPECT_EQ(ShareOf(a), ShareOf(b));
}

TEST_F(DrfTest, AParentsShareCoversItsWholeSubtree) {
  // org/x uses 2 CPUs, org/y 4 GiB of memory: org's share is max(2/9, 4/18) = 2/9.
  Upsert("org");
  TenantId x = Upsert("org/x");
  TenantId y = Upsert("org/y");
  tree_.AddUsage(x, {kCpu, 0, 2000, 0}, false, +1);
  tree_.AddUsage(y, {kCpu, 0, 0, 4 * 1024}, false, +1);
  EXPECT_EQ(ShareOf(tree_.Find("org")), (Share{2, 9}));
}

TEST_F(DrfTest, AnIdleTenantHasShareZero) {
  EXPECT_EQ(ShareOf(Upsert("idle")), (Share{0, 1}));
}

}  // namespace
}  // namespace allot
