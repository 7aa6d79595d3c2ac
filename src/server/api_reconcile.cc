// GET /v1/reconciliation?from&to&tolerance_s&tolerance_pct (issue 6, "Reconciliation"): per
// allocation that ended in the window, the scheduler's GPU-ms against what the node agents
// reported, listing the differences beyond the tolerance, runs no agent reported and reports
// with no allocation (metering/reconcile.h). Platform-admins and auditors over the whole tree,
// as the ledger.
#include "metering/reconcile.h"
#include "server/api_billing.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "core/quantity.h"

namespace allot {
namespace {

Result<ReconcileOptions> ParseOptions(const httplib::Request& req, int64_t now) {
  auto time_param = [&](const char* key, int64_t def) { return TimeParam(req, key, def); };
  // A decimal from 0 to max_milli, in thousandths ("5", "2.5").
  auto milli_param = [&](const char* key, int64_t def, int64_t max_milli, const char* what) -> Result<int64_t> {
    if (!req.has_param(key)) return def;
    std::string v = req.get_param_value(key);
    auto m = ParseMilli(v);
    if (!m || *m < 0 || *m > max_milli) return Err(InvalidArgument(std::string(key) + ": '" + v + "' is not valid; expected " + what));
    return *m;
  };
  ReconcileOptions o;
  auto to = time_param("to", now);
  if (!to) return Err(to.error());
  auto from = time_param("from", *to - 24 * 3600 * 1000);
  if (!from) return Err(from.error());
  if (*from >= *to) {
    return Err(InvalidArgument("from: " + FormatApiTime(*from) + " is not before to (" + FormatApiTime(*to) + ")"));
  }
  auto tol = milli_param("tolerance_s", o.tolerance_ms, 86400 * kMilli, "seconds from 0 to 86400, like 5 or 0.5");
  if (!tol) return Err(tol.error());
  auto pct = milli_param("tolerance_pct", o.tolerance_pct_milli, 100 * kMilli, "a percentage from 0 to 100, like 2 or 0.5");
  if (!pct) return Err(pct.error());
  o.from_ms = *from;
  o.to_ms = *to;
  o.tolerance_ms = *tol;
  o.tolerance_pct_milli = *pct;
  return o;
}

Json RowJson(const ClusterState& st, const ReconcileRow& r) {
  Json j{{"finding", FindingName(r.finding)},
         {"job", st.job(r.job).spec.name},
         {"tenant", st.tenants().tenant(st.job(r.job).spec.tenant).path},  // job names repeat across tenants
         {"run", r.run},
         {"tasks", r.tasks},
         {"tasks_reported", r.tasks_reported},
         {"scheduler_gpu_ms", UnitsMsToGpuMs(r.scheduler_units_ms)},
         {"agent_gpu_ms", UnitsMsToGpuMs(r.agent_units_ms)},
         {"difference_gpu_ms", UnitsMsToGpuMs(r.agent_units_ms - r.scheduler_units_ms)}};
  if (r.start_ms >= 0) {
    j["start"] = Seconds(r.start_ms);
    j["end"] = Seconds(r.end_ms);
  }
  if (r.task >= 0) j["task"] = r.task;
  if (!r.node.empty()) j["node"] = r.node;
  return j;
}

void Reconciliation(Controller& ctl, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  bool whole_tree = who.scope == TenantId(0);
  if (!(who.role == Role::kPlatformAdmin || (who.role == Role::kAuditor && whole_tree))) {
    return ReplyError(res, Status(Code::kPermissionDenied, std::string("a ") + RoleName(who.role) +
                                                                (whole_tree ? "" : " scoped below the root") +
                                                                " may not read the reconciliation; expected a "
                                                                "platform-admin or an auditor over the whole tree"));
  }
  auto o = ParseOptions(req, ctl.now_ms());
  if (!o) return ReplyError(res, o.error());
  ctl.Read([&](const ClusterState& st) {
    ReconcileReport report = Reconcile(st, *o);
    Json rows = Json::array();
    for (const ReconcileRow& r : report.rows) rows.push_back(RowJson(st, r));
    Reply(res, 200, {{"from", FormatApiTime(o->from_ms)},
                     {"to", FormatApiTime(o->to_ms)},
                     {"tolerance_s", FormatMilli(o->tolerance_ms)},
                     {"tolerance_pct", FormatMilli(o->tolerance_pct_milli)},
                     {"allocations", report.allocations},
                     {"within", report.within},
                     {"findings", rows}});
    return 0;
  });
}

}  // namespace

void ReconcileRoutes(HttpRouter& http, RouteContext& ctx) {
  Controller& ctl = ctx.ctl;
  http.Get("/v1/reconciliation", ctx.authed([&ctl](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    Reconciliation(ctl, req, res, who);
  }));
}

}  // namespace allot
