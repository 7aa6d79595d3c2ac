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
#include "server/api_billing.h"
#include "server/api_bodies.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "server/body_reader.h"
#include "server/job_lookup.h"
#include "server/openapi.h"
#include "state/event_codec.h"
#include "state/usage.h"
#include "sim/scenario.h"
#include "sim/setup.h"

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

  RouteContext routes{ctl, nullptr, {}, {}, {}, {}, {}, {}, 15000, 1000};

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
  AuditContext Audit(const Principal& who, const std::string& tenant, const std::string& action, const std::string& target,
                     const std::string& request_id) {
    return AuditContext{who.name, who.role, tenant, action, target, request_id};
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
  bool MayCallRoute(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    if (who.role != Role::kNode || req.path.rfind("/v1/agent/", 0) == 0) return true;
    AuditContext audit = Audit(who, "", "node.refused", req.method + " " + req.path, RequestId(req, res));
    RefuseLimited(res, std::move(audit),
                  Status(Code::kPermissionDenied, "a node token reads only its own node's assignments (/v1/agent/...)"));
    return false;
  }

  // Wraps a handler that needs a caller.
  template <class F>
  auto Authed(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      auto who = Authenticate(req);
      if (!who) {
        if (who.error().code() == Code::kResourceExhausted) res.set_header("Retry-After", "1");
        if (who.error().code() == Code::kUnauthenticated) return RefuseAuth(req, res, who.error());
        return ReplyError(res, who.error());
      }
      if (!MayCallRoute(req, res, *who)) return;
      f(req, res, *who);
    };
  }
  // Wraps a long poll that needs a caller; the poll counts against its token's cap.
  template <class F>
  auto AuthedLongPoll(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) -> std::optional<LongPoll> {
      auto who = Authenticate(req);
      if (!who) {
        if (who.error().code() == Code::kResourceExhausted) res.set_header("Retry-After", "1");
        if (who.error().code() == Code::kUnauthenticated) {
          RefuseAuth(req, res, who.error());
        } else {
          ReplyError(res, who.error());
        }
        return std::nullopt;
      }
      if (!MayCallRoute(req, res, *who)) return std::nullopt;
      std::optional<LongPoll> poll = f(req, res, *who);
      if (poll) poll->owner = HashToken(std::string_view(req.get_header_value("Authorization")).substr(7));
      return poll;
    };
  }

  void Routes() {
    routes.agents = options.agents ? options.agents : std::make_shared<AgentRegistry>();
    routes.authed = [this](RouteContext::Handler h) -> HttpRouter::Handler { return Authed(std::move(h)); };
    routes.authed_long_poll = [this](RouteContext::LongPollHandler h) -> HttpRouter::LongPollHandler {
      return AuthedLongPoll(std::move(h));
    };
    routes.request_id = [this](const httplib::Request& req, httplib::Response& res) { return RequestId(req, res); };
    routes.refuse = [this](httplib::Response& res, const AuditContext& a, const Status& why) { Refuse(res, a, why); };
    routes.refuse_limited = [this](httplib::Response& res, const AuditContext& a, const Status& why) { RefuseLimited(res, a, why); };
    routes.log_dir = options.log_dir;
    routes.node_timeout_ms = options.node_timeout_ms;
    routes.heartbeat_ms = options.heartbeat_ms;
    http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { Reply(res, 200, {{"ok", true}}); });
    http.Get("/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(OpenApiDocument(), "application/json");
    });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      bool ok = ctl.healthy();
      Reply(res, ok ? 200 : 503, {{"ready", ok}, {"journal_seq", ctl.last_seq()}});
    });
    http.Post("/v1/jobs", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      SubmitJob(req, res, who);
    }));
    http.Get("/v1/jobs", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      ListJobs(req, res, who);
    }));
    http.Get(R"(/v1/jobs/([^/]+))", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      ctl.ReadView([&](const Controller::View& v) {
        // A job outside the caller's scope does not exist for it.
        auto id = LookupJob(v.state, who, req);
        if (!id) return ReplyError(res, id.error());
        Reply(res, 200, JobJson(v, v.state.job(*id)));
      });
    }));
    http.Get(R"(/v1/jobs/([^/]+)/explain)", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      Explain(req, res, who);
    }));
    http.Post(R"(/v1/jobs/([^/]+)/cancel)", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      std::string name = req.matches[1];
      // Filed under the job's tenant once found; a refusal before that under none.
      AuditContext audit = Audit(who, "", "job.cancel", name, RequestId(req, res));
      Status may = Status::Ok();
      JobId id = ctl.Read([&](const ClusterState& st) {
        auto j = LookupJob(st, who, req);
        if (!j) {
          may = j.error();
          return JobId();
        }
        audit.tenant = st.tenants().tenant(st.job(*j).spec.tenant).path;
        if (!Allowed(st.tenants(), who, Action::kSubmit, st.job(*j).spec.tenant)) {
          may = Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) + " may not cancel jobs");
        }
        return *j;
      });
      if (!may.ok()) return Refuse(res, audit, may);
      auto r = ctl.Execute(JobCancelled{id}, audit);
      if (!r) return ReplyError(res, r.error());
      ctl.ReadView([&](const Controller::View& v) { Reply(res, 200, JobJson(v, v.state.job(id))); return 0; });
    }));
    http.Get("/v1/tenants", Authed([this](const httplib::Request&, httplib::Response& res, const Principal& who) {
      Json tenants = ctl.Read([&](const ClusterState& st) {
        Json out = Json::array();
        for (const Tenant& t : st.tenants().tenants()) {
          if (t.id == st.tenants().root() || t.removed || !Allowed(st.tenants(), who, Action::kRead, t.id)) continue;
          Json guarantee = Json::object();  // only what is set
          for (int i = 0; i < st.resource_names().size(); ++i) {
            ResourceId r = static_cast<ResourceId>(i);
            if (t.has_guarantee(r)) guarantee[st.resource_names().Name(r)] = FormatAmount(r, t.guarantee[r]);
          }
          out.push_back({{"path", t.path},
                         {"parent", t.parent == st.tenants().root() ? Json() : Json(st.tenants().tenant(t.parent).path)},
                         {"trust", t.trust == Trust::kUntrusted ? "untrusted" : "trusted"},
                         {"weight", FormatMilli(t.weight)},
                         {"guarantee", guarantee},
                         {"max", AmountsJson(st, t.max, true)},
                         {"usage", AmountsJson(st, t.usage, false)}});
        }
        return out;
      });
      Reply(res, 200, {{"tenants", tenants}});
    }));
    http.Post("/v1/tenants", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      UpsertTenant(req, res, who);
    }));
    http.Post("/v1/tenants/move", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      MoveTenant(req, res, who);
    }));
    http.Delete(R"(/v1/tenants/(.+))", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      DeleteTenant(req, res, who);
    }));
    http.Get("/v1/usage", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      Usage(req, res, who);
    }));
    AddBillingRoutes(http, ctl, [this](AuthedHandler h) { return HttpRouter::Handler(Authed(std::move(h))); });
    AddReconcileRoutes(http, ctl, [this](AuthedHandler h) { return HttpRouter::Handler(Authed(std::move(h))); });
    http.GetLongPoll("/v1/events", AuthedLongPoll([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      return WatchEvents(req, res, who);
    }));
    http.Get("/v1/audit", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      auto after_param = IntParam(req, "after", 0, INT32_MAX, -1);
      if (!after_param) return ReplyError(res, after_param.error());
      int64_t after = *after_param;
      ctl.Read([&](const ClusterState& st) {
        Json records = Json::array();
        const auto& log = st.audit();
        for (size_t i = static_cast<size_t>(std::max<int64_t>(after + 1, 0)); i < log.size() && records.size() < 1000; ++i) {
          const AuditRecord& r = log[i];
          TenantId t = r.tenant.empty() ? TenantId() : st.tenants().Find(r.tenant);
          bool visible = who.role == Role::kPlatformAdmin || (t.valid() && Allowed(st.tenants(), who, Action::kReadAudit, t));
          if (!visible) continue;
          records.push_back({{"seq", i}, {"time", Seconds(r.time_ms)}, {"actor", r.actor}, {"role", RoleName(r.role)},
                             {"tenant", r.tenant}, {"action", r.action}, {"target", r.target}, {"outcome", r.outcome},
                             {"request_id", r.request_id}, {"hash", r.hash}});
        }
        bool may = who.role == Role::kPlatformAdmin || Allowed(st.tenants(), who, Action::kReadAudit, who.scope);
        if (!may) return ReplyError(res, Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) + " may not read the audit log"));
        Reply(res, 200, {{"records", records}});
      });
    }));
    http.Get("/v1/tokens", Authed([this](const httplib::Request&, httplib::Response& res, const Principal& who) {
      // The live tokens whose scope the caller manages, by id (the hash's first 16 hex digits).
      Json tokens = ctl.Read([&](const ClusterState& st) {
        Json out = Json::array();
        for (const auto& [hash, r] : st.access().tokens()) {
          if (r.revoked || !Allowed(st.tenants(), who, Action::kManage, r.principal.scope)) continue;
          out.push_back({{"id", hash.substr(0, 16)}, {"principal", r.principal.name}, {"role", RoleName(r.principal.role)},
                         {"scope", st.tenants().tenant(r.principal.scope).path}, {"issued", Seconds(r.issued_ms)}});
        }
        return out;
      });
      Reply(res, 200, {{"tokens", tokens}});
    }));
    http.Post(R"(/v1/tokens/([0-9a-f]{16})/revoke)", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      std::string id = req.matches[1];
      AuditContext audit = Audit(who, "", "token.revoke", id, RequestId(req, res));
      std::string hash;
      ctl.Read([&](const ClusterState& st) {
        for (const auto& [h, r] : st.access().tokens()) {
          if (h.rfind(id, 0) == 0 && !r.revoked && Allowed(st.tenants(), who, Action::kManage, r.principal.scope)) {
            hash = h;
            audit.tenant = st.tenants().tenant(r.principal.scope).path;
          }
        }
        return 0;
      });
      if (hash.empty()) return Refuse(res, audit, NotFound("token " + id + " does not exist"));
      auto r = ctl.Execute(TokenRevoked{hash}, audit);
      if (!r) return ReplyError(res, r.error());
      Reply(res, 200, {{"id", id}, {"revoked", true}});
    }));
    http.Post("/v1/tokens", Authed([this](const httplib::Request& req, httplib::Response& res, const Principal& who) {
      IssueToken(req, res, who);
    }));
    AgentRoutes(http, routes);
    NodeRoutes(http, routes);  // /v1/nodes… and task logs
  }

  // Creates or updates a tenant. The caller manages its parent: an org-admin shapes the teams
  // of its org (within the org's own guarantee, which the tree enforces) but not the org itself.
  void UpsertTenant(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    AuditContext audit = Audit(who, "", "tenant.upsert", "", RequestId(req, res));
    auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "tenant");
    if (!tree) return Refuse(res, audit, tree.error());
    auto t = ReadTenantObject(*tree, "body");
    if (!t) return Refuse(res, audit, t.error());
    audit.target = t->path;
    audit.tenant = t->path;
    Result<TenantSpec> spec = Err(Status());
    Status may = ctl.Read([&](const ClusterState& st) {
      TenantId self = st.tenants().Find(t->path);
      bool self_visible = self.valid() && Allowed(st.tenants(), who, Action::kRead, self);
      if (Status s = MayManageUnder(st, who, t->path, "tenant.path", self_visible); !s.ok()) return s;
      spec = ResolveTenant(*t, st.resource_names(), "tenant.");
      if (!spec) return spec.error();
      QuotaTree next = st.tenants();
      if (auto up = next.Upsert(*spec, st.resource_names()); !up) return up.error();
      return FitsFleet(st, next);
    });
    if (!may.ok()) return Refuse(res, audit, may);
    bool existed = ctl.Read([&](const ClusterState& st) { return st.tenants().Find(t->path).valid(); });
    auto r = ctl.Execute(TenantUpserted{*spec}, audit);
    if (!r) return ReplyError(res, r.error());
    Reply(res, existed ? 200 : 201, {{"path", t->path}});
  }

  // Whether `who` may create, delete or move a tenant at `path`: it must see the parent (or,
  // with `visible`, the tenant itself; else 404, as if nothing were there) and manage it (403).
  // Top-level tenants are the platform-admin's.
  static Status MayManageUnder(const ClusterState& st, const Principal& who, const std::string& path, const char* field,
                               bool visible) {
    std::string parent_path(ParentPath(path));
    TenantId parent = parent_path.empty() ? st.tenants().root() : st.tenants().Find(parent_path);
    if ((!parent.valid() || !Allowed(st.tenants(), who, Action::kRead, parent)) && !visible) {
      return NotFound(std::string(field) + ": the parent '" + parent_path + "' does not exist");
    }
    if (!parent.valid() || !Allowed(st.tenants(), who, Action::kManage, parent) ||
        (parent == st.tenants().root() && who.role != Role::kPlatformAdmin)) {
      return Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) + " may not manage tenants under '" +
                                                 (parent_path.empty() ? "/" : parent_path) + "'");
    }
    return Status::Ok();
  }

  // The guarantees of a changed tree must still fit the fleet: a guarantee the fleet cannot
  // honour is a promise broken on the first busy day. (Checked against the nodes registered
  // now, cordoned ones included; the core does not check it, since bootstrap tenants may come
  // before their nodes.)
  static Status FitsFleet(const ClusterState& st, const QuotaTree& next) {
    Status s = next.ValidateAgainstCapacity(st.fleet().capacity(), st.resource_names());
    return s.ok() ? s : Conflict(s.message());
  }

  // Deletes a leaf tenant with no pending or running jobs; tokens scoped at it are revoked.
  void DeleteTenant(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    std::string path = req.matches[1];
    AuditContext audit = Audit(who, path, "tenant.delete", path, RequestId(req, res));
    Status may = ctl.Read([&](const ClusterState& st) {
      TenantId self = st.tenants().Find(path);
      if (!self.valid() || !Allowed(st.tenants(), who, Action::kRead, self)) {
        return NotFound("tenant '" + path + "' does not exist");
      }
      return MayManageUnder(st, who, path, "tenant", true);
    });
    if (!may.ok()) return Refuse(res, audit, may);
    auto r = ctl.Execute(TenantRemoved{path}, audit);
    if (!r) return ReplyError(res, r.error());
    Reply(res, 200, {{"path", path}, {"deleted", true}});
  }

  // Moves a subtree: {"path": "org/team", "to": "other-org/team"}. The caller manages both the
  // old parent and the new one; quotas are checked at the new place; running jobs move along.
  void MoveTenant(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    AuditContext audit = Audit(who, "", "tenant.move", "", RequestId(req, res));
    auto parsed = ParseStrictJson(req.body);
    if (!parsed) return Refuse(res, audit, parsed.error());
    Json body = std::move(*parsed);
    if (!body.is_object()) return Refuse(res, audit, InvalidArgument("body: expected {\"path\", \"to\"}"));
    for (const char* key : {"path", "to"}) {
      if (!body.contains(key) || !body[key].is_string()) {
        return Refuse(res, audit, InvalidArgument(std::string(key) + ": required, a tenant path"));
      }
    }
    for (const auto& [key, value] : body.items()) {
      if (key != "path" && key != "to") return Refuse(res, audit, InvalidArgument(key + ": unknown field; expected path, to"));
    }
    std::string path = body["path"], to = body["to"];
    audit.tenant = path;
    audit.target = path + " -> " + to;
    if (Status s = CheckTenantPath("to", to); !s.ok()) return Refuse(res, audit, s);
    Status may = ctl.Read([&](const ClusterState& st) {
      TenantId self = st.tenants().Find(path);
      if (!self.valid() || !Allowed(st.tenants(), who, Action::kRead, self)) {
        return NotFound("path: tenant '" + path + "' does not exist");
      }
      if (Status s = MayManageUnder(st, who, path, "path", true); !s.ok()) return s;
      TenantId there = st.tenants().Find(to);
      if (Status s = MayManageUnder(st, who, to, "to", there.valid() && Allowed(st.tenants(), who, Action::kRead, there));
          !s.ok()) {
        return s;
      }
      QuotaTree next = st.tenants();
      if (auto moved = next.Move(path, to, st.resource_names()); !moved) return moved.error();
      return FitsFleet(st, next);
    });
    if (!may.ok()) return Refuse(res, audit, may);
    auto r = ctl.Execute(TenantMoved{path, to}, audit);
    if (!r) return ReplyError(res, r.error());
    Reply(res, 200, {{"path", to}, {"from", path}});
  }

  // The watch stream: events with a sequence number > since, waiting up to `wait` seconds (at
  // most 30) for the first. Only what the caller may see: its tenants' jobs and tenants, the
  // fleet (tokens and audit records are not streamed: see /v1/audit). A caller far behind gets
  // pages of up to kJournalPage events read back from the journal; `last` is where to go on.
  static constexpr size_t kJournalPage = 1000;
  std::optional<LongPoll> WatchEvents(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    auto since = IntParam(req, "since", 0, INT64_MAX, 0);
    if (!since) {
      ReplyError(res, since.error());
      return std::nullopt;
    }
    auto wait = IntParam(req, "wait", 0, 30, 0);
    if (!wait) {
      ReplyError(res, wait.error());
      return std::nullopt;
    }
    // Parked (holding no thread) until an event comes or the wait ends.
    return LongPoll{"", std::chrono::steady_clock::now() + std::chrono::seconds(*wait),
                    [this, since = static_cast<uint64_t>(*since), who](httplib::Response& res, bool last) {
                      return AnswerEvents(since, who, res, last);
                    }};
  }

  // The events after `since` the caller may see, written to `res`; false (nothing written)
  // while there are none and this is not the last look.
  bool AnswerEvents(uint64_t since, const Principal& who, httplib::Response& res, bool last_look) {
    uint64_t oldest = 0;
    auto events = ctl.EventsSince(since, std::chrono::milliseconds(0), &oldest);
    if (since + 1 < oldest) {
      // Further behind than memory keeps (or from before a restart): read a page back from the
      // journal; the caller goes on from `last`.
      auto old = ctl.JournalEvents(since, kJournalPage);
      if (!old) {
        ReplyError(res, old.error());
        return true;
      }
      events = std::move(*old);
    }
    if (events.empty() && !last_look) return false;
    ctl.Read([&](const ClusterState& st) {
      Json out = Json::array();
      uint64_t last = since;
      for (const auto& [seq, e] : events) {
        last = seq;
        Json j = {{"seq", seq}, {"time", Seconds(e.time_ms)}, {"type", EventTypeName(e)}};
        TenantId tenant;
        bool fleet = false, sensitive = false;
        auto job_of = [&](JobId id) {
          if (id.valid() && id.value() < st.jobs().size()) {
            j["job"] = st.job(id).spec.name;
            tenant = st.job(id).spec.tenant;
          }
        };
        std::visit([&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, JobSubmitted>) {
            j["job"] = b.spec.name;
            tenant = b.spec.tenant;
          } else if constexpr (std::is_same_v<T, JobPlaced> || std::is_same_v<T, JobRejected> || std::is_same_v<T, JobStopped> ||
                               std::is_same_v<T, JobFinished> || std::is_same_v<T, JobCancelled> ||
                               std::is_same_v<T, JobPreemptionStarted> || std::is_same_v<T, ReservationSet> ||
                               std::is_same_v<T, JobFailed>) {
            job_of(b.job);
          } else if constexpr (std::is_same_v<T, TenantUpserted>) {
            j["tenant"] = b.spec.path;
            tenant = st.tenants().Find(b.spec.path);
          } else if constexpr (std::is_same_v<T, TenantRemoved>) {
            // Gone now: whoever may see its parent may see that it went.
            j["tenant"] = b.path;
            std::string_view parent = ParentPath(b.path);
            tenant = parent.empty() ? TenantId() : st.tenants().Find(parent);
          } else if constexpr (std::is_same_v<T, TenantMoved>) {
            j["tenant"] = b.to;
            j["from"] = b.path;
            tenant = st.tenants().Find(b.to);
          } else if constexpr (std::is_same_v<T, NodeAdded> || std::is_same_v<T, NodeRegistered>) {
            j["node"] = b.spec.name;
            fleet = true;
          } else if constexpr (std::is_same_v<T, NodeConditionChanged> || std::is_same_v<T, MigRelayout> ||
                               std::is_same_v<T, NodeFailed> || std::is_same_v<T, MigLayoutReported>) {
            if (b.node.valid() && b.node.value() < st.fleet().size()) j["node"] = st.fleet().node(b.node).name;
            if constexpr (std::is_same_v<T, MigRelayout> || std::is_same_v<T, MigLayoutReported>) j["gpu"] = b.gpu;
            fleet = true;
          } else {
            sensitive = true;  // tokens and audit records: see /v1/audit
          }
        }, e.body);
        bool visible = who.role == Role::kPlatformAdmin || fleet ||
                       (!sensitive && tenant.valid() && Allowed(st.tenants(), who, Action::kRead, tenant));
        if (!visible) continue;
        if (tenant.valid() && !j.contains("tenant")) j["tenant"] = st.tenants().tenant(tenant).path;
        out.push_back(std::move(j));
      }
      Reply(res, 200, {{"events", out}, {"last", last}});
      return 0;
    });
    return true;
  }

  void IssueToken(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    AuditContext audit = Audit(who, "", "token.issue", "", RequestId(req, res));
    TokenBody body;
    Status parsed = ParseTokenBody(req.body, body);
    audit.target = body.principal;
    audit.tenant = body.scope;
    if (!parsed.ok()) return Refuse(res, audit, parsed);
    const std::string &principal = body.principal, &role_name = body.role_name, &scope_path = body.scope;
    const std::optional<Role> role = body.role;
    // A node token's principal is the node it acts for, or "*" for any.
    if (Status s = *role == Role::kNode ? (principal == "*" ? Status::Ok() : CheckName("principal", principal))
                                        : CheckPrincipal("principal", principal);
        !s.ok()) {
      return Refuse(res, audit, s);
    }
    Status may = Status::Ok();
    TenantId scope = ctl.Read([&](const ClusterState& st) {
      TenantId t = scope_path.empty() ? st.tenants().root() : st.tenants().Find(scope_path);
      if (!t.valid() || !Allowed(st.tenants(), who, Action::kRead, t)) return TenantId();
      may = MayIssue(st.tenants(), who, *role, t);
      return t;
    });
    if (!scope.valid()) return Refuse(res, audit, NotFound("scope: tenant '" + scope_path + "' does not exist"));
    if (!may.ok()) return Refuse(res, audit, may);
    std::string token = NewToken();
    auto r = ctl.Execute(TokenIssued{TokenRecord{HashToken(token), Principal{principal, *role, scope}, 0, false}}, audit);
    if (!r) return ReplyError(res, r.error());
    Reply(res, 201, {{"token", token}, {"principal", principal}, {"role", role_name}, {"scope", scope_path}});
  }

  void SubmitJob(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    AuditContext audit = Audit(who, "", "job.submit", "", RequestId(req, res));
    if (req.body.empty()) return Refuse(res, audit, InvalidArgument("body: expected a job as JSON"));
    auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "job");
    if (!tree) return Refuse(res, audit, tree.error());
    auto job = ReadJobObject(*tree, "body");
    if (!job) return Refuse(res, audit, job.error());
    audit.target = job->spec.name;
    audit.tenant = job->tenant;
    Status resolved = ctl.Read([&](const ClusterState& st) {
      // A tenant outside the caller's scope is as unknown as one that does not exist.
      TenantId t = st.tenants().Find(job->tenant);
      if (t.valid() && !Allowed(st.tenants(), who, Action::kRead, t)) {
        return InvalidArgument("job.tenant: unknown tenant '" + job->tenant + "'; expected a path listed under tenants");
      }
      if (t.valid() && !Allowed(st.tenants(), who, Action::kSubmit, t)) {
        return Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) + " may not submit jobs");
      }
      return ResolveJob(*job, st, "job.");
    });
    if (!resolved.ok()) return Refuse(res, audit, resolved);
    job->spec.submit_ms = ctl.now_ms();
    std::string name = job->spec.name;
    TenantId tenant = job->spec.tenant;
    auto r = ctl.Execute(JobSubmitted{std::move(job->spec)}, audit);
    if (!r) return ReplyError(res, r.error());
    ctl.ReadView([&](const Controller::View& v) {
      Reply(res, 201, JobJson(v, v.state.job(v.state.FindJob(tenant, name))));
      return 0;
    });
  }

  // Resource-hours per tenant (each over its subtree) in a window: `from` and `to` are Unix
  // seconds or RFC 3339 UTC times ("2026-11-01T00:00:00Z"); the default is the last 24 hours.
  // Runs still going count up to now. `tenant` narrows to one subtree.
  void Usage(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    int64_t now = ctl.now_ms();
    auto time_param = [&](const char* key, int64_t def) { return TimeParam(req, key, def); };
    auto to = time_param("to", now);
    if (!to) return ReplyError(res, to.error());
    auto from = time_param("from", *to - 24 * 3600 * 1000);
    if (!from) return ReplyError(res, from.error());
    if (*from >= *to) {
      return ReplyError(res, InvalidArgument("from: " + FormatApiTime(*from) + " is not before to (" + FormatApiTime(*to) + ")"));
    }
    std::string tenant = req.has_param("tenant") ? req.get_param_value("tenant") : "";
    ctl.ReadView([&](const Controller::View& v) {
      const QuotaTree& tree = v.state.tenants();
      TenantId scope = tree.root();
      if (!tenant.empty()) {
        scope = tree.Find(tenant);
        if (!scope.valid() || !Allowed(tree, who, Action::kRead, scope)) {
          ReplyError(res, NotFound("tenant '" + tenant + "' does not exist"));
          return 0;
        }
      }
      WindowUsage u = UsageOver(v.state, *from, *to, v.now_ms);
      auto cost = WindowCost(ctl, v.state, *from, *to, v.now_ms);  // with a rate card
      auto hours = [](__int128 amount_ms, int64_t unit) {
        // amount·ms → unit-hours, to the thousandth (exact integer division first).
        __int128 milli = amount_ms * 1000 / (static_cast<__int128>(unit) * 3600 * 1000);
        return static_cast<double>(static_cast<int64_t>(milli)) / 1000.0;
      };
      Json rows = Json::array();
      for (const Tenant& t : tree.tenants()) {
        if (t.id == tree.root() || t.removed || !Allowed(tree, who, Action::kRead, t.id)) continue;
        if (!InSubtree(tree, t.id, scope)) continue;
        const ResourceTime& rt = u.by_tenant[t.id.value()];
        Json gpu = Json::object();
        for (int i = kFirstGpu; i < v.state.resource_names().size(); ++i) {
          if (rt[i] != 0) gpu[v.state.resource_names().Name(static_cast<ResourceId>(i)).substr(4)] = hours(rt[i], kGpuUnit);
        }
        rows.push_back({{"path", t.path},
                        {"jobs", u.jobs[t.id.value()]},
                        {"gpu_hours", gpu},
                        {"cpu_hours", hours(rt[kCpu], kMilli)},
                        {"memory_gib_hours", hours(rt[kMemory], 1024)}});
        if (cost) {
          rows.back()["cost"] = {{"amount_micros", (*cost)[t.id.value()]}, {"amount", FormatMicros((*cost)[t.id.value()])},
                                 {"currency", ctl.metering()->billing().card.currency}};
        }
      }
      Reply(res, 200, {{"from", FormatApiTime(*from)}, {"to", FormatApiTime(*to)}, {"tenants", rows}});
      return 0;
    });
  }

  void ListJobs(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    std::string tenant = req.has_param("tenant") ? req.get_param_value("tenant") : "";
    std::string state = req.has_param("state") ? req.get_param_value("state") : "";
    auto limit = IntParam(req, "limit", 1, 1000, 100);
    if (!limit) return ReplyError(res, limit.error());
    auto after = IntParam(req, "after", 0, INT32_MAX, -1);
    if (!after) return ReplyError(res, after.error());
    static const std::set<std::string> kStates = {"", "pending", "running", "preempting", "finished", "rejected", "cancelled"};
    if (!kStates.count(state)) {
      return ReplyError(res, InvalidArgument("state: '" + state + "' is not valid; expected pending, running, preempting, "
                                             "finished, rejected or cancelled"));
    }
    ctl.ReadView([&](const Controller::View& v) {
      TenantId scope;
      if (!tenant.empty()) {
        scope = v.state.tenants().Find(tenant);
        if (!scope.valid() || !Allowed(v.state.tenants(), who, Action::kRead, scope)) {
          ReplyError(res, NotFound("tenant '" + tenant + "' does not exist"));
          return 0;
        }
      }
      Json jobs = Json::array();
      Json next;
      for (size_t i = static_cast<size_t>(*after + 1); i < v.state.jobs().size(); ++i) {
        const Job& j = v.state.jobs()[i];
        if (!state.empty() && state != JobStateName(j.state)) continue;
        if (!Allowed(v.state.tenants(), who, Action::kRead, j.spec.tenant)) continue;
        if (scope.valid()) {
          bool inside = false;
          for (TenantId a = j.spec.tenant; a.valid() && !inside; a = v.state.tenants().tenant(a).parent) inside = a == scope;
          if (!inside) continue;
        }
        if (static_cast<int64_t>(jobs.size()) == *limit) {
          next = static_cast<int64_t>(i) - 1;
          break;
        }
        jobs.push_back(JobJson(v, j));
      }
      Reply(res, 200, {{"jobs", jobs}, {"next_after", next}});
      return 0;
    });
  }

  void Explain(const httplib::Request& req, httplib::Response& res, const Principal& who) {
    ctl.ReadView([&](const Controller::View& v) {
      auto found = LookupJob(v.state, who, req);
      if (!found) {
        ReplyError(res, found.error());
        return 0;
      }
      JobId id = *found;
      const Job& j = v.state.job(id);
      Json demand = Json::object();
      for (ResourceId r : {kCpu, kMemory}) demand[v.state.resource_names().Name(r)] = FormatAmount(r, j.demand.Get(r));
      if (j.demand.gpu > 0) demand[v.state.resource_names().Name(j.demand.gpu_resource)] = FormatGpus(j.demand.gpu);
      Json out = JobJson(v, j);
      out["demand"] = demand;
      out["topology"] = TopologyName(j.spec.topology);
      out["priority"] = j.spec.priority;
      if (v.state.reservation() && v.state.reservation()->job == id) out["reserved_start"] = Seconds(v.state.reservation()->start_ms);
      Reply(res, 200, out);
      return 0;
    });
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
  Controller* ctl = &m.ctl;
  o.wait_for_change = [ctl](uint64_t seen, std::chrono::milliseconds wait) { return ctl->WaitForEvents(seen, wait); };
  m.server = std::make_unique<HttpServer>(m.http, std::move(o));
  if (Status s = m.server->Start(); !s.ok()) {
    m.server.reset();
    return s;
  }
  port_ = m.server->port();
  return Status::Ok();
}

void ApiServer::Stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->Stop();
}

HttpStats ApiServer::http_stats() const { return impl_->server ? impl_->server->stats() : HttpStats{}; }

}  // namespace allot
