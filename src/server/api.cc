#include "server/api.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <set>
#include <thread>

#include "core/names.h"
#include "core/quantity.h"
#include "server/agent_wire.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "server/openapi.h"
#include "server/metrics_page.h"
#include "metrics/exposition.h"

namespace allot {

void Reply(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void ReplyError(httplib::Response& res, const Status& s) {
  Reply(res, HttpStatus(s.code()), Json{{"error", {{"code", CodeName(s.code())}, {"message", s.message()}}}});
}

Result<int64_t> TimeParam(const httplib::Request& req, const char* key, int64_t fallback) {
  if (!req.has_param(key)) return fallback;
  std::string v = req.get_param_value(key);
  auto t = ParseApiTime(v);
  if (!t) return Err(InvalidArgument(std::string(key) + ": '" + v + "' is not a time; expected Unix seconds or " +
                                     "an RFC 3339 UTC time like 2026-11-01T00:00:00Z"));
  return *t;
}

Result<int64_t> IntParam(const httplib::Request& req, const char* key, int64_t lo, int64_t hi,
                         std::optional<int64_t> fallback) {
  auto expected = [&] { return "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi); };
  if (!req.has_param(key)) {
    if (fallback) return *fallback;
    return Err(InvalidArgument(std::string(key) + ": required; " + expected()));
  }
  std::string v = req.get_param_value(key);
  int64_t x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi) {
    return Err(InvalidArgument(std::string(key) + ": '" + v + "' is not valid; " + expected()));
  }
  return x;
}

struct ApiServer::Impl {
  Controller& ctl;
  ApiOptions options;
  HttpRouter http;
  std::unique_ptr<HttpServer> server;
  HttpRouter metrics_http;  // --metrics-listen: /metrics only, no token
  std::unique_ptr<HttpServer> metrics_server;

  RouteContext routes{ctl, nullptr, {}, {}, {}, {}, {}, {}, {}, 15000, 1000};

  Impl(Controller& c, ApiOptions o) : ctl(c), options(std::move(o)) {}

  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::mutex buckets_mu;
  std::unordered_map<std::string, Bucket> buckets;  // by token hash

  // Takes one request from the token's bucket; false when it is empty.
  bool TakeRequest(const std::string& hash) {
    if (options.rate_per_second <= 0) return true;
    auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(buckets_mu);
    auto [it, fresh] = buckets.try_emplace(hash, Bucket{options.rate_burst, now});
    Bucket& b = it->second;
    if (!fresh) {
      b.tokens = std::min(options.rate_burst, b.tokens + std::chrono::duration<double>(now - b.last).count() * options.rate_per_second);
      b.last = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  // The caller, from its bearer token; 401 when missing, unknown or revoked; 429 past its rate.
  Result<Principal> Authenticate(const httplib::Request& req) {
    std::string h = req.get_header_value("Authorization");
    if (h.rfind("Bearer ", 0) != 0 || h.size() <= 7) {
      return Err(Status(Code::kUnauthenticated, "Authorization: expected 'Bearer <token>'"));
    }
    std::string hash = HashToken(std::string_view(h).substr(7));
    if (!TakeRequest(hash)) {
      return Err(Status(Code::kResourceExhausted, "rate limit: more than " + std::to_string(static_cast<int64_t>(options.rate_per_second)) +
                                                      " requests per second with this token; retry later"));
    }
    auto p = ctl.Read([&](const ClusterState& st) -> std::optional<Principal> {
      const TokenRecord* r = st.access().Find(hash);
      return r ? std::optional<Principal>(r->principal) : std::nullopt;
    });
    if (!p) return Err(Status(Code::kUnauthenticated, "the bearer token is not known or was revoked"));
    return *p;
  }

  std::atomic<uint64_t> requests{0};

  // The request's id: the caller's X-Request-Id, or one of ours; echoed in the response.
  std::string RequestId(const httplib::Request& req, httplib::Response& res) {
    std::string id = req.get_header_value("X-Request-Id");
    if (id.empty() || id.size() > 64) id = "r" + std::to_string(++requests);
    res.set_header("X-Request-Id", id);
    return id;
  }
  // Answers a refusal found before the command, recording it in the audit log first.
  void Refuse(httplib::Response& res, const AuditContext& audit, const Status& why) {
    Status s = ctl.Audit(audit, why);
    ReplyError(res, s);
  }

  // Refusals nobody is accountable for (401s) or that a flood could repeat (a node's refused
  // reports): at most kRefusalsAuditedPerSecond go to the hash-chained audit log (and to
  // options.log) each second; the rest are counted, and the count is recorded with the next
  // one let through, so a flood cannot grow the log without bound.
  static constexpr int kRefusalsAuditedPerSecond = 10;
  std::mutex refusal_mu;
  int64_t refusal_second = 0;
  int refusal_lines = 0;
  int64_t refusals_dropped = 0;
  void RefuseLimited(httplib::Response& res, AuditContext audit, const Status& why) {
    int64_t second = ctl.now_ms() / 1000;
    int64_t dropped = 0;
    {
      std::lock_guard lock(refusal_mu);
      if (second != refusal_second) {
        dropped = refusals_dropped;
        refusal_second = second;
        refusal_lines = 0;
        refusals_dropped = 0;
      }
      if (refusal_lines >= kRefusalsAuditedPerSecond) {
        ++refusals_dropped;
        return ReplyError(res, why);
      }
      ++refusal_lines;
    }
    if (dropped > 0) audit.target += " (and " + std::to_string(dropped) + " more refusals in the second before, not recorded)";
    if (options.log) {
      options.log(std::to_string(HttpStatus(why.code())) + " " + audit.action + " " + audit.target + " by " + audit.actor + ": " +
                  why.message());
    }
    Refuse(res, audit, why);
  }
  void RefuseAuth(const httplib::Request& req, httplib::Response& res, const Status& why) {
    AuditContext audit{"anonymous", Role::kViewer, "", "authenticate", req.method + " " + req.path + " from " + req.remote_addr,
                       RequestId(req, res)};
    RefuseLimited(res, std::move(audit), why);
  }

  // A node token acts only in the agent protocol (/v1/agent/…, where each route checks that it
  // acts for its own node): every other route refuses it, audited like any refusal a flood
  // could repeat, so a compromised node reads neither the fleet, nor the events, nor any tenant's
  // jobs. False (refusal written) when `who` may not call `req`'s route.
  static bool RouteOpenTo(const httplib::Request& req, const Principal& who) {
    return who.role != Role::kNode || req.path.rfind("/v1/agent/", 0) == 0;
  }
  bool MayCallRoute(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    if (RouteOpenTo(req, who)) return true;
    AuditContext audit = AuditOf(who, "", "node.refused", req.method + " " + req.path, RequestId(req, res));
    RefuseLimited(res, std::move(audit),
                  Status(Code::kPermissionDenied, "a node token reads only its own node's assignments (/v1/agent/...)"));
    return false;
  }

  // The caller of `req`, or nullopt with the refusal written: 401 (audited) without a valid
  // token, 429 with Retry-After past its rate, 403 for a node token off the agent protocol.
  std::optional<Principal> Caller(const httplib::Request& req, httplib::Response& res) {
    return CallerOf(req, res, Authenticate(req));
  }
  // The same for a caller already authenticated (or refused) as `who`.
  std::optional<Principal> CallerOf(const httplib::Request& req, httplib::Response& res, const Result<Principal>& who) {
    if (!who) {
      if (who.error().code() == Code::kResourceExhausted) res.set_header("Retry-After", "1");
      if (who.error().code() == Code::kUnauthenticated) {
        // A token presented and refused is a failed login; a request without one is not.
        if (options.alerts && req.has_header("Authorization")) options.alerts->FailedLogin(req.remote_addr);
        RefuseAuth(req, res, who.error());
      } else {
        ReplyError(res, who.error());
      }
      return std::nullopt;
    }
    if (!MayCallRoute(req, res, *who)) return std::nullopt;
    return *who;
  }

  // Wraps a handler that needs a caller.
  template <class F>
  auto Authed(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      if (auto who = Caller(req, res)) f(req, res, *who);
    };
  }
  // Wraps a route answered on the I/O thread when it can: the caller authenticated there once
  // (its rate counted once), refused on a worker.
  HttpRouter::InlineHandler AuthedInline(RouteContext::FastHandler fast, RouteContext::Handler slow) {
    return [this, fast, slow](const httplib::Request& req, httplib::Response& res) -> HttpRouter::Handler {
      Result<Principal> who = Authenticate(req);
      if (who && RouteOpenTo(req, *who)) {
        RouteContext::Handler rest = fast(req, res, *who);
        if (!rest) return nullptr;
        return [rest = std::move(rest), p = *who](const httplib::Request& req, httplib::Response& res) { rest(req, res, p); };
      }
      return [this, slow, who](const httplib::Request& req, httplib::Response& res) {
        if (auto p = CallerOf(req, res, who)) slow(req, res, *p);
      };
    };
  }
  // Wraps a long poll that needs a caller; the poll counts against its token's cap.
  template <class F>
  auto AuthedLongPoll(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) -> std::optional<LongPoll> {
      auto who = Caller(req, res);
      if (!who) return std::nullopt;
      std::optional<LongPoll> poll = f(req, res, *who);
      // A route may narrow the owner (the agents' assignments: one cap per node, since one node
      // token of principal "*" serves a whole fleet).
      if (poll) poll->owner = HashToken(std::string_view(req.get_header_value("Authorization")).substr(7)) + poll->owner;
      return poll;
    };
  }

  void Routes() {
    routes.agents = options.agents ? options.agents : std::make_shared<AgentRegistry>();
    routes.authed = [this](RouteContext::Handler h) -> HttpRouter::Handler { return Authed(std::move(h)); };
    routes.authed_long_poll = [this](RouteContext::LongPollHandler h) -> HttpRouter::LongPollHandler {
      return AuthedLongPoll(std::move(h));
    };
    routes.authed_inline = [this](RouteContext::FastHandler fast, RouteContext::Handler slow) {
      return AuthedInline(std::move(fast), std::move(slow));
    };
    routes.request_id = [this](const httplib::Request& req, httplib::Response& res) { return RequestId(req, res); };
    routes.refuse = [this](httplib::Response& res, const AuditContext& a, const Status& why) { Refuse(res, a, why); };
    routes.refuse_limited = [this](httplib::Response& res, const AuditContext& a, const Status& why) { RefuseLimited(res, a, why); };
    routes.log_dir = options.log_dir;
    routes.cluster_ports.base = options.cluster_port_base;
    routes.cluster_secret = options.cluster_secret;
    routes.acceptance_lead_ms = options.acceptance_lead_ms;
    routes.interference = options.interference;
    routes.autoscale = options.autoscale;
    routes.node_timeout_ms = options.node_timeout_ms;
    routes.heartbeat_ms = options.heartbeat_ms;
    routes.alerts = options.alerts;
    routes.history = options.history ? options.history : std::make_shared<History>(60000);
    http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { Reply(res, 200, {{"ok", true}}); });
    http.Get("/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(OpenApiDocument(), "application/json");
    });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      bool ok = ctl.healthy();
      Reply(res, ok ? 200 : 503, {{"ready", ok}, {"journal_seq", ctl.last_seq()}});
    });
    if (!options.metrics) options.metrics = std::make_shared<DaemonMetrics>();
    auto page = [this](httplib::Response& res) {
      res.status = 200;
      res.set_content(RenderMetrics(ctl, *routes.agents, *options.metrics, options.alerts.get()), kExpositionContentType);
    };
    // What the fleet, every tenant and the agents' telemetry show is for the platform's
    // operators and auditors only (docs/security.md).
    http.Get("/metrics", routes.authed([this, page](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      if (who.role != Role::kPlatformAdmin && who.role != Role::kAuditor) {
        return Refuse(res, AuditOf(who, "", "metrics.read", "/metrics", RequestId(req, res)),
                      MayNot(who, "read /metrics (platform-admin or auditor only)"));
      }
      page(res);
    }));
    metrics_http.Get("/metrics", [page](const httplib::Request&, httplib::Response& res) { page(res); });
    // One route file per resource, each over the one context (server/api_routes.h).
    JobRoutes(http, routes);
    ArrayRoutes(http, routes);
    TenantRoutes(http, routes);  // and /v1/usage
    BillingRoutes(http, routes);
    ReconcileRoutes(http, routes);
    ReservationRoutes(http, routes);
    KeyRoutes(http, routes);
    TemplateRoutes(http, routes);
    AvailabilityRoutes(http, routes);
    EventRoutes(http, routes);
    TokenRoutes(http, routes);  // and /v1/audit
    AgentRoutes(http, routes);
    InterferenceRoutes(http, routes);
    ServiceRoutes(http, routes);
    NodeRoutes(http, routes);  // /v1/nodes… and task logs
    AlertRoutes(http, routes);
    HistoryRoutes(http, routes);
    WebRoutes(http, routes);  // the dashboard: /, /ui/…
  }
};

ApiServer::ApiServer(Controller& controller, ApiOptions options)
    : impl_(std::make_unique<Impl>(controller, std::move(options))) {}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  Impl& m = *impl_;
  m.Routes();
  HttpServerOptions o;
  o.host = m.options.host;
  o.port = m.options.port;
  o.max_body_bytes = m.options.max_body_bytes;
  o.workers = m.options.threads;
  o.max_connections = m.options.max_connections;
  o.max_long_polls_per_owner = m.options.max_long_polls_per_token;
  o.header_timeout = m.options.header_timeout;
  o.idle_timeout = m.options.idle_timeout;
  o.tls_cert = m.options.tls_cert;
  o.tls_key = m.options.tls_key;
  o.log = m.options.log;
  std::shared_ptr<DaemonMetrics> metrics = m.options.metrics;
  o.observe = [metrics](const std::string& method, const std::string& route, int status, double seconds) {
    metrics->api_request.Observe({method + " " + route, std::to_string(status > 0 ? status : 200)}, seconds);
  };
  Controller* ctl = &m.ctl;
  o.wait_for_change = [ctl](uint64_t seen, std::chrono::milliseconds wait) { return ctl->WaitForEvents(seen, wait); };
  // An agent's assignment poll is re-run when a batch touched its node (state/event_nodes.h).
  o.changed_topics = [ctl](uint64_t seen, uint64_t upto) -> std::optional<std::vector<std::string>> {
    auto nodes = ctl->NodesTouchedSince(seen, upto);
    if (!nodes) return std::nullopt;
    return ctl->Read([&](const ClusterState& st) {
      std::vector<std::string> topics;
      topics.reserve(nodes->size());
      for (NodeId n : *nodes) {
        if (n.value() < st.fleet().size()) topics.push_back(AssignmentPollTopic(st.fleet().node(n).name));
      }
      return topics;
    });
  };
  m.server = std::make_unique<HttpServer>(m.http, std::move(o));
  if (Status s = m.server->Start(); !s.ok()) {
    m.server.reset();
    return s;
  }
  port_ = m.server->port();
  if (m.options.metrics_port >= 0) {
    HttpServerOptions mo;
    mo.host = m.options.metrics_host;
    mo.port = m.options.metrics_port;
    mo.workers = 2;
    mo.max_connections = 64;
    mo.log = m.options.log;
    m.metrics_server = std::make_unique<HttpServer>(m.metrics_http, std::move(mo));
    if (Status s = m.metrics_server->Start(); !s.ok()) {
      m.metrics_server.reset();
      m.server->Stop();
      return s;
    }
    metrics_port_ = m.metrics_server->port();
  }
  return Status::Ok();
}

void ApiServer::Stop() {
  if (!impl_) return;
  if (impl_->metrics_server) impl_->metrics_server->Stop();
  if (impl_->server) impl_->server->Stop();
}

HttpStats ApiServer::http_stats() const { return impl_->server ? impl_->server->stats() : HttpStats{}; }

}  // namespace allot
