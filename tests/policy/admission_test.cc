#include "policy/admission.h"

#include <gtest/gtest.h>

#include <random>

#include "testing/builders.h"

namespace allot {
namespace {

using testing::MakeTenantSpec;
using testing::Quota;

class AdmissionTest : public ::testing::Test {
 protected:
  AdmissionTest() { gpu_ = names_.Intern("gpu/H100-80GB"); }

  TenantId Upsert(const std::string& path, const Quota& guarantee = {}, const Quota& max = {}) {
    Result<TenantId> r = tree_.Upsert(MakeTenantSpec(names_, path, guarantee, max), names_);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.value_or(TenantId());
  }
  Demand Gpus(int n) const { return {gpu_, n * kGpuUnit, 0, 0}; }
  // Puts `d` in use at `t` in the tree (as running jobs would).
  void Use(const std::string& path, const Demand& d, bool guaranteed) {
    tree_.AddUsage(tree_.Find(path), d, guaranteed, +1);
  }
  AdmissionResult AdmitAt(const std::string& path, const Demand& d) {
    UsageOverlay usage(tree_);
    return Admit(usage, tree_.Find(path), d);
  }

  ResourceNames names_;
  QuotaTree tree_;
  ResourceId gpu_;
};

TEST_F(AdmissionTest, FitsWhenEveryAncestorHasRoomUnderItsMax) {
  Upsert("research", {}, {{"gpu/H100-80GB", "32"}});
  Upsert("research/nlp", {}, {{"gpu/H100-80GB", "16"}});
  Use("research/nlp", Gpus(8), false);
  // nlp: 8 + 8 = 16 <= 16; research: 8 + 8 = 16 <= 32.
  EXPECT_TRUE(AdmitAt("research/nlp", Gpus(8)).fits);
  // nlp: 8 + 9 = 17 > 16.
  AdmissionResult r = AdmitAt("research/nlp", Gpus(9));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.blocking, tree_.Find("research/nlp"));
}

TEST_F(AdmissionTest, BlocksAtTheAncestorWhoseMaxIsHitAndSaysSo) {
  // research max 32, used 28 by vision; nlp (max 16, used 0) asks 8: 28 + 8 = 36 > 32 at research.
  Upsert("research", {}, {{"gpu/H100-80GB", "32"}});
  Upsert("research/nlp", {}, {{"gpu/H100-80GB", "16"}});
  Upsert("research/vision");
  Use("research/vision", Gpus(28), false);
  AdmissionResult r = AdmitAt("research/nlp", Gpus(8));
  ASSERT_FALSE(r.fits);
  EXPECT_EQ(r.blocking, tree_.Find("research"));
  EXPECT_EQ(r.resource, gpu_);
  EXPECT_EQ(r.usage, 28 * kGpuUnit);
  EXPECT_EQ(r.limit, 32 * kGpuUnit);
  EXPECT_EQ(r.request, 8 * kGpuUnit);
  EXPECT_EQ(QuotaReason(r, tree_, names_), "tenant research at max for gpu/H100-80GB: 28 of 32 in use, job asks 8");
}

TEST_F(AdmissionTest, QuotaReasonFormatsMemoryInBinaryUnits) {
  Upsert("research", {}, {{"memory", "64Gi"}});
  Use("research", {kCpu, 0, 0, 60 * 1024}, false);
  AdmissionResult r = AdmitAt("research", {kCpu, 0, 1000, 8 * 1024});
  ASSERT_FALSE(r.fits);
  EXPECT_EQ(QuotaReason(r, tree_, names_), "tenant research at max for memory: 60Gi of 64Gi in use, job asks 8Gi");
}

TEST_F(AdmissionTest, ResourcesTheJobDoesNotAskForNeverBlock) {
  // The tenant is far over its CPU max, but the job asks for no CPU.
  Upsert("research", {}, {{"cpu", "1"}});
  Use("research", {kCpu, 0, 5000, 0}, false);
  EXPECT_TRUE(AdmitAt("research", Gpus(8)).fits);
}

TEST_F(AdmissionTest, GuaranteedWhileGuaranteedUsagePlusRequestFits) {
  Upsert("research", {{"gpu/H100-80GB", "16"}});
  Use("research", Gpus(8), /*guaranteed=*/true);
  // 8 + 8 = 16 <= 16: guaranteed.
  EXPECT_EQ(AdmitAt("research", Gpus(8)).admission, AdmissionClass::kGuaranteed);
  // 8 + 9 = 17 > 16: burstable, but it still fits (no max).
  AdmissionResult r = AdmitAt("research", Gpus(9));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.admission, AdmissionClass::kBurstable);
}

TEST_F(AdmissionTest, BurstableUsageDoesNotConsumeTheGuarantee) {
  // 12 GPUs borrowed (burstable) do not count against the guarantee of 16.
  Upsert("research", {{"gpu/H100-80GB", "16"}});
  Use("research", Gpus(12), /*guaranteed=*/false);
  EXPECT_EQ(AdmitAt("research", Gpus(16)).admission, AdmissionClass::kGuaranteed);
}

TEST_F(AdmissionTest, AGuaranteeOnAnyAncestorCoversTheJobAndEveryOneMustHold) {
  // research guarantees 16, nlp sets none: nlp's jobs are covered by research's guarantee.
  Upsert("research", {{"gpu/H100-80GB", "16"}});
  Upsert("research/nlp");
  Upsert("research/vision", {{"gpu/H100-80GB", "8"}});
  EXPECT_EQ(AdmitAt("research/nlp", Gpus(16)).admission, AdmissionClass::kGuaranteed);
  // vision 8 + 8 = 16 > its own 8: burstable even though research has room.
  Use("research/vision", Gpus(8), true);
  EXPECT_EQ(AdmitAt("research/vision", Gpus(8)).admission, AdmissionClass::kBurstable);
  // research: 8 guaranteed in use; nlp asks 9: 8 + 9 = 17 > 16.
  EXPECT_EQ(AdmitAt("research/nlp", Gpus(9)).admission, AdmissionClass::kBurstable);
  EXPECT_EQ(AdmitAt("research/nlp", Gpus(8)).admission, AdmissionClass::kGuaranteed);
}

TEST_F(AdmissionTest, ATenantWithoutQuotaIsBurstable) {
  Upsert("scratch");
  AdmissionResult r = AdmitAt("scratch", Gpus(8));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.admission, AdmissionClass::kBurstable);
  EXPECT_EQ(AdmitAt("scratch", {kCpu, 0, 1000, 1024}).admission, AdmissionClass::kBurstable);
}

TEST_F(AdmissionTest, AGpuJobNeedsAGuaranteeForItsGpuModelNotJustCpu) {
  // A CPU guarantee alone does not make a GPU job guaranteed.
  Upsert("research", {{"cpu", "64"}});
  EXPECT_EQ(AdmitAt("research", {gpu_, 8 * kGpuUnit, 1000, 0}).admission, AdmissionClass::kBurstable);
  // A CPU-only job is covered by the CPU guarantee.
  EXPECT_EQ(AdmitAt("research", {kCpu, 0, 1000, 0}).admission, AdmissionClass::kGuaranteed);
}

TEST_F(AdmissionTest, AGpuJobIsBurstableWhenItsCpuExceedsACpuGuarantee) {
  // GPUs 8 <= 16 but CPU 96 > 64: every guarantee on the path must hold.
  Upsert("research", {{"gpu/H100-80GB", "16"}, {"cpu", "64"}});
  EXPECT_EQ(AdmitAt("research", {gpu_, 8 * kGpuUnit, 96000, 0}).admission, AdmissionClass::kBurstable);
  EXPECT_EQ(AdmitAt("research", {gpu_, 8 * kGpuUnit, 64000, 0}).admission, AdmissionClass::kGuaranteed);
}

TEST_F(AdmissionTest, SeesThePassesOwnTentativePlacements) {
  Upsert("research", {{"gpu/H100-80GB", "8"}}, {{"gpu/H100-80GB", "16"}});
  UsageOverlay usage(tree_);
  TenantId t = tree_.Find("research");
  usage.Add(t, Gpus(8), /*guaranteed=*/true, +1);
  EXPECT_EQ(Admit(usage, t, Gpus(8)).admission, AdmissionClass::kBurstable);  // 8 + 8 > 8
  usage.Add(t, Gpus(8), /*guaranteed=*/false, +1);
  EXPECT_FALSE(Admit(usage, t, Gpus(1)).fits);  // 16 + 1 > 16
  EXPECT_EQ(tree_.tenant(t).usage[gpu_], 0);  // the tree itself is untouched
}

// The pass's triage answers admission from the room a tenant's path leaves (one walk a tenant,
// not one a group): over random trees, quotas, usage (the tree's and a pass's overlay) and
// demands, AdmitInRoom says what Admit says whenever Admit finds the demand fits, and declines
// (for Admit to name the block) exactly when it does not, or asks another GPU model.
TEST_F(AdmissionTest, TheRoomOnAPathAnswersAsAdmitForEveryDemandThatFits) {
  std::mt19937_64 rng(7);
  const ResourceId other = names_.Intern("gpu/A100-80GB");
  const ResourceId models[2] = {gpu_, other};
  int answered = 0, declined = 0;
  for (int round = 0; round < 200; ++round) {
    QuotaTree tree;
    std::vector<TenantId> ids;
    auto pick = [&](int64_t scale) { return static_cast<int64_t>(rng() % 9) * scale; };
    for (const char* path : {"a", "a/x", "a/y", "a/x/p", "b", "b/z"}) {
      TenantSpec t;
      t.path = path;
      for (ResourceId r : {kCpu, kMemory, gpu_, other}) {
        const int64_t scale = r == kCpu ? kMilli : r == kMemory ? 1024 : kGpuUnit;
        if (rng() % 3 == 0) t.SetGuarantee(r, pick(scale));
        if (rng() % 3 == 0) t.max[r] = pick(2 * scale);
      }
      Result<TenantId> id = tree.Upsert(t, names_);
      if (id) ids.push_back(*id);
    }
    ASSERT_FALSE(ids.empty());
    auto demand = [&] {
      const ResourceId m = models[rng() % 2];
      return Demand{m, static_cast<int64_t>(rng() % 4) * kGpuUnit, static_cast<int64_t>(rng() % 5) * kMilli,
                    static_cast<int64_t>(rng() % 5) * 1024};
    };
    for (int i = 0; i < 6; ++i) tree.AddUsage(ids[rng() % ids.size()], demand(), rng() % 2, +1);
    UsageOverlay usage(tree);
    for (int i = 0; i < 2; ++i) usage.Add(ids[rng() % ids.size()], demand(), rng() % 2, +1);
    for (TenantId t : ids) {
      const PathRoom room = RoomOnPath(usage, t, models[rng() % 2]);
      for (int i = 0; i < 10; ++i) {
        const Demand d = demand();
        const AdmissionResult want = Admit(usage, t, d);
        const std::optional<AdmissionResult> got = AdmitInRoom(room, d);
        const bool same_model = d.gpu == 0 || d.gpu_resource == room.gpu_resource;
        ASSERT_EQ(got.has_value(), want.fits && same_model) << "round " << round << " tenant " << t.value();
        if (!got) {
          ++declined;
          continue;
        }
        ++answered;
        EXPECT_TRUE(got->fits);
        EXPECT_EQ(got->admission, want.admission) << "round " << round << " tenant " << t.value();
      }
    }
  }
  EXPECT_GT(answered, 1000);
  EXPECT_GT(declined, 1000);
}

}  // namespace
}  // namespace allot
