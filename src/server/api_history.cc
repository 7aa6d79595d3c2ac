// GET /v1/history[?since=T]: the samples the dashboard charts (daemon/history.h), each with the
// fleet's GPUs per model (the fleet is everyone's to see, as /v1/nodes is) and only the tenants
// the caller may read.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "core/resources.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"

namespace allot {
namespace {

void GetHistory(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto since = TimeParam(req, "since", 0);
  if (!since) return ReplyError(res, since.error());
  std::vector<HistorySample> samples = ctx.history->Since(*since);
  Json rows = ctx.ctl.Read([&](const ClusterState& st) {
    const QuotaTree& tree = st.tenants();
    // Whom the caller may read, by tenant id, looked up once (the tree only grows: ids stay).
    std::vector<char> readable(tree.tenants().size(), 0);
    for (const Tenant& t : tree.tenants()) readable[t.id.value()] = Allowed(tree, who, Action::kRead, t.id);
    Json out = Json::array();
    for (const HistorySample& s : samples) {
      Json fleet = Json::array();
      for (const HistorySample::Model& m : s.fleet) fleet.push_back({{"model", m.model}, {"allocated", m.allocated}, {"idle", m.idle}});
      Json tenants = Json::array();
      for (const HistorySample::TenantRow& t : s.tenants) {
        if (t.id.value() >= readable.size() || !readable[t.id.value()]) continue;
        tenants.push_back({{"tenant", t.path},
                           {"gpus", static_cast<double>(t.gpu_units * 1000 / kGpuUnit) / 1000.0},
                           {"pending", t.pending},
                           {"oldest_wait_s", t.oldest_wait_ms / 1000}});
      }
      out.push_back({{"time", FormatApiTime(s.time_ms)}, {"fleet", fleet}, {"tenants", tenants}});
    }
    return out;
  });
  Reply(res, 200, {{"interval_s", Seconds(ctx.history->interval_ms())}, {"capacity", ctx.history->capacity()}, {"samples", rows}});
}

}  // namespace

void HistoryRoutes(HttpRouter& http, RouteContext& ctx) { http.Get("/v1/history", ctx.Handle(GetHistory)); }

}  // namespace allot
