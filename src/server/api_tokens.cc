// Tokens and the audit log over the REST API: managers issue, list and revoke the tokens of
// their scope (never a stronger role); auditors and managers read the hash-chained audit log.
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "core/quantity.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "server/api_bodies.h"

namespace allot {
namespace {

void ListAudit(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto after_param = IntParam(req, "after", 0, INT32_MAX, -1);
  if (!after_param) return ReplyError(res, after_param.error());
  int64_t after = *after_param;
  ctx.ctl.Read([&](const ClusterState& st) {
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
    if (!may) return ReplyError(res, MayNot(who, "read the audit log"));
    Reply(res, 200, {{"records", records}});
  });
}

// Who the token is: its principal, role and scope (the dashboard's login shows them).
void WhoAmI(RouteContext& ctx, const httplib::Request&, httplib::Response& res, const Principal& who) {
  std::string scope = ctx.ctl.Read([&](const ClusterState& st) { return st.tenants().tenant(who.scope).path; });
  Reply(res, 200, {{"principal", who.name}, {"role", RoleName(who.role)}, {"scope", scope}});
}

void ListTokens(RouteContext& ctx, const httplib::Request&, httplib::Response& res, const Principal& who) {
  // The live tokens whose scope the caller manages, by id (the hash's first 16 hex digits).
  Json tokens = ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    for (const auto& [hash, r] : st.access().tokens()) {
      if (r.revoked || !Allowed(st.tenants(), who, Action::kManage, r.principal.scope)) continue;
      out.push_back({{"id", hash.substr(0, 16)}, {"principal", r.principal.name}, {"role", RoleName(r.principal.role)},
                     {"scope", st.tenants().tenant(r.principal.scope).path}, {"issued", Seconds(r.issued_ms)}});
    }
    return out;
  });
  Reply(res, 200, {{"tokens", tokens}});
}

void RevokeToken(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string id = req.matches[1];
  AuditContext audit = AuditOf(who, "", "token.revoke", id, ctx.request_id(req, res));
  std::string hash;
  ctx.ctl.Read([&](const ClusterState& st) {
    for (const auto& [h, r] : st.access().tokens()) {
      if (h.rfind(id, 0) == 0 && !r.revoked && Allowed(st.tenants(), who, Action::kManage, r.principal.scope)) {
        hash = h;
        audit.tenant = st.tenants().tenant(r.principal.scope).path;
      }
    }
    return 0;
  });
  if (hash.empty()) return ctx.refuse(res, audit, NotFound("token " + id + " does not exist"));
  auto r = ctx.ctl.Execute(TokenRevoked{hash}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, {{"id", id}, {"revoked", true}});
}

void IssueToken(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "token.issue", "", ctx.request_id(req, res));
  TokenBody body;
  Status parsed = ParseTokenBody(req.body, body);
  audit.target = body.principal;
  audit.tenant = body.scope;
  if (!parsed.ok()) return ctx.refuse(res, audit, parsed);
  const std::string &principal = body.principal, &role_name = body.role_name, &scope_path = body.scope;
  const std::optional<Role> role = body.role;
  // A node token's principal is the node it acts for, or "*" for any.
  if (Status s = *role == Role::kNode ? (principal == "*" ? Status::Ok() : CheckName("principal", principal))
                                      : CheckPrincipal("principal", principal);
      !s.ok()) {
    return ctx.refuse(res, audit, s);
  }
  Status may = Status::Ok();
  TenantId scope = ctx.ctl.Read([&](const ClusterState& st) {
    TenantId t = scope_path.empty() ? st.tenants().root() : st.tenants().Find(scope_path);
    if (!t.valid() || !Allowed(st.tenants(), who, Action::kRead, t)) return TenantId();
    may = MayIssue(st.tenants(), who, *role, t);
    return t;
  });
  if (!scope.valid()) return ctx.refuse(res, audit, NotFound("scope: tenant '" + scope_path + "' does not exist"));
  if (!may.ok()) return ctx.refuse(res, audit, may);
  std::string token = NewToken();
  auto r = ctx.ctl.Execute(TokenIssued{TokenRecord{HashToken(token), Principal{principal, *role, scope}, 0, false}}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 201, {{"token", token}, {"principal", principal}, {"role", role_name}, {"scope", scope_path}});
}

}  // namespace

void TokenRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Get("/v1/audit", ctx.Handle(ListAudit));
  http.Get("/v1/tokens", ctx.Handle(ListTokens));
  http.Get("/v1/whoami", ctx.Handle(WhoAmI));
  http.Post(R"(/v1/tokens/([0-9a-f]{16})/revoke)", ctx.Handle(RevokeToken));
  http.Post("/v1/tokens", ctx.Handle(IssueToken));
}

}  // namespace allot
