// IdSet and ChunkedSet stand in for std::set in the state's job indexes: every operation must
// answer as std::set does, and a walk must visit the same elements in the same order.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/chunked_set.h"
#include "core/id_set.h"
#include "core/ids.h"

namespace allot {
namespace {

TEST(IdSetTest, AgreesWithStdSetThroughInsertsErasesAndWalksOverSparseAndDenseIds) {
  std::mt19937 rng(7);
  for (uint32_t range : {10u, 700u, 100000u}) {
    IdSet<JobId> ids;
    std::set<JobId> want;
    for (int i = 0; i < 30000; ++i) {
      JobId id(static_cast<uint32_t>(rng() % range));
      if (rng() % 3 == 0) {
        ASSERT_EQ(ids.erase(id), want.erase(id)) << id.value();
      } else {
        ASSERT_EQ(ids.insert(id), want.insert(id).second) << id.value();
      }
      ASSERT_EQ(ids.size(), want.size());
      ASSERT_EQ(ids.count(id), want.count(id));
      if (i % 997 == 0) {
        ASSERT_EQ(std::vector<JobId>(ids.begin(), ids.end()), std::vector<JobId>(want.begin(), want.end()));
      }
    }
    EXPECT_EQ(std::vector<JobId>(ids.begin(), ids.end()), std::vector<JobId>(want.begin(), want.end()));
    EXPECT_EQ(ids.empty(), want.empty());
  }
}

TEST(IdSetTest, AWalkSkipsLongEmptyStretchesAndEqualityIgnoresHowFarStorageReaches) {
  IdSet<JobId> a;
  for (uint32_t v : {0u, 63u, 64u, 4095u, 4096u, 262143u, 262144u, 900000u}) a.insert(JobId(v));
  std::vector<uint32_t> seen;
  for (JobId id : a) seen.push_back(id.value());
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 63, 64, 4095, 4096, 262143, 262144, 900000}));
  IdSet<JobId> b;
  for (uint32_t v : {0u, 63u, 64u, 4095u, 4096u, 262143u, 262144u}) b.insert(JobId(v));
  EXPECT_FALSE(a == b);
  b.insert(JobId(900000));
  EXPECT_TRUE(a == b);
  a.insert(JobId(2000000));
  a.erase(JobId(2000000));  // storage reaches further; the ids are the same
  EXPECT_TRUE(a == b);
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.begin(), a.end());
}

TEST(ChunkedSetTest, AgreesWithStdSetThroughSplitsAndEmptiedChunks) {
  std::mt19937 rng(11);
  using E = std::pair<int64_t, JobId>;
  ChunkedSet<E> chunked;
  std::set<E> want;
  for (int i = 0; i < 60000; ++i) {
    // Phases of mostly inserts, then mostly erases, so chunks split and then empty out.
    const bool erase_phase = (i / 15000) % 2 == 1;
    E e{static_cast<int64_t>(rng() % 4000), JobId(static_cast<uint32_t>(rng() % 8))};
    if (erase_phase ? rng() % 5 != 0 : rng() % 5 == 0) {
      if (erase_phase && !want.empty() && rng() % 2 == 0) e = *want.begin();  // the front, as exits do
      ASSERT_EQ(chunked.erase(e), want.erase(e));
    } else {
      ASSERT_EQ(chunked.insert(e), want.insert(e).second);
    }
    ASSERT_EQ(chunked.size(), want.size());
    ASSERT_EQ(chunked.count(e), want.count(e));
    if (i % 1499 == 0) {
      ASSERT_TRUE(std::equal(chunked.begin(), chunked.end(), want.begin(), want.end()));
    }
  }
  EXPECT_TRUE(std::equal(chunked.begin(), chunked.end(), want.begin(), want.end()));
  ChunkedSet<E> copy;
  for (auto it = want.rbegin(); it != want.rend(); ++it) copy.insert(*it);  // chunked otherwise
  EXPECT_TRUE(copy == chunked);
  for (const E& e : want) chunked.erase(e);
  EXPECT_TRUE(chunked.empty());
  EXPECT_EQ(chunked.begin(), chunked.end());
}

}  // namespace
}  // namespace allot
