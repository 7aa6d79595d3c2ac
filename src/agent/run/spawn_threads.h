// Threads that clone tasks' children alongside the calling thread, so that a batch of children
// waits out the kernel's cgroup-join delay together rather than one after another (runner.cc,
// StartAll). They live as long as this object: a child started with bwrap's --die-with-parent
// dies when the *thread* that cloned it exits, so a thread made for one batch and ended after it
// would kill that batch's tasks.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace allot {

class SpawnThreads {
 public:
  // At most `max_threads` threads besides the caller's, made when first needed.
  explicit SpawnThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~SpawnThreads();
  SpawnThreads(const SpawnThreads&) = delete;
  SpawnThreads& operator=(const SpawnThreads&) = delete;

  // Runs every item, the calling thread taking its share, and returns when all have run. Where
  // no thread can be made, the caller runs them all.
  void RunAll(std::vector<std::function<void()>> work);

 private:
  void Loop();

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable wake_;  // work queued, or stopping
  std::condition_variable done_;  // an item finished
  std::deque<std::function<void()>> queue_;
  size_t unfinished_ = 0;  // queued or running
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace allot
