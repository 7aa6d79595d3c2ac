#include "agent/run/spawn_threads.h"

#include <system_error>

namespace allot {

SpawnThreads::~SpawnThreads() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void SpawnThreads::RunAll(std::vector<std::function<void()>> work) {
  if (work.empty()) return;
  std::unique_lock lock(mu_);
  for (auto& w : work) queue_.push_back(std::move(w));
  unfinished_ += work.size();
  // One item is the caller's; a thread for each other one, up to the cap.
  while (threads_.size() < max_threads_ && threads_.size() + 1 < queue_.size()) {
    try {
      threads_.emplace_back([this] { Loop(); });
    } catch (const std::system_error&) {
      break;
    }
  }
  wake_.notify_all();
  while (!queue_.empty()) {
    std::function<void()> item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    item();
    lock.lock();
    --unfinished_;
  }
  done_.wait(lock, [this] { return unfinished_ == 0; });
}

void SpawnThreads::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::function<void()> item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    item();
    lock.lock();
    if (--unfinished_ == 0) done_.notify_all();
  }
}

}  // namespace allot
