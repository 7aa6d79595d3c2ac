// Tenants' uids: the lowest free uid of the range, recorded before use so the same tenant gets the
// same uid after a restart; a full range and a damaged file are refused.
#include "agent/run/tenant_uids.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/run/sys_files.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

TEST(TenantUidsTest, EachTenantGetsItsOwnUidAndKeepsItAcrossRestarts) {
  ScratchDir dir("uids");
  const std::string file = (dir / "uids").string();
  {
    auto uids = TenantUids::Load(file, {200000, 10});
    ASSERT_TRUE(uids) << uids.error().ToString();
    EXPECT_EQ(*uids->UidFor("research/nlp"), 200000u);
    EXPECT_EQ(*uids->UidFor("research/vision"), 200001u);
    EXPECT_EQ(*uids->UidFor("research/nlp"), 200000u);
  }
  EXPECT_EQ(*ReadText(file), "200000 research/nlp\n200001 research/vision\n");
  auto again = TenantUids::Load(file, {200000, 10});
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(*again->UidFor("research/vision"), 200001u);
  EXPECT_EQ(*again->UidFor("prod/serving"), 200002u);
}

TEST(TenantUidsTest, ANewTenantTakesTheLowestFreeUid) {
  ScratchDir dir("uids");
  const std::string file = (dir / "uids").string();
  ASSERT_TRUE(WriteText(file, "200000 a\n200002 c\n").ok());
  auto uids = TenantUids::Load(file, {200000, 10});
  ASSERT_TRUE(uids) << uids.error().ToString();
  EXPECT_EQ(*uids->UidFor("b"), 200001u);
  EXPECT_EQ(*uids->UidFor("d"), 200003u);
}

TEST(TenantUidsTest, RefusesANewTenantWhenTheRangeIsFull) {
  ScratchDir dir("uids");
  auto uids = TenantUids::Load((dir / "uids").string(), {300000, 2});
  ASSERT_TRUE(uids);
  ASSERT_TRUE(uids->UidFor("a"));
  ASSERT_TRUE(uids->UidFor("b"));
  auto full = uids->UidFor("c");
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code(), Code::kResourceExhausted);
}

TEST(TenantUidsTest, RefusesAFileWithADuplicateOrOutOfRangeUidNamingTheLine) {
  ScratchDir dir("uids");
  const std::string file = (dir / "uids").string();
  for (auto [text, expect] : {std::pair{"200000 a\n200000 b\n", ":2: uid 200000"},
                              {"100 a\n", "outside 200000..200009"},
                              {"x a\n", "is not a number"},
                              {"200000\n", "expected '<uid> <tenant>'"}}) {
    ASSERT_TRUE(WriteText(file, text).ok());
    auto uids = TenantUids::Load(file, {200000, 10});
    ASSERT_FALSE(uids) << text;
    EXPECT_THAT(uids.error().message(), HasSubstr(expect));
  }
}

}  // namespace
}  // namespace allot
