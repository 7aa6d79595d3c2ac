// GET /v1/tenants/PATH/explain and its sentences ("why is my share X"): the dominant resource,
// the order the fair queue serves a level in, borrowing attributed to idle guarantees, lending,
// reclaim's order, and what a member may see of tenants outside its scope.
#include <gtest/gtest.h>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class TenantExplainTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();  // two nodes of 8 × H100-80GB: 16 GPUs
    Upsert("org", 12);
    Upsert("org/a", 8);
    Upsert("org/b", 4);
    Upsert("other", -1);
    alice_ = Token("alice", Role::kMember, "org/a");
  }
  void Upsert(const std::string& path, int64_t guarantee_gpus) {
    TenantSpec t;
    t.path = path;
    if (guarantee_gpus >= 0) t.SetGuarantee(2, guarantee_gpus * kGpuUnit);  // gpu/H100-80GB is resource 2
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{t}).has_value());
  }
  void Run(const std::string& name, const std::string& tenant, int gpus = 1) {
    auto [status, job] = Post("/v1/jobs", JobBody(name, tenant, "{\"gpus\": " + std::to_string(gpus) + "}"));
    ASSERT_EQ(status, 201) << job;
    ASSERT_EQ(job["state"], "running") << job;
  }
  static std::string Joined(const Json& summary) {
    std::string out;
    for (const Json& s : summary) out += s.get<std::string>() + "\n";
    return out;
  }
  std::string alice_;
};

TEST_F(TenantExplainTest, SaysWhichResourceIsDominantWhatIsBorrowedFromWhomAndWhatReclaimTakesFirst) {
  for (int i = 0; i < 10; ++i) Run("a" + std::to_string(i), "org/a");
  auto [status, e] = Get("/v1/tenants/org/a/explain");
  ASSERT_EQ(status, 200) << e;
  EXPECT_EQ(e["tenant"], "org/a");
  EXPECT_EQ(e["dominant_resource"], "gpu/H100-80GB");
  EXPECT_EQ(e["dominant_share"], "0.625") << "10 of 16 GPUs";
  EXPECT_EQ(e["usage"]["gpu/H100-80GB"], "10");
  EXPECT_EQ(e["guarantee"]["gpu/H100-80GB"], "8");
  // 8 run within the guarantee; the other 2 are borrowed, read as org/b's idle guarantee of 4.
  ASSERT_EQ(e["borrowed"].size(), 1u) << e["borrowed"];
  EXPECT_EQ(e["borrowed"][0]["resource"], "gpu/H100-80GB");
  EXPECT_EQ(e["borrowed"][0]["amount"], "2");
  ASSERT_EQ(e["borrowed"][0]["from"].size(), 1u);
  EXPECT_EQ(e["borrowed"][0]["from"][0]["tenant"], "org/b");
  EXPECT_EQ(e["borrowed"][0]["from"][0]["amount"], "2");
  // Its level: org/b (nothing held) is served before it.
  ASSERT_EQ(e["siblings"].size(), 2u);
  EXPECT_EQ(e["siblings"][0]["tenant"], "org/b");
  EXPECT_EQ(e["siblings"][0]["dominant_share"], "0");
  EXPECT_EQ(e["siblings"][1]["tenant"], "org/a");
  EXPECT_TRUE(e["siblings"][1]["self"].get<bool>());
  // Its two burstable jobs are the first two reclaim takes, newest start first on a tie.
  ASSERT_EQ(e["reclaim_first"].size(), 2u) << e["reclaim_first"];
  EXPECT_EQ(e["reclaim_first"][0]["rank"], 1);
  EXPECT_EQ(e["reclaim_first"][0]["of"], 2);
  EXPECT_EQ(e["reclaim_first"][0]["class"], "burstable");
  std::string summary = Joined(e["summary"]);
  EXPECT_NE(summary.find("org/a's dominant resource is gpu/H100-80GB: it holds 10 of the fleet's 16, a dominant share of 0.625."),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("its burstable jobs (reclaimable) hold 2, 2 of it beyond its guarantee: 2 from the idle guarantee of org/b"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("comes 2nd of 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("reclaim takes org/a's job"), std::string::npos) << summary;

  // org/b's side: 4 guaranteed and idle, of which org/a borrows 2.
  auto [sb, b] = Get("/v1/tenants/org/b/explain");
  ASSERT_EQ(sb, 200) << b;
  ASSERT_EQ(b["lent"].size(), 1u) << b;
  EXPECT_EQ(b["lent"][0]["to"][0]["tenant"], "org/a");
  EXPECT_EQ(b["lent"][0]["to"][0]["amount"], "2");
  EXPECT_TRUE(b["dominant_resource"].is_null());
  std::string b_summary = Joined(b["summary"]);
  EXPECT_NE(b_summary.find("org/b holds nothing now"), std::string::npos) << b_summary;
  EXPECT_NE(b_summary.find("4 of its guarantee lies idle, and others borrow it (org/a 2)"), std::string::npos) << b_summary;
  EXPECT_EQ(b_summary.find("reclaim"), b_summary.find("reclaim gives it back")) << "nothing of org/b's to reclaim";
}

TEST_F(TenantExplainTest, BeyondEveryIdleGuaranteeItBorrowsCapacityNoTenantIsGuaranteed) {
  // The fleet's 16 GPUs less org's 12: 4 no one is guaranteed. other (no guarantee) holds 6,
  // which org's idle guarantee of 12 covers: org is other's one sibling.
  for (int i = 0; i < 6; ++i) Run("o" + std::to_string(i), "other");
  Json e = Get("/v1/tenants/other/explain").second;
  ASSERT_EQ(e["borrowed"].size(), 1u) << e;
  EXPECT_EQ(e["borrowed"][0]["amount"], "6");
  ASSERT_EQ(e["borrowed"][0]["from"].size(), 1u) << e["borrowed"];
  EXPECT_EQ(e["borrowed"][0]["from"][0]["tenant"], "org") << "org's idle guarantee of 12 covers all 6";
  // Fill org to its guarantee: what other holds now comes from capacity no one is guaranteed.
  for (int i = 0; i < 8; ++i) Run("a" + std::to_string(i), "org/a");
  for (int i = 0; i < 2; ++i) Run("b" + std::to_string(i), "org/b");
  e = Get("/v1/tenants/other/explain").second;
  ASSERT_EQ(e["borrowed"][0]["from"].size(), 2u) << e["borrowed"];
  EXPECT_EQ(e["borrowed"][0]["from"][0]["tenant"], "org");
  EXPECT_EQ(e["borrowed"][0]["from"][0]["amount"], "2");
  EXPECT_TRUE(e["borrowed"][0]["from"][1]["tenant"].is_null());
  EXPECT_TRUE(e["borrowed"][0]["from"][1]["unguaranteed"].get<bool>());
  EXPECT_EQ(e["borrowed"][0]["from"][1]["amount"], "4");
  EXPECT_NE(Joined(e["summary"]).find("4 from capacity no other tenant is guaranteed"), std::string::npos) << e["summary"];
}

TEST_F(TenantExplainTest, AMemberSeesItsOwnTenantAndNotTheOthersPaths) {
  for (int i = 0; i < 10; ++i) Run("a" + std::to_string(i), "org/a");
  auto [s, e] = Call("GET", "/v1/tenants/org/a/explain", alice_);
  ASSERT_EQ(s, 200) << e;
  // org/b is outside alice's scope: its share is shown, its path is not.
  ASSERT_EQ(e["siblings"].size(), 2u);
  EXPECT_TRUE(e["siblings"][0]["tenant"].is_null()) << e["siblings"];
  EXPECT_TRUE(e["borrowed"][0]["from"][0]["tenant"].is_null()) << e["borrowed"];
  std::string summary = Joined(e["summary"]);
  EXPECT_EQ(summary.find("org/b"), std::string::npos) << summary;
  EXPECT_NE(summary.find("from the idle guarantee of a tenant you cannot see"), std::string::npos) << summary;
  // A tenant outside its scope does not exist for it; neither does an unknown one.
  auto [sb, b] = Call("GET", "/v1/tenants/org/b/explain", alice_);
  EXPECT_EQ(sb, 404) << b;
  auto [su, u] = Get("/v1/tenants/nowhere/explain");
  EXPECT_EQ(su, 404);
  EXPECT_NE(u["error"].dump().find("tenant 'nowhere' does not exist"), std::string::npos) << u;
}

}  // namespace
}  // namespace allot
