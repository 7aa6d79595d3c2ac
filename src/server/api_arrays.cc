// Arrays of the REST API (docs/arrays.md): list them with their progress, show one with its
// elements, cancel one (every element not yet ended). Submitted through POST /v1/jobs. An array
// of a tenant the caller cannot see does not exist for it.
#include <httplib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/names.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "server/job_lookup.h"

namespace allot {
namespace {

// The array named in the route, as LookupJob finds a job: by ?tenant=, else among the tenants
// the caller may read (several: 409 naming them).
Result<TenantId> LookupArray(const ClusterState& st, const Principal& who, const std::string& name,
                             const std::optional<std::string>& tenant) {
  const QuotaTree& tree = st.tenants();
  Status missing = NotFound("array '" + EscapeText(name) + "' does not exist" +
                            (tenant ? " in tenant '" + EscapeText(*tenant) + "'" : std::string()));
  if (tenant) {
    TenantId t = tree.Find(*tenant);
    if (!t.valid() || !Allowed(tree, who, Action::kRead, t) || st.ArrayElements(t, name).empty()) return Err(missing);
    return t;
  }
  std::vector<TenantId> found;
  for (const auto& [key, ids] : st.arrays()) {
    TenantId t(key.first);
    if (key.second == name && Allowed(tree, who, Action::kRead, t)) found.push_back(t);
  }
  if (found.empty()) return Err(missing);
  if (found.size() == 1) return found.front();
  std::vector<std::string> paths;
  for (TenantId t : found) paths.push_back(tree.tenant(t).path);
  std::sort(paths.begin(), paths.end());
  std::string list;
  for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + p;
  return Err(Conflict("array '" + EscapeText(name) + "' exists in " + std::to_string(paths.size()) + " tenants (" + list +
                      "); expected ?tenant=PATH to say which"));
}

void ListArrays(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::optional<std::string> tenant = TenantParam(req);
  ctx.ctl.ReadView([&](const Controller::View& v) {
    Result<TenantId> scope = ListScope(v.state, who, tenant);
    if (!scope) return ReplyError(res, scope.error());
    // By submission (the first element's id), so a new array comes last.
    std::vector<std::pair<JobId, const ClusterState::ArrayKey*>> order;
    for (const auto& entry : v.state.arrays()) {
      TenantId t(entry.first.first);
      if (!InListScope(v.state, who, *scope, t)) continue;
      order.push_back({entry.second.front(), &entry.first});
    }
    std::sort(order.begin(), order.end());
    Json arrays = Json::array();
    for (const auto& [first, key] : order) arrays.push_back(ArrayJson(v, TenantId(key->first), key->second, /*elements=*/false));
    Reply(res, 200, {{"arrays", arrays}});
  });
}

void GetArray(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  ctx.ctl.ReadView([&](const Controller::View& v) {
    auto t = LookupArray(v.state, who, name, TenantParam(req));
    if (!t) return ReplyError(res, t.error());
    Reply(res, 200, ArrayJson(v, *t, name, /*elements=*/true));
  });
}

void CancelArray(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  AuditContext audit = AuditOf(who, "", "array.cancel", name, ctx.request_id(req, res));
  Status may = Status::Ok();
  TenantId tenant;
  std::vector<EventBody> cancels;
  ctx.ctl.Read([&](const ClusterState& st) {
    auto t = LookupArray(st, who, name, TenantParam(req));
    if (!t) {
      may = t.error();
      return 0;
    }
    tenant = *t;
    audit.tenant = st.tenants().tenant(tenant).path;
    if (!Allowed(st.tenants(), who, Action::kSubmit, tenant)) {
      may = MayNot(who, "cancel jobs");
      return 0;
    }
    for (JobId id : st.ArrayElements(tenant, name)) {
      JobState s = st.job(id).state;
      if (s == JobState::kPending || s == JobState::kRunning || s == JobState::kPreempting) cancels.push_back(JobCancelled{id});
    }
    return 0;
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  if (cancels.empty()) return ctx.refuse(res, audit, FailedPrecondition("array '" + EscapeText(name) + "' has ended: no element is pending or running"));
  // An element that ended between the read and the batch is refused alone; the rest are cancelled.
  ctx.ctl.ExecuteAll(std::move(cancels), audit);
  ctx.ctl.ReadView([&](const Controller::View& v) { Reply(res, 200, ArrayJson(v, tenant, name, /*elements=*/false)); });
}

}  // namespace

void ArrayRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Get("/v1/arrays", ctx.Handle(ListArrays));
  http.Get(R"(/v1/arrays/([^/]+))", ctx.Handle(GetArray));
  http.Post(R"(/v1/arrays/([^/]+)/cancel)", ctx.Handle(CancelArray));
}

}  // namespace allot
