// allotd's HTTP server: event-driven (Boost.Asio and Beast), so that an idle keep-alive
// connection, a client sending its request a byte at a time, or a long poll waiting for news
// holds a socket and a few kilobytes, never a thread.
//
//   I/O threads (2)      accept, TLS handshakes, read requests under deadlines, write answers
//   worker threads       run the route handlers (which may wait on the journal's commit)
//   the poll driver      one thread: re-runs parked long polls when the state changes or their
//                        deadline comes, and answers them
//
// What a client may hold, and for how long:
//   - a connection's request head must arrive within header_timeout of its first byte, its body
//     within body_timeout; an idle keep-alive connection is closed after idle_timeout;
//   - at most max_connections at once: one more is answered 503 with Retry-After and closed;
//   - at most max_long_polls_per_owner parked long polls per owner (a token, or a token and a
//     node for the agents' assignment polls): one more is answered 429 with Retry-After;
//   - a body over max_body_bytes is answered 413 before it is read; a head over 16 KiB, 431.
// A long poll whose client closes its connection is dropped at once.
//
// A route may answer on the I/O thread instead (HttpRouter::PostInline) when its common case
// waits on nothing: the agents' heartbeat.
//
// Routes keep cpp-httplib's request and response types (the API's handlers and their tests use
// them) and its routing rule: an ECMAScript regex matched against the whole decoded path, the
// first registered match wins, `matches` holding its groups.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

// A request parked until it has an answer: `poll` fills the response and returns true when it
// has one; it is called at once, again after every change, and with last = true at the
// deadline, when it must answer.
// What re-runs it after a change: every change when `topic` is empty; otherwise only a change
// whose topics (HttpServerOptions::changed_topics) name it, or one that cannot say what it
// touched. While `poll` sets *every_change (its last answer also follows the clock, say) it is
// re-run after every change, whatever its topic.
struct LongPoll {
  std::string owner;  // who it counts against (a token); empty: nobody's cap
  std::chrono::steady_clock::time_point deadline;
  std::function<bool(httplib::Response&, bool last)> poll;
  std::string topic;
  std::shared_ptr<std::atomic<bool>> every_change;  // may be null: never
};

class HttpRouter {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  // Answers at once (nullopt, the response filled) or parks the request as a long poll.
  using LongPollHandler = std::function<std::optional<LongPoll>(const httplib::Request&, httplib::Response&)>;

  void Get(const std::string& pattern, Handler h) { Add("GET", pattern, std::move(h), {}); }
  void Post(const std::string& pattern, Handler h) { Add("POST", pattern, std::move(h), {}); }
  void Delete(const std::string& pattern, Handler h) { Add("DELETE", pattern, std::move(h), {}); }
  void Patch(const std::string& pattern, Handler h) { Add("PATCH", pattern, std::move(h), {}); }
  void GetLongPoll(const std::string& pattern, LongPollHandler h) { Add("GET", pattern, {}, std::move(h)); }
  // A route whose common case is answered on the connection's I/O thread, with no hand-off to a
  // worker and back (the agents' heartbeats: thousands a second, each a wake-up and two context
  // switches more): `h` answers and returns an empty Handler, or returns the Handler a worker
  // runs in its place (the response `h` was given is then dropped). `h` must not wait on the
  // journal, nor on anything but locks held briefly: while it runs, its I/O thread serves no one.
  using InlineHandler = std::function<Handler(const httplib::Request&, httplib::Response&)>;
  void PostInline(const std::string& pattern, InlineHandler h) { Add("POST", pattern, {}, {}, std::move(h)); }

  struct Route {
    std::string method;
    std::regex pattern;
    Handler handler;
    LongPollHandler long_poll;
    InlineHandler inline_handler;
    std::string source;  // the pattern as registered: "/v1/jobs/([^/]+)"
    bool literal = false;  // no regex syntax in it: only a path equal to `source` matches
  };
  // The route for the request (setting its `matches`), or null.
  const Route* Find(httplib::Request& req) const;

 private:
  void Add(const char* method, const std::string& pattern, Handler h, LongPollHandler lp, InlineHandler inl = {});
  std::vector<Route> routes_;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  size_t max_body_bytes = 1 << 20;
  size_t workers = 64;  // handler threads: requests handled at once
  size_t io_threads = 2;
  size_t max_connections = 20000;
  size_t max_long_polls_per_owner = 256;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{30000};
  std::chrono::milliseconds idle_timeout{120000};
  std::chrono::milliseconds write_timeout{30000};
  // HTTPS when both are set: PEM certificate chain and private key.
  std::string tls_cert;
  std::string tls_key;
  // Blocks until the state changes after `seen` or `wait` passes; returns the newest change's
  // number (allotd: Controller::WaitForEvents). Unset: parked polls are re-run every 100 ms.
  std::function<uint64_t(uint64_t seen, std::chrono::milliseconds wait)> wait_for_change;
  // The topics (LongPoll::topic) the changes after `seen` up to `upto` touched; nullopt: any
  // (every parked poll is re-run). Unset: every change re-runs every parked poll.
  std::function<std::optional<std::vector<std::string>>(uint64_t seen, uint64_t upto)> changed_topics;
  // Requests answered with an error before any handler ran (a closed slot, a bad head): where
  // they are reported, rate-limited by the caller.
  std::function<void(const std::string&)> log;
  // Called after each answered request of a plain (not long-poll) route with the route's
  // method and pattern, the status, and the seconds its handler took (steady clock). Unset: none.
  std::function<void(const std::string& method, const std::string& route, int status, double seconds)> observe;
};

struct HttpStats {
  size_t connections = 0;   // open now
  size_t long_polls = 0;    // parked now
  uint64_t refused_connections = 0;
  uint64_t timed_out = 0;   // connections closed for a slow head or body
};

class HttpServer {
 public:
  HttpServer(const HttpRouter& router, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Loads the TLS files, binds and starts serving. Fails naming the file or the address.
  Status Start();
  // Stops accepting, answers parked long polls, and joins every thread.
  void Stop();
  int port() const;
  HttpStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace allot
