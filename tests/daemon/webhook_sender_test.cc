// The webhook sender against a real HTTP receiver on loopback: delivers in order, retries a
// receiver that fails or is down with back-off, gives up after its attempts, drops the oldest
// when its queue is full; and the URL is checked naming the field, the value and the form.
#include "daemon/webhook_sender.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "testing/free_port.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using namespace std::chrono_literals;

// A receiver answering each POST with the next status of `statuses` (then 200), keeping bodies.
class Receiver {
 public:
  explicit Receiver(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      int status = calls_ < statuses_.size() ? statuses_[calls_] : 200;
      ++calls_;
      if (status == 200) bodies_.push_back(req.body);
      res.status = status;
    });
    port_ = testing::FreeListenPort();
    thread_ = std::thread([this] { server_.listen("127.0.0.1", port_); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  WebhookUrl Url() const { return *ParseWebhookUrl("http://127.0.0.1:" + std::to_string(port_) + "/hook", "test"); }
  std::vector<std::string> Bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  size_t Calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<int> statuses_;
  size_t calls_ = 0;
  std::vector<std::string> bodies_;
};

WebhookOptions Fast() {
  WebhookOptions o;
  o.first_backoff = 20ms;
  o.max_backoff = 80ms;
  o.timeout = 1000ms;
  return o;
}

template <class F>
bool Eventually(F done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(WebhookUrl, AcceptsHttpUrlsAndRefusesOthersNamingFieldValueAndForm) {
  auto u = ParseWebhookUrl("http://alerts.example:9000/hooks/allot", "--alert-webhook");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->origin, "http://alerts.example:9000");
  EXPECT_EQ(u->path, "/hooks/allot");
  EXPECT_EQ(ParseWebhookUrl("http://10.0.0.5", "f")->path, "/");
  EXPECT_EQ(ParseWebhookUrl("https://hooks.example/x", "f")->origin, "https://hooks.example");
  for (const char* bad : {"alerts.example/hook", "ftp://x/y", "http://", "https://", "http://user:pw@x/", "http://x:99999/",
                          "http://x:ab/", "http://a b/"}) {
    auto r = ParseWebhookUrl(bad, "--alert-webhook");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message().rfind("--alert-webhook: '" + std::string(bad) + "' ", 0), 0u) << r.error().message();
    EXPECT_NE(r.error().message().find("expected http[s]://HOST[:PORT][/PATH]"), std::string::npos) << r.error().message();
  }
}

TEST(WebhookSender, DeliversEachBodyInOrder) {
  Receiver rx;
  WebhookSender s(rx.Url(), Fast());
  s.Start();
  s.Enqueue(R"({"n":1})");
  s.Enqueue(R"({"n":2})");
  ASSERT_TRUE(Eventually([&] { return s.delivered() == 2; }));
  EXPECT_EQ(rx.Bodies(), (std::vector<std::string>{R"({"n":1})", R"({"n":2})"}));
  EXPECT_EQ(s.failed_attempts(), 0u);
}

TEST(WebhookSender, RetriesAFailingReceiverUntilItAccepts) {
  Receiver rx({500, 503});
  WebhookSender s(rx.Url(), Fast());
  s.Start();
  s.Enqueue("a");
  ASSERT_TRUE(Eventually([&] { return s.delivered() == 1; }));
  EXPECT_EQ(rx.Calls(), 3u);
  EXPECT_EQ(s.failed_attempts(), 2u);
  EXPECT_EQ(rx.Bodies(), std::vector<std::string>{"a"});
}

TEST(WebhookSender, GivesUpAfterItsAttemptsAndGoesOnWithTheNext) {
  Receiver rx({500, 500, 500});
  WebhookOptions o = Fast();
  o.attempts = 3;
  WebhookSender s(rx.Url(), o);
  s.Start();
  s.Enqueue("lost");
  s.Enqueue("next");
  ASSERT_TRUE(Eventually([&] { return s.delivered() == 1; }));
  EXPECT_EQ(s.dropped(), 1u);
  EXPECT_EQ(s.failed_attempts(), 3u);
  EXPECT_EQ(rx.Bodies(), std::vector<std::string>{"next"});
}

TEST(WebhookSender, AReceiverThatIsDownCostsEnqueueNothingAndIsRetriedWhenItComesUp) {
  const int port = testing::FreeListenPort();
  WebhookOptions o = Fast();
  o.attempts = 1000;
  WebhookSender s(*ParseWebhookUrl("http://127.0.0.1:" + std::to_string(port) + "/hook", "test"), o);
  s.Start();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) s.Enqueue("x" + std::to_string(i));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 50ms) << "Enqueue takes a lock, no I/O";
  ASSERT_TRUE(Eventually([&] { return s.failed_attempts() >= 3; }));
  EXPECT_EQ(s.delivered(), 0u);
  // Now a receiver on that port: what waited is delivered, the first first.
  httplib::Server server;
  std::mutex mu;
  std::vector<std::string> got;
  server.Post("/hook", [&](const httplib::Request& req, httplib::Response&) {
    std::lock_guard lock(mu);
    got.push_back(req.body);
  });
  std::thread t([&] { server.listen("127.0.0.1", port); });
  for (int i = 0; i < 5000 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool all = Eventually([&] { return s.delivered() == 100; });
  server.stop();
  t.join();
  ASSERT_TRUE(all) << s.delivered();
  EXPECT_EQ(got.front(), "x0");
  EXPECT_EQ(got.back(), "x99");
}

// An https receiver with a certificate of its own: delivered when its CA is given, refused (never
// delivered) when nobody vouches for it.
TEST(WebhookSender, PostsOverHttpsCheckingTheReceiversCertificate) {
  testing::ScratchDir dir{"webhook-tls"};
  const std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " + cert +
                    " -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl";
  httplib::SSLServer server(cert.c_str(), key.c_str());
  std::atomic<int> got{0};
  server.Post("/hook", [&](const httplib::Request&, httplib::Response&) { ++got; });
  const int port = testing::FreeListenPort();
  std::thread t([&] { server.listen("127.0.0.1", port); });
  for (int i = 0; i < 5000 && !server.is_running(); ++i) std::this_thread::sleep_for(1ms);
  WebhookUrl url = *ParseWebhookUrl("https://127.0.0.1:" + std::to_string(port) + "/hook", "test");
  WebhookOptions trusting = Fast();
  trusting.ca_cert = cert;
  WebhookSender good(url, trusting);
  good.Start();
  good.Enqueue("{}");
  bool delivered = Eventually([&] { return good.delivered() == 1; });
  WebhookOptions o = Fast();
  o.attempts = 2;
  WebhookSender untrusting(url, o);
  untrusting.Start();
  untrusting.Enqueue("{}");
  bool refused = Eventually([&] { return untrusting.dropped() == 1; });
  good.Stop();
  untrusting.Stop();
  server.stop();
  t.join();
  EXPECT_TRUE(delivered);
  EXPECT_TRUE(refused);
  EXPECT_EQ(untrusting.delivered(), 0u);
  EXPECT_EQ(got, 1);
}

TEST(WebhookSender, AFullQueueDropsTheOldest) {
  WebhookOptions o = Fast();
  o.queue = 3;
  WebhookSender s(*ParseWebhookUrl("http://127.0.0.1:1/hook", "test"), o);  // not started: nothing is sent
  for (int i = 0; i < 5; ++i) s.Enqueue(std::to_string(i));
  EXPECT_EQ(s.dropped(), 2u);
}

}  // namespace
}  // namespace allot
