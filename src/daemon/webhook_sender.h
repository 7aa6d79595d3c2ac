// Delivers alerts to a webhook from a thread of its own, never on a request's path: a bounded
// queue (the oldest dropped, and counted, when full), one POST at a time in order, each retried
// with doubling back-off until delivered or out of attempts. A receiver that is down costs the
// API nothing: Enqueue only takes a lock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace allot {

// "http[s]://host[:port][/path]" split up.
struct WebhookUrl {
  std::string origin;  // "https://host:port", what the client connects to
  std::string path;    // "/hooks/allot"; "/" when none
};
// Errors name `field` ("--alert-webhook", "alert_webhook"), the value and the expected form.
Result<WebhookUrl> ParseWebhookUrl(const std::string& url, const std::string& field);

struct WebhookOptions {
  size_t queue = 1000;                                  // alerts waiting at most
  int attempts = 6;                                     // tries per alert before it is dropped
  std::chrono::milliseconds first_backoff{1000};        // then doubled, …
  std::chrono::milliseconds max_backoff{60'000};        // … up to this
  std::chrono::milliseconds timeout{5000};              // connect, read and write, each
  std::string ca_cert;  // https: a PEM file of the CAs to trust; empty: the system's (OpenSSL's default paths)
  std::function<void(const std::string&)> log;          // a delivery given up, a full queue
};

class WebhookSender {
 public:
  WebhookSender(WebhookUrl url, WebhookOptions options);
  ~WebhookSender();
  void Start();
  // Gives up what is still queued (counted as dropped). Idempotent.
  void Stop();
  // Queues one JSON body.
  void Enqueue(std::string body);

  uint64_t delivered() const { return delivered_; }
  uint64_t failed_attempts() const { return failed_; }  // POSTs refused, not answered 2xx, or unreachable
  uint64_t dropped() const { return dropped_; }         // alerts given up (attempts spent, queue full, stopping)

 private:
  void Run();
  // One POST; true on a 2xx answer.
  bool Post(const std::string& body, std::string& why);

  WebhookUrl url_;
  WebhookOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool stopping_ = false;
  std::atomic<uint64_t> delivered_{0}, failed_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace allot
