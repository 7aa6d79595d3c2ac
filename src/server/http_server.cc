#include "server/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace allot {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kHeaderLimit = 16 * 1024;
constexpr int kListenBacklog = 1024;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding as httplib does it: %XX (a malformed escape is kept as written), and '+'
// as a space only in a query.
std::string DecodeUrl(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

void ParseQuery(std::string_view query, httplib::Params& params) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = DecodeUrl(pair.substr(0, eq), true);
    std::string value = eq == std::string_view::npos ? "" : DecodeUrl(pair.substr(eq + 1), true);
    params.emplace(std::move(key), std::move(value));
  }
}

httplib::Request ToRequest(bhttp::request<bhttp::string_body>& in, const tcp::endpoint& remote) {
  httplib::Request req;
  req.method = std::string(in.method_string());
  req.target = std::string(in.target());
  std::string_view target = req.target;
  size_t q = target.find('?');
  req.path = DecodeUrl(target.substr(0, q), false);
  if (q != std::string_view::npos) ParseQuery(target.substr(q + 1), req.params);
  for (const auto& field : in) req.headers.emplace(std::string(field.name_string()), std::string(field.value()));
  req.body = std::move(in.body());
  req.version = in.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
  boost::system::error_code ec;
  req.remote_addr = remote.address().to_string(ec);
  req.remote_port = remote.port();
  return req;
}

std::string ErrorBody(const char* code, const std::string& message) {
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

void SetError(httplib::Response& res, int status, const char* code, const std::string& message) {
  res.status = status;
  res.set_content(ErrorBody(code, message), "application/json");
}

}  // namespace

const HttpRouter::Route* HttpRouter::Find(httplib::Request& req) const {
  for (const Route& r : routes_) {
    if (r.method != req.method) continue;
    // A literal pattern matches only its own text: a string compare before the regex, which then
    // only fills `matches` (dozens of regexes per request were 3 % of allotd at 2,000 agents).
    if (r.literal && req.path != r.source) continue;
    if (std::regex_match(req.path, req.matches, r.pattern)) return &r;
  }
  return nullptr;
}

void HttpRouter::Add(const char* method, const std::string& pattern, Handler h, LongPollHandler lp, InlineHandler inl) {
  bool literal = std::all_of(pattern.begin(), pattern.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '_' || c == '-';
  });
  routes_.push_back(Route{method, std::regex(pattern), std::move(h), std::move(lp), std::move(inl), pattern, literal});
}

// One parked long poll: its session answers once, from whichever thread gets there first.
struct Parked {
  std::mutex mu;
  bool done = false;
  LongPoll poll;
  httplib::Response res;
  std::function<void(httplib::Response)> answer;  // hands the response to the session
};

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  const HttpRouter& router;
  HttpServerOptions options;
  // Sessions live in the context's handlers and hold the Impl: Stop destroys the context to
  // free them.
  std::unique_ptr<net::io_context> ioc = std::make_unique<net::io_context>();
  std::optional<net::ssl::context> tls;
  std::unique_ptr<tcp::acceptor> acceptor = std::make_unique<tcp::acceptor>(*ioc);
  std::unique_ptr<net::thread_pool> workers;
  std::vector<std::thread> io;
  std::thread driver;
  std::atomic<bool> stopping{false};
  int port = 0;

  std::atomic<size_t> connections{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> timed_out{0};

  std::mutex parked_mu;
  std::condition_variable parked_cv;  // wakes the driver when it has no wait_for_change
  // The parked polls, each with what the driver's scans read of it kept beside it: the scans run
  // over every parked poll after every change (6,250 of them at 6,250 agents), and reading each
  // one's deadline through its pointer, twice a scan, was 6 % of allotd's CPU there.
  struct ParkedEntry {
    Clock::time_point deadline;
    size_t topic_hash = 0;                      // of its topic, when it has one
    bool any_change = false;                    // no topic: every change re-runs it
    std::atomic<bool>* every_change = nullptr;  // the poll's own flag (LongPoll::every_change), or null
    std::shared_ptr<Parked> p;
  };
  std::vector<ParkedEntry> parked;
  std::unordered_map<std::string, size_t> parked_by_owner;

  Impl(const HttpRouter& r, HttpServerOptions o) : router(r), options(std::move(o)) {}

  void Log(const std::string& line) {
    if (options.log) options.log(line);
  }

  void Accept();
  void DriveLongPolls();

  // Runs `route`'s handler (or `instead`, what its inline handler handed on) on a worker and hands
  // its response to `done` (on the worker's thread); a null route is answered 404.
  void Handle(std::shared_ptr<httplib::Request> req, const HttpRouter::Route* route, HttpRouter::Handler instead,
              std::function<void(httplib::Response)> done, std::function<void(std::shared_ptr<Parked>)> park);
  // On the I/O thread: `route`'s inline handler. True when it answered in `res`; otherwise
  // `instead` is what a worker runs.
  bool AnswerInline(const HttpRouter::Route& route, const httplib::Request& req, httplib::Response& res,
                    HttpRouter::Handler& instead);
  void Observe(const HttpRouter::Route& route, int status, Clock::time_point start) {
    if (options.observe) {
      options.observe(route.method, route.source, status, std::chrono::duration<double>(Clock::now() - start).count());
    }
  }

  // Parks a long poll whose first check had no answer, or refuses it past its owner's cap.
  // Returns false (the response filled with 429) when refused.
  bool Park(const std::shared_ptr<Parked>& p);
  void Unpark(const std::shared_ptr<Parked>& p);
  // Runs the poll; answers it (and unparks it) when it has an answer or `last`.
  void Evaluate(const std::shared_ptr<Parked>& p, bool last);
};

namespace {

// One connection. Every step runs on the connection's strand; handlers run on the workers and
// post their answer back.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(std::shared_ptr<HttpServer::Impl> server, Stream stream, tcp::endpoint remote)
      : server_(std::move(server)), stream_(std::move(stream)), remote_(std::move(remote)) {}

  ~Session() { --server_->connections; }

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(server_->options.header_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Close();
                                self->WaitForRequest();
                              });
    } else {
      WaitForRequest();
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // Waits (up to idle_timeout) for the next request's first byte, then reads its head.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadHead();
    Lowest().expires_after(server_->options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) return self->Close();
      self->buffer_.commit(n);
      self->ReadHead();
    });
  }

  void ReadHead() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    // A declared length is checked once the head is read (OnHead), to answer 413 naming it.
    // (Not boost::none: Beast 1.74 compares a length with it as greater.)
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    Lowest().expires_after(server_->options.header_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      self->OnHead(ec);
    });
  }

  void OnHead(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      ++server_->timed_out;
      return Close();
    }
    if (ec == bhttp::error::header_limit) {
      return Refuse(431, "request_header_fields_too_large", "the request head is over " + std::to_string(kHeaderLimit) + " bytes");
    }
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == net::error::operation_aborted) return Close();
    if (ec) return Refuse(400, "invalid_argument", "malformed HTTP request: " + ec.message());
    const auto& head = parser_->get();
    auto length = parser_->content_length();
    if (length && *length > server_->options.max_body_bytes) return RefuseBody(*length);
    parser_->body_limit(server_->options.max_body_bytes);  // a chunked body, as it comes
    if (parser_->is_done()) return Dispatch();
    auto expect = head[bhttp::field::expect];
    if (beast::iequals(expect, "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      Lowest().expires_after(server_->options.write_timeout);
      return net::async_write(stream_, net::buffer(kContinue), [self = this->shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->Close();
        self->ReadBody();
      });
    }
    ReadBody();
  }

  void ReadBody() {
    Lowest().expires_after(server_->options.body_timeout);
    bhttp::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec == bhttp::error::body_limit) return self->RefuseBody(0);
      if (ec == beast::error::timeout) {
        ++self->server_->timed_out;
        return self->Close();
      }
      if (ec) return self->Close();
      self->Dispatch();
    });
  }

  void RefuseBody(uint64_t length) {
    std::string said = length > 0 ? "is " + std::to_string(length) + " bytes" : "is over the limit";
    Refuse(413, "payload_too_large",
           "the request body " + said + "; at most " + std::to_string(server_->options.max_body_bytes) + " bytes are accepted");
  }

  // Answers before any handler ran, and closes the connection after.
  void Refuse(int status, const char* code, const std::string& message) {
    httplib::Response res;
    SetError(res, status, code, message);
    res.set_header("Connection", "close");
    close_after_ = true;
    Write(std::move(res), 11);
  }

  void Dispatch() {
    Lowest().expires_never();
    auto in = parser_->release();
    parser_.reset();
    keep_alive_ = in.keep_alive();
    version_ = in.version();
    auto req = std::make_shared<httplib::Request>(ToRequest(in, remote_));
    const HttpRouter::Route* route = server_->router.Find(*req);
    HttpRouter::Handler instead;
    if (route && route->inline_handler) {
      httplib::Response res;
      if (server_->AnswerInline(*route, *req, res, instead)) return Answer(std::move(res));
    }
    auto self = this->shared_from_this();
    server_->Handle(
        req, route, std::move(instead),
        [self](httplib::Response res) {
          net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->Answer(std::move(res)); });
        },
        [self](std::shared_ptr<Parked> p) {
          net::post(self->stream_.get_executor(), [self, p] { self->WatchClose(p); });
        });
  }

  // While a long poll is parked: a client that closes its end drops it.
  void WatchClose(std::shared_ptr<Parked> p) {
    {
      std::lock_guard lock(p->mu);
      if (p->done) return;
    }
    watching_ = p;
    Lowest().socket().async_wait(tcp::socket::wait_read, [self = this->shared_from_this(), p](beast::error_code ec) {
      if (ec || self->watching_ != p) return;
      char byte;
      ssize_t n = ::recv(self->Lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        self->server_->Unpark(p);
        self->Close();
      }
      // Otherwise the client sent its next request early: it is read after this answer.
    });
  }

  void Answer(httplib::Response res) {
    if (watching_) {
      watching_.reset();
      beast::error_code ignored;
      Lowest().socket().cancel(ignored);
    }
    Write(std::move(res), version_);
  }

  void Write(httplib::Response res, unsigned version) {
    if (res.status == -1) res.status = 200;
    bool keep = keep_alive_ && !close_after_ && !server_->stopping;
    if (res.get_header_value("Connection") == "close") keep = false;
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(res.status));
    for (const auto& [name, value] : res.headers) {
      if (!beast::iequals(name, "Connection") && !beast::iequals(name, "Content-Length")) response_.insert(name, value);
    }
    response_.body() = std::move(res.body);
    response_.keep_alive(keep);
    response_.prepare_payload();
    Lowest().expires_after(server_->options.write_timeout);
    bhttp::async_write(stream_, response_, [self = this->shared_from_this(), keep](beast::error_code ec, size_t) {
      if (ec) return self->Close();
      if (!keep) return self->Linger();
      self->WaitForRequest();
    });
  }

  // After a last answer: stop sending, and read (and drop) what the client still sends for a
  // moment, so that closing with unread bytes does not reset the connection before the client
  // has read the answer.
  void Linger(bool first = true) {
    if (first) {
      beast::error_code ignored;
      if constexpr (!kTls) stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      Lowest().expires_after(std::chrono::seconds(2));
    }
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Close();
      self->Linger(false);
    });
  }

  void Close() {
    watching_.reset();  // the parked poll's answer holds this session
    beast::error_code ignored;
    if constexpr (kTls) {
      // No close_notify exchange: a client gone or too slow is not waited on.
      Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    } else {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
    Lowest().close();
  }

  std::shared_ptr<HttpServer::Impl> server_;
  Stream stream_;
  tcp::endpoint remote_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  bool keep_alive_ = true;
  bool close_after_ = false;
  unsigned version_ = 11;
  std::shared_ptr<Parked> watching_;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*ioc), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (self->stopping) return;
    if (ec) {
      // Out of descriptors (or another passing failure): pause instead of spinning.
      self->Log("accept failed: " + ec.message());
      auto timer = std::make_shared<net::steady_timer>(*self->ioc, std::chrono::milliseconds(50));
      timer->async_wait([self, timer](beast::error_code) { self->Accept(); });
      return;
    }
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // answers are small; never wait on Nagle
    tcp::endpoint remote = socket.remote_endpoint(ignored);
    if (self->connections.load() >= self->options.max_connections) {
      ++self->refused;
      static const std::string kBusy = [] {
        std::string body = ErrorBody("unavailable", "allotd is serving its maximum number of connections; try again");
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
               "Connection: close\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
      }();
      // Best effort, without blocking: a client that cannot take 200 bytes gets a reset.
      ::send(socket.native_handle(), kBusy.data(), kBusy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    } else {
      ++self->connections;
      if (self->tls) {
        std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
            self, beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *self->tls), remote)
            ->Start();
      } else {
        std::make_shared<Session<beast::tcp_stream>>(self, beast::tcp_stream(std::move(socket)), remote)->Start();
      }
    }
    self->Accept();
  });
}

bool HttpServer::Impl::AnswerInline(const HttpRouter::Route& route, const httplib::Request& req, httplib::Response& res,
                                    HttpRouter::Handler& instead) {
  auto start = Clock::now();
  instead = route.inline_handler(req, res);
  if (instead) return false;
  Observe(route, res.status, start);
  return true;
}

void HttpServer::Impl::Handle(std::shared_ptr<httplib::Request> req, const HttpRouter::Route* route, HttpRouter::Handler instead,
                              std::function<void(httplib::Response)> done, std::function<void(std::shared_ptr<Parked>)> park) {
  net::post(*workers, [self = shared_from_this(), req = std::move(req), route, instead = std::move(instead),
                       done = std::move(done), park = std::move(park)] {
    httplib::Response res;
    if (!route) {
      SetError(res, 404, "not_found", "no route " + req->method + " " + req->path);
      return done(std::move(res));
    }
    if (route->handler || instead) {
      auto start = Clock::now();
      (instead ? instead : route->handler)(*req, res);
      self->Observe(*route, res.status, start);
      return done(std::move(res));
    }
    std::optional<LongPoll> lp = route->long_poll(*req, res);
    if (!lp) return done(std::move(res));
    auto p = std::make_shared<Parked>();
    p->poll = std::move(*lp);
    p->answer = done;
    if (p->poll.poll(p->res, false)) return done(std::move(p->res));
    if (!self->Park(p)) return done(std::move(p->res));
    park(p);
    // A change between the first check and the parking would be missed by the driver: look once more.
    self->Evaluate(p, false);
  });
}

bool HttpServer::Impl::Park(const std::shared_ptr<Parked>& p) {
  std::lock_guard lock(parked_mu);
  if (!p->poll.owner.empty()) {
    size_t& n = parked_by_owner[p->poll.owner];
    if (n >= options.max_long_polls_per_owner) {
      p->res = {};
      SetError(p->res, 429, "resource_exhausted",
               "this token already holds " + std::to_string(n) + " waiting requests (at most " +
                   std::to_string(options.max_long_polls_per_owner) + "); close one or try again");
      p->res.set_header("Retry-After", "1");
      return false;
    }
    ++n;
  }
  parked.push_back(ParkedEntry{p->poll.deadline, std::hash<std::string>{}(p->poll.topic), p->poll.topic.empty(),
                               p->poll.every_change.get(), p});
  parked_cv.notify_all();
  return true;
}

void HttpServer::Impl::Unpark(const std::shared_ptr<Parked>& p) {
  {
    std::lock_guard poll_lock(p->mu);
    p->done = true;
  }
  std::lock_guard lock(parked_mu);
  auto it = std::find_if(parked.begin(), parked.end(), [&](const ParkedEntry& e) { return e.p == p; });
  if (it == parked.end()) return;
  parked.erase(it);
  if (!p->poll.owner.empty()) {
    auto n = parked_by_owner.find(p->poll.owner);
    if (n != parked_by_owner.end() && --n->second == 0) parked_by_owner.erase(n);
  }
}

void HttpServer::Impl::Evaluate(const std::shared_ptr<Parked>& p, bool last) {
  httplib::Response res;
  {
    std::lock_guard lock(p->mu);
    if (p->done) return;
    p->res = {};
    if (!p->poll.poll(p->res, last) && !last) return;
    res = std::move(p->res);
    // Claimed in the same critical section as the check: the driver and the worker that parked
    // the poll both evaluate it, and one setting `done` later (in Unpark) let the other answer
    // too — a second response on the connection, its read started twice (Beast asserts).
    p->done = true;
  }
  Unpark(p);
  p->answer(std::move(res));
}

void HttpServer::Impl::DriveLongPolls() {
  uint64_t seen = options.wait_for_change ? options.wait_for_change(0, std::chrono::milliseconds(0)) : 0;
  while (!stopping) {
    auto now = Clock::now();
    auto next = now + std::chrono::milliseconds(options.wait_for_change ? 200 : 100);
    {
      std::unique_lock lock(parked_mu);
      for (const ParkedEntry& e : parked) next = std::min(next, e.deadline);
      if (parked.empty() && !options.wait_for_change) {
        parked_cv.wait_for(lock, std::chrono::milliseconds(200));
        continue;
      }
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::max(next - now, Clock::duration::zero()));
    bool changed = true;
    std::optional<std::unordered_set<std::string>> topics;  // nullopt: every topic
    std::unordered_set<size_t> topic_hashes;
    if (options.wait_for_change) {
      uint64_t seq = options.wait_for_change(seen, wait);
      changed = seq != seen;
      if (changed && options.changed_topics) {
        if (auto named = options.changed_topics(seen, seq)) {
          topics.emplace(named->begin(), named->end());
          for (const std::string& t : *topics) topic_hashes.insert(std::hash<std::string>{}(t));
        }
      }
      seen = seq;
    } else {
      std::this_thread::sleep_for(wait);
    }
    // Only the polls this change (or their deadline) concerns: a batch touching a few nodes
    // re-runs their polls, not every agent's.
    now = Clock::now();
    std::vector<std::shared_ptr<Parked>> polls;
    {
      std::lock_guard lock(parked_mu);
      for (const ParkedEntry& e : parked) {
        bool due = now >= e.deadline || stopping;
        bool touched = changed && (!topics || e.any_change ||
                                   (topic_hashes.contains(e.topic_hash) && topics->contains(e.p->poll.topic)) ||
                                   (e.every_change && e.every_change->load()));
        if (due || touched) polls.push_back(e.p);
      }
    }
    for (const auto& p : polls) Evaluate(p, now >= p->poll.deadline || stopping);
  }
  std::vector<std::shared_ptr<Parked>> polls;
  {
    std::lock_guard lock(parked_mu);
    for (const ParkedEntry& e : parked) polls.push_back(e.p);
  }
  for (const auto& p : polls) Evaluate(p, true);
}

HttpServer::HttpServer(const HttpRouter& router, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(router, std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::port() const { return impl_->port; }

HttpStats HttpServer::stats() const {
  HttpStats s;
  s.connections = impl_->connections.load();
  s.refused_connections = impl_->refused.load();
  s.timed_out = impl_->timed_out.load();
  std::lock_guard lock(impl_->parked_mu);
  s.long_polls = impl_->parked.size();
  return s;
}

Status HttpServer::Start() {
  Impl& m = *impl_;
  if (!m.options.tls_cert.empty() || !m.options.tls_key.empty()) {
    m.tls.emplace(net::ssl::context::tls_server);
    m.tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    m.tls->use_certificate_chain_file(m.options.tls_cert, ec);
    if (!ec) m.tls->use_private_key_file(m.options.tls_key, net::ssl::context::pem, ec);
    if (ec) {
      return InvalidArgument("tls: cannot load the certificate '" + m.options.tls_cert + "' and key '" + m.options.tls_key +
                             "' (PEM files expected)");
    }
  }
  beast::error_code ec;
  auto address = net::ip::make_address(m.options.host, ec);
  if (ec) return InvalidArgument("host: '" + m.options.host + "' is not an IP address");
  tcp::endpoint at(address, static_cast<unsigned short>(m.options.port));
  std::string where = m.options.host + ":" + std::to_string(m.options.port);
  m.acceptor->open(at.protocol(), ec);
  if (!ec) m.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor->bind(at, ec);
  if (ec) return Unavailable("cannot listen on " + where + " (in use, or not an address of this machine)");
  m.acceptor->listen(kListenBacklog, ec);
  if (ec) return Unavailable("cannot listen on " + where + ": " + ec.message());
  m.port = m.acceptor->local_endpoint().port();
  m.workers = std::make_unique<net::thread_pool>(std::max<size_t>(1, m.options.workers));
  m.Accept();
  for (size_t i = 0; i < std::max<size_t>(1, m.options.io_threads); ++i) {
    m.io.emplace_back([impl = impl_] { impl->ioc->run(); });
  }
  m.driver = std::thread([impl = impl_] { impl->DriveLongPolls(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  Impl& m = *impl_;
  if (m.stopping.exchange(true)) return;
  net::post(*m.ioc, [impl = impl_] {
    beast::error_code ignored;
    impl->acceptor->close(ignored);
  });
  if (m.driver.joinable()) m.driver.join();  // answers every parked poll
  if (m.workers) m.workers->join();
  m.ioc->stop();
  for (auto& t : m.io) {
    if (t.joinable()) t.join();
  }
  // Destroying the context destroys its waiting handlers, and with them the sessions.
  m.acceptor.reset();
  m.ioc.reset();
}

}  // namespace allot
