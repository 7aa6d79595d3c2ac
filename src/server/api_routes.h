// What the API's route files share: replies in the API's JSON forms, and the server's
// authentication, request ids and audited refusals, handed to the route groups, one file each
// (server/api_agent.cc, api_nodes.cc, api_billing.cc, api_reconcile.cc, ...): every route is
// registered as `http.Get(pattern, ctx.authed(handler))` over this one context.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/agent_registry.h"
#include "daemon/alert_monitor.h"
#include "daemon/controller.h"
#include "daemon/history.h"
#include "server/api_json.h"
#include "server/http_server.h"
#include "server/cluster_wire.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace allot {

class InterferenceMonitor;  // daemon/interference_monitor.h
class TemplateCatalog;      // spec/job_template.h
class AutoscaleMonitor;     // daemon/autoscale_monitor.h

void Reply(httplib::Response& res, int status, const Json& body);
// {"error": {"code", "message"}} with the status's HTTP code.
void ReplyError(httplib::Response& res, const Status& s);
// A time query parameter (Unix seconds or RFC 3339, core/calendar.h), `fallback` when absent; the error
// names the parameter and the value.
Result<int64_t> TimeParam(const httplib::Request& req, const char* key, int64_t fallback);
// An integer query parameter from lo to hi (decimal digits, an optional '-'; no overflow),
// `fallback` when absent (nullopt: required). The error names the parameter, the value and
// the range.
Result<int64_t> IntParam(const httplib::Request& req, const char* key, int64_t lo, int64_t hi,
                         std::optional<int64_t> fallback);

struct RouteContext {
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, const Principal&)>;
  using LongPollHandler = std::function<std::optional<LongPoll>(const httplib::Request&, httplib::Response&, const Principal&)>;
  Controller& ctl;
  // Node agents' sessions (heartbeats, telemetry, task reports, health).
  std::shared_ptr<AgentRegistry> agents;
  // Wraps a handler that needs a caller: 401 without a valid token, 429 past its rate.
  std::function<HttpRouter::Handler(Handler)> authed;
  // The same for a long poll, which counts against its token's cap of waiting requests.
  std::function<HttpRouter::LongPollHandler(LongPollHandler)> authed_long_poll;
  // A route answered on the I/O thread when it can (HttpRouter::PostInline): the caller is
  // authenticated there, then `fast` answers and returns nothing, or returns what a worker is to
  // run for the same caller (having changed nothing: what it read it may hand on). A caller
  // refused (an audited refusal: a journal commit) is refused on a worker, by `slow`.
  using FastHandler = std::function<Handler(const httplib::Request&, httplib::Response&, const Principal&)>;
  std::function<HttpRouter::InlineHandler(FastHandler fast, Handler slow)> authed_inline;
  // The request's id (the caller's X-Request-Id or one of ours), echoed in the response.
  std::function<std::string(const httplib::Request&, httplib::Response&)> request_id;
  // Answers a refusal found before any command, recording it in the audit log first.
  std::function<void(httplib::Response&, const AuditContext&, const Status&)> refuse;
  // The same for refusals a flood could repeat (a node's): at most 10 a second are recorded,
  // with a count of those left out.
  std::function<void(httplib::Response&, const AuditContext&, const Status&)> refuse_limited;
  // Where agents' task logs are kept (allotd: DATA/logs); empty: logs are not kept.
  std::string log_dir;
  // A node whose agent is silent this long is lost; agents stop their tasks after lease_ms
  // without a heartbeat answered, before allotd requeues them elsewhere.
  int64_t node_timeout_ms = 15000;
  int64_t lease_ms() const { return node_timeout_ms * 2 / 3; }
  int64_t heartbeat_ms = 1000;
  // Where dedicated clusters' ports are taken from (server/agent_wire.h, DesiredClusters).
  ClusterPorts cluster_ports;
  // allotd's cluster-key, from which each window's munge key is derived (server/cluster_wire.h);
  // empty: agents get no multi-node Slurm (each runs one of its own node).
  std::string cluster_secret;
  // Acceptance of booked nodes starts this long before a window (scheduler/acceptance.h).
  int64_t acceptance_lead_ms = 10 * 60 * 1000;
  // The anomaly alerts (GET /v1/alerts); nullptr: none raised.
  std::shared_ptr<AlertMonitor> alerts;
  // The fleet and tenants sampled over time (daemon/history.h), for GET /v1/history.
  std::shared_ptr<const History> history;
  // The noisy-neighbour detector fed by heartbeats (daemon/interference_monitor.h); null: off.
  std::shared_ptr<InterferenceMonitor> interference;
  // The services' autoscaler (daemon/autoscale_monitor.h), fed by heartbeats; null: off.
  std::shared_ptr<AutoscaleMonitor> autoscale;

  // A route function over this context, as an authenticated handler:
  // `http.Get("/v1/jobs", ctx.Handle(ListJobs))`.
  using Route = void (*)(RouteContext&, const httplib::Request&, httplib::Response&, const Principal&);
  HttpRouter::Handler Handle(Route f) {
    return authed([this, f](const httplib::Request& req, httplib::Response& res, const Principal& who) { f(*this, req, res, who); });
  }
  // `fast` on the I/O thread, else `slow` on a worker (authed_inline).
  using FastRoute = Handler (*)(RouteContext&, const httplib::Request&, httplib::Response&, const Principal&);
  HttpRouter::InlineHandler HandleInline(FastRoute fast, Route slow) {
    return authed_inline(
        [this, fast](const httplib::Request& req, httplib::Response& res, const Principal& who) { return fast(*this, req, res, who); },
        [this, slow](const httplib::Request& req, httplib::Response& res, const Principal& who) { slow(*this, req, res, who); });
  }
};

// The audit context of a request by `who`: filed under `tenant` ("" none), `action` on `target`.
inline AuditContext AuditOf(const Principal& who, std::string tenant, std::string action, std::string target,
                            std::string request_id) {
  return AuditContext{who.name, who.role, std::move(tenant), std::move(action), std::move(target), std::move(request_id)};
}

// A refusal of what the caller's role lacks, naming the role: "a member may not submit jobs".
inline Status MayNot(const Principal& who, const std::string& what) {
  return Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) + " may not " + what);
}

// POST /v1/jobs; GET /v1/jobs, /v1/jobs/{name}, /v1/jobs/{name}/explain; POST /v1/jobs/{name}/cancel.
void JobRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/arrays, /v1/arrays/{name}; POST /v1/arrays/{name}/cancel (server/api_arrays.cc).
void ArrayRoutes(HttpRouter& http, RouteContext& ctx);
// GET, POST /v1/tenants; POST /v1/tenants/move; DELETE /v1/tenants/{path}; GET /v1/usage.
void TenantRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/events (a long poll).
void EventRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/audit; GET, POST /v1/tokens; POST /v1/tokens/{id}/revoke; GET /v1/whoami.
void TokenRoutes(HttpRouter& http, RouteContext& ctx);
// POST /v1/agent/register, /v1/agent/heartbeat, /v1/agent/logs; GET /v1/agent/assignments.
void AgentRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/interference (server/api_interference.cc).
void InterferenceRoutes(HttpRouter& http, RouteContext& ctx);
// GET, POST /v1/services; GET, PATCH, DELETE /v1/services/{name}; POST /v1/services/{name}/
// {update,rollback,scale} (server/api_services.cc).
void ServiceRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/nodes, /v1/nodes/{name}; POST /v1/nodes/{name}/{cordon,drain,uncordon,check};
// GET /v1/jobs/{name}/logs.
void NodeRoutes(HttpRouter& http, RouteContext& ctx);
// Invoices, the ledger and its adjustments, budgets (server/api_billing.h lists them).
void BillingRoutes(HttpRouter& http, RouteContext& ctx);
// POST, GET /v1/reservations; GET, DELETE, PATCH /v1/reservations/{name}.
void ReservationRoutes(HttpRouter& http, RouteContext& ctx);
// POST, GET /v1/keys; DELETE /v1/keys/{id}: tenants' SSH public keys (api_keys.cc).
void KeyRoutes(HttpRouter& http, RouteContext& ctx);
// POST, GET /v1/templates; GET, DELETE /v1/templates/{name}: tenants' job templates (api_templates.cc).
void TemplateRoutes(HttpRouter& http, RouteContext& ctx);
// The templates the jobs or service of a body may name (docs/templates.md): those of their
// tenants and their tenants' ancestors, copied out, so the body is read unlocked and a submit
// parses only these (server/api_templates.cc).
Result<TemplateCatalog> TemplatesNamedBy(RouteContext& ctx, const YAML::Node& tree);
// GET /v1/availability, /v1/calendar (server/api_availability.cc).
void AvailabilityRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/reconciliation (server/api_reconcile.cc): scheduler vs agent-reported usage.
void ReconcileRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/alerts (server/api_alerts.cc): the anomalies raised and their webhook deliveries.
void AlertRoutes(HttpRouter& http, RouteContext& ctx);
// GET /v1/history (server/api_history.cc): fleet and tenant samples over time, for the dashboard's charts.
void HistoryRoutes(HttpRouter& http, RouteContext& ctx);
// GET /, /ui/{file}: the web dashboard's static files, no token (server/api_web.cc).
void WebRoutes(HttpRouter& http, RouteContext& ctx);

}  // namespace allot
