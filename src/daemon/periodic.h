// A thread that calls a function every period until stopped: the daemon's supervisors (lost
// nodes, acceptance of booked nodes) look at the state this way. Stop wakes it at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace allot {

class Periodic {
 public:
  Periodic() = default;
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;
  ~Periodic() { Stop(); }

  // Calls `tick` every `period` (the first after one period) on a thread of its own.
  void Start(std::chrono::milliseconds period, std::function<void()> tick) {
    thread_ = std::thread([this, period, tick = std::move(tick)] {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
        lock.unlock();
        tick();
        lock.lock();
      }
    });
  }
  // Waits for a tick in progress; safe to call twice and before Start.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace allot
