// GET /v1/alerts: the anomalies allotd raised (daemon/alert_monitor.h), newest last, with what
// became of their webhook deliveries. Fleet-wide (sources of failed logins, every tenant's
// names), so for the platform-admin and an auditor of the whole tree only (docs/security.md).
#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/calendar.h"
#include "server/api_routes.h"

namespace allot {
namespace {

void ListAlerts(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  bool whole_tree = ctx.ctl.Read([&](const ClusterState& st) { return who.scope == st.tenants().root(); });
  if (who.role != Role::kPlatformAdmin && !(who.role == Role::kAuditor && whole_tree)) {
    return ctx.refuse(res, AuditOf(who, "", "alerts.read", "/v1/alerts", ctx.request_id(req, res)),
                      MayNot(who, "read alerts (platform-admin, or an auditor of the whole tree)"));
  }
  auto after = IntParam(req, "after", 0, INT64_MAX, 0);
  if (!after) return ReplyError(res, after.error());
  Json alerts = Json::array();
  Json delivery = nullptr;
  if (ctx.alerts) {
    for (const AlertMonitor::Kept& k : ctx.alerts->Since(static_cast<uint64_t>(*after))) {
      Json a = AlertJson(k.alert);
      a["id"] = k.id;
      alerts.push_back(std::move(a));
    }
    AlertMonitor::Counts c = ctx.alerts->counts();
    delivery = {{"webhook", ctx.alerts->webhook()}, {"delivered", c.delivered}, {"failed_attempts", c.failed_attempts},
                {"dropped", c.dropped}};
  }
  Reply(res, 200, {{"alerts", alerts}, {"delivery", delivery}});
}

}  // namespace

void AlertRoutes(HttpRouter& http, RouteContext& ctx) { http.Get("/v1/alerts", ctx.Handle(ListAlerts)); }

}  // namespace allot
