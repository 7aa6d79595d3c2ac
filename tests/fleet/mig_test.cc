// MIG placement rules, checked against a brute-force oracle written from NVML-MIG.md §4 alone.
#include "fleet/mig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "testing/mig_oracle.h"

namespace allot {
namespace {

using testing::kA30Oracle;
using testing::kH100Oracle;
using testing::Named;
using testing::Oracle;

// Every layout reachable by creating instances where CanCreateMig allows, each checked against
// the oracle, and for each of them every (profile, start) decision compared with the oracle.
void CheckEveryReachableLayout(const char* model, const Oracle& oracle, size_t* layouts_seen) {
  const MigGeometry* g = FindMigGeometry(model);
  ASSERT_NE(g, nullptr) << model;
  std::set<MigLayout> seen;
  std::vector<MigLayout> todo = {{}};
  auto canonical = [](MigLayout l) {
    std::sort(l.begin(), l.end(), [](const MigInstance& a, const MigInstance& b) {
      return a.start != b.start ? a.start < b.start : a.profile < b.profile;
    });
    return l;
  };
  while (!todo.empty()) {
    MigLayout l = todo.back();
    todo.pop_back();
    if (!seen.insert(canonical(l)).second) continue;
    ASSERT_TRUE(oracle.Valid(Named(*g, l))) << model;
    ASSERT_TRUE(ValidateMigLayout(*g, l).ok()) << model;
    for (int p = 0; p < static_cast<int>(g->profiles.size()); ++p) {
      for (int s = 0; s < g->memory_slices + 1; ++s) {
        auto named = Named(*g, l);
        named.push_back({std::string(g->profiles[p].name), s});
        bool ours = CanCreateMig(*g, l, p, s);
        ASSERT_EQ(ours, oracle.Valid(named)) << model << " " << g->profiles[p].name << " @" << s << " beside "
                                              << l.size() << " instances";
        if (ours) {
          MigLayout next = l;
          next.push_back({static_cast<uint8_t>(p), static_cast<uint8_t>(s)});
          todo.push_back(next);
        }
      }
    }
  }
  *layouts_seen = seen.size();
}

TEST(MigTest, EveryReachableLayoutAgreesWithTheBruteForceOracle) {
  size_t h100 = 0, a30 = 0;
  CheckEveryReachableLayout("H100-80GB", kH100Oracle, &h100);
  CheckEveryReachableLayout("A30-24GB", kA30Oracle, &a30);
  EXPECT_GT(h100, 100u) << "the search covered the layout space";
  EXPECT_GT(a30, 10u);
}

TEST(MigTest, KnownLayoutsFromTheMigGuide) {
  const MigGeometry& g = *FindMigGeometry("A100-80GB");
  auto layout = [&](std::vector<std::string> names) { return LayoutFromNames(g, names); };
  // The issue's example: 1g ×2, 2g, 3g → slices 0, 1, 2–3, 4–7.
  auto a = layout({"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"});
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ(Named(g, *a), (std::vector<std::pair<std::string, int>>{{"3g.40gb", 4}, {"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}}));
  EXPECT_EQ(MigMemoryMask(g, *a), 0xFFu);
  EXPECT_TRUE(layout({"4g.40gb", "3g.40gb"}).has_value()) << "4 + 3 = 7 compute slices";
  EXPECT_TRUE(layout({"3g.40gb", "3g.40gb"}).has_value()) << "6 compute slices on all 8 memory slices";
  EXPECT_TRUE(layout({"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}).has_value());
  EXPECT_TRUE(layout(std::vector<std::string>(7, "1g.10gb")).has_value());
  EXPECT_FALSE(layout(std::vector<std::string>(8, "1g.10gb")).has_value()) << "at most 7";
  EXPECT_FALSE(layout({"4g.40gb", "4g.40gb"}).has_value());
  EXPECT_FALSE(layout({"1g.10gb+me", "1g.10gb+me"}).has_value()) << "one +me per GPU";
  // 4g only at 0; beside it 2g @4 and 1g @6.
  MigLayout four = {{static_cast<uint8_t>(g.Find("4g.40gb")), 0}};
  EXPECT_EQ(FreeMigStarts(g, four, g.Find("2g.20gb")), (std::vector<int>{4}));
  EXPECT_EQ(FreeMigStarts(g, four, g.Find("1g.10gb")), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(FreeMigStarts(g, four, g.Find("3g.40gb")), (std::vector<int>{4})) << "4 + 3 = 7 compute slices";
  MigLayout four_three = {four[0], {static_cast<uint8_t>(g.Find("3g.40gb")), 4}};
  EXPECT_EQ(FreeMigStarts(g, four_three, g.Find("1g.10gb")), (std::vector<int>{})) << "all 7 compute slices used";
}

TEST(MigTest, RefusalsNameTheProfileAndWhatWasExpected) {
  const MigGeometry& g = *FindMigGeometry("H100-80GB");
  auto bad = LayoutFromNames(g, {"1g.10gb", "9g.99gb"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("MIG profile '9g.99gb' does not exist on H100-80GB; expected one of 1g.10gb"),
            std::string::npos);
  auto full = LayoutFromNames(g, {"7g.80gb", "1g.10gb"});
  ASSERT_FALSE(full.has_value());
  EXPECT_NE(full.error().message().find("does not fit one H100-80GB"), std::string::npos);
  EXPECT_EQ(FindMigGeometry("L40S"), nullptr);
  for (const char* m : {"A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200", "A30-24GB"}) {
    EXPECT_NE(FindMigGeometry(m), nullptr) << m;
  }
}

}  // namespace
}  // namespace allot
