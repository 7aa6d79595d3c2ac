#include "core/flat_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace allot {
namespace {

// A hash that keeps only high bits: the map must spread it itself.
struct HighBitsHash {
  size_t operator()(uint32_t k) const { return size_t{k} << 40; }
};

TEST(FlatMapTest, AgreesWithUnorderedMapThroughGrowthEvenWithAWeakHash) {
  FlatMap<uint32_t, int, HighBitsHash> flat;
  std::unordered_map<uint32_t, int> want;
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    uint32_t k = rng() % 5000;
    auto [v, added] = flat.TryEmplace(k, i);
    auto [it, inserted] = want.try_emplace(k, i);
    ASSERT_EQ(added, inserted) << k;
    ASSERT_EQ(*v, it->second) << k;
    *v += 1;
    it->second += 1;
  }
  EXPECT_EQ(flat.size(), want.size());
  for (uint32_t k = 0; k < 6000; ++k) {
    const int* v = flat.Find(k);
    auto it = want.find(k);
    ASSERT_EQ(v != nullptr, it != want.end()) << k;
    if (v) {
      EXPECT_EQ(*v, it->second) << k;
    }
  }
}

TEST(FlatMapTest, ReserveKeepsWhatIsThereAndAnEmptyMapFindsNothing) {
  FlatMap<uint32_t, int, std::hash<uint32_t>> flat;
  EXPECT_FALSE(flat.Contains(7));
  flat.TryEmplace(7, 70);
  flat.Reserve(1000);
  ASSERT_NE(flat.Find(7), nullptr);
  EXPECT_EQ(*flat.Find(7), 70);
  EXPECT_FALSE(flat.TryEmplace(7, 1).second);
  EXPECT_EQ(flat.size(), 1u);
}

}  // namespace
}  // namespace allot
