// SpawnThreads: a batch's items run together (one on the caller's thread, the others on kept
// threads), each once, and the threads stay for the next batch.
#include "agent/run/spawn_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace allot {
namespace {

// Four items that each wait until all four have started: they finish only when they run at the
// same time (on a pool of at least three threads besides the caller's).
TEST(SpawnThreadsTest, RunsABatchTogetherEachItemOnceOnThreadsThatStay) {
  SpawnThreads pool(3);
  std::set<std::thread::id> first_threads;
  for (int batch = 0; batch < 2; ++batch) {
    std::atomic<int> started = 0;
    std::atomic<int> together = 0;
    std::mutex mu;
    std::set<std::thread::id> threads;
    std::vector<int> runs(4, 0);
    std::vector<std::function<void()>> work;
    for (int i = 0; i < 4; ++i) {
      work.push_back([&, i] {
        ++runs[i];
        {
          std::lock_guard lock(mu);
          threads.insert(std::this_thread::get_id());
        }
        ++started;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        if (started == 4) ++together;
      });
    }
    pool.RunAll(std::move(work));
    EXPECT_EQ(runs, std::vector<int>(4, 1));
    EXPECT_EQ(together, 4) << "the batch's items did not run at the same time";
    EXPECT_EQ(threads.size(), 4u);
    EXPECT_TRUE(threads.count(std::this_thread::get_id())) << "the caller takes its share";
    threads.erase(std::this_thread::get_id());
    if (batch == 0) first_threads = threads;
    else EXPECT_EQ(threads, first_threads) << "the second batch ran on new threads";
  }
}

TEST(SpawnThreadsTest, WithoutThreadsTheCallerRunsEverything) {
  SpawnThreads pool(0);
  int runs = 0;
  std::set<std::thread::id> threads;
  std::vector<std::function<void()>> work;
  for (int i = 0; i < 5; ++i) work.push_back([&] { ++runs, threads.insert(std::this_thread::get_id()); });
  pool.RunAll(std::move(work));
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  pool.RunAll({});  // nothing to do: returns at once
}

}  // namespace
}  // namespace allot
