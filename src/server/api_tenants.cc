// The tenant tree over the REST API: list (the caller's subtree), create or update, move and
// delete — the caller manages the parent — and usage with its cost over a window.
#include <map>
#include <set>

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "billing/zoneinfo.h"
#include "core/quantity.h"
#include "metering/business_hours.h"
#include "server/api_bodies.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/auth.h"
#include "server/api_billing.h"
#include "server/body_reader.h"
#include "spec/job_spec.h"
#include "scheduler/tenant_explain.h"
#include "spec/tenant_spec.h"
#include "state/usage.h"

namespace allot {
namespace {

void ListTenants(RouteContext& ctx, const httplib::Request&, httplib::Response& res, const Principal& who) {
  Json tenants = ctx.ctl.Read([&](const ClusterState& st) {
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
                     {"max_reserved", AmountsJson(st, t.max_reserved, true)},
                     {"business_hours", t.business_hours.empty() ? Json() : Json(t.business_hours)},
                     {"usage", AmountsJson(st, t.usage, false)}});
    }
    return out;
  });
  Reply(res, 200, {{"tenants", tenants}});
}

Status MayManageUnder(const ClusterState& st, const Principal& who, const std::string& path, const char* field,
                      bool visible);

// The spec reader checked the business hours' form; their zone must also be in the tz database,
// or the alerts could never read them.
Status CheckBusinessHoursZone(const std::string& hours_text, const std::string& field) {
  if (hours_text.empty()) return Status::Ok();
  auto hours = ParseBusinessHours(hours_text, field);
  if (!hours) return hours.error();
  auto zone = LoadTimeZone(hours->zone);
  if (!zone) return InvalidArgument(field + ": '" + hours_text + "': " + zone.error().message());
  return Status::Ok();
}
Status FitsFleet(const ClusterState& st, const QuotaTree& next);

// Creates or updates a tenant. The caller manages its parent: an org-admin shapes the teams
// of its org (within the org's own guarantee, which the tree enforces) but not the org itself.
void UpsertTenant(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "tenant.upsert", "", ctx.request_id(req, res));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "tenant");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  auto t = ReadTenantObject(*tree, "body");
  if (!t) return ctx.refuse(res, audit, t.error());
  audit.target = t->path;
  audit.tenant = t->path;
  if (Status s = CheckBusinessHoursZone(t->business_hours, "tenant.business_hours"); !s.ok()) return ctx.refuse(res, audit, s);
  Result<TenantSpec> spec = Err(Status());
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
    TenantId self = st.tenants().Find(t->path);
    bool self_visible = self.valid() && Allowed(st.tenants(), who, Action::kRead, self);
    if (Status s = MayManageUnder(st, who, t->path, "tenant.path", self_visible); !s.ok()) return s;
    spec = ResolveTenant(*t, st.resource_names(), "tenant.");
    if (!spec) return spec.error();
    QuotaTree next = st.tenants();
    if (auto up = next.Upsert(*spec, st.resource_names()); !up) return up.error();
    return FitsFleet(st, next);
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  bool existed = ctx.ctl.Read([&](const ClusterState& st) { return st.tenants().Find(t->path).valid(); });
  auto r = ctx.ctl.Execute(TenantUpserted{*spec}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, existed ? 200 : 201, {{"path", t->path}});
}

// Whether `who` may create, delete or move a tenant at `path`: it must see the parent (or,
// with `visible`, the tenant itself; else 404, as if nothing were there) and manage it (403).
// Top-level tenants are the platform-admin's.
Status MayManageUnder(const ClusterState& st, const Principal& who, const std::string& path, const char* field,
                             bool visible) {
  std::string parent_path(ParentPath(path));
  TenantId parent = parent_path.empty() ? st.tenants().root() : st.tenants().Find(parent_path);
  if ((!parent.valid() || !Allowed(st.tenants(), who, Action::kRead, parent)) && !visible) {
    return NotFound(std::string(field) + ": the parent '" + parent_path + "' does not exist");
  }
  if (!parent.valid() || !Allowed(st.tenants(), who, Action::kManage, parent) ||
      (parent == st.tenants().root() && who.role != Role::kPlatformAdmin)) {
    return MayNot(who, "manage tenants under '" + (parent_path.empty() ? "/" : parent_path) + "'");
  }
  return Status::Ok();
}

// The guarantees of a changed tree must still fit the fleet: a guarantee the fleet cannot
// honour is a promise broken on the first busy day. (Checked against the nodes registered
// now, cordoned ones included; the core does not check it, since bootstrap tenants may come
// before their nodes.)
Status FitsFleet(const ClusterState& st, const QuotaTree& next) {
  Status s = next.ValidateAgainstCapacity(st.fleet().capacity(), st.resource_names());
  return s.ok() ? s : Conflict(s.message());
}

// Deletes a leaf tenant with no pending or running jobs; tokens scoped at it are revoked.
void DeleteTenant(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string path = req.matches[1];
  AuditContext audit = AuditOf(who, path, "tenant.delete", path, ctx.request_id(req, res));
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
    TenantId self = st.tenants().Find(path);
    if (!self.valid() || !Allowed(st.tenants(), who, Action::kRead, self)) {
      return NotFound("tenant '" + path + "' does not exist");
    }
    return MayManageUnder(st, who, path, "tenant", true);
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(TenantRemoved{path}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, {{"path", path}, {"deleted", true}});
}

// "Why is my share X" (scheduler/tenant_explain.h): GET /v1/tenants/PATH/explain. Tenants the
// caller cannot read appear without their path (their shares still explain the caller's place).
void ExplainTenantRoute(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string path = req.matches[1];
  ctx.ctl.ReadView([&](const Controller::View& v) {
    const ClusterState& st = v.state;
    const QuotaTree& tree = st.tenants();
    TenantId self = tree.Find(path);
    if (!self.valid() || !Allowed(tree, who, Action::kRead, self)) {
      return ReplyError(res, NotFound("tenant '" + path + "' does not exist; expected a path listed by GET /v1/tenants"));
    }
    // Its ancestors are named in its own path, so they are shown too.
    auto visible = [&](TenantId t) { return Allowed(tree, who, Action::kRead, t) || InSubtree(tree, self, t); };
    auto name = [&](TenantId t) { return visible(t) ? tree.tenant(t).path : std::string("a tenant you cannot see"); };
    auto tenant_json = [&](TenantId t) { return visible(t) ? Json(tree.tenant(t).path) : Json(); };
    const ResourceNames& names = st.resource_names();
    TenantExplanation e = ExplainTenant(st, self, v.now_ms);

    Json shares = Json::array(), usage = Json::object(), guarantee = Json::object(), max = Json::object();
    for (const ResourceShareLine& l : e.shares) {
      const std::string& rn = names.Name(l.resource);
      Json line = {{"resource", rn},
                   {"usage", FormatAmount(l.resource, l.usage)},
                   {"guaranteed_usage", FormatAmount(l.resource, l.guaranteed_usage)},
                   {"capacity", FormatAmount(l.resource, l.capacity)},
                   {"share", FormatShare(l.share)}};
      usage[rn] = FormatAmount(l.resource, l.usage);
      if (l.has_guarantee) line["guarantee"] = guarantee[rn] = FormatAmount(l.resource, l.guarantee);
      if (l.max != kUnlimited) line["max"] = max[rn] = FormatAmount(l.resource, l.max);
      shares.push_back(line);
    }
    Json siblings = Json::array();
    for (const SiblingShare& s : e.level) {
      Json g = Json::object();
      for (int i = 0; i < names.size(); ++i) {
        ResourceId r = static_cast<ResourceId>(i);
        int64_t eg = tree.EffectiveGuarantee(s.tenant, r);
        if (eg > 0) g[names.Name(r)] = FormatAmount(r, eg);
      }
      siblings.push_back({{"tenant", tenant_json(s.tenant)},
                          {"self", s.tenant == self},
                          {"dominant_resource", s.share == Share{0, 1} ? Json() : Json(names.Name(s.dominant))},
                          {"dominant_share", FormatShare(s.share)},
                          {"usage", AmountsJson(st, s.usage, false)},
                          {"guarantee", g}});
    }
    // Loans grouped by resource: {"resource", "amount", "from"|"to": [{"tenant", "amount"}]}.
    auto loans_json = [&](const std::vector<Loan>& loans, const char* side) {
      Json out = Json::array();
      for (size_t i = 0; i < loans.size();) {
        ResourceId r = loans[i].resource;
        int64_t total = 0;
        Json parts = Json::array();
        for (; i < loans.size() && loans[i].resource == r; ++i) {
          total += loans[i].amount;
          Json part = {{"tenant", loans[i].other.valid() ? tenant_json(loans[i].other) : Json()},
                       {"amount", FormatAmount(r, loans[i].amount)}};
          if (!loans[i].other.valid()) part["unguaranteed"] = true;
          parts.push_back(part);
        }
        out.push_back({{"resource", names.Name(r)}, {"amount", FormatAmount(r, total)}, {side, parts}});
      }
      return out;
    };
    Json reclaim = Json::array();
    for (const ReclaimLine& l : e.reclaim_first) {
      const Job& j = st.job(l.job);
      Json demand = Json::object();
      for (ResourceId r : {kCpu, kMemory}) demand[names.Name(r)] = FormatAmount(r, j.demand.Get(r));
      if (j.demand.gpu > 0) demand[names.Name(j.demand.gpu_resource)] = FormatGpus(j.demand.gpu);
      reclaim.push_back({{"job", j.spec.name},
                         {"id", j.id.value()},
                         {"tenant", tree.tenant(j.spec.tenant).path},
                         {"resources", demand},
                         {"class", "burstable"},
                         {"order", l.resource == kCpu ? "cpu" : names.Name(l.resource)},
                         {"rank", l.rank + 1},
                         {"of", l.of},
                         {"priority", j.spec.priority},
                         {"started", Seconds(j.last_started_ms)}});
    }
    Reply(res, 200,
          {{"tenant", tree.tenant(self).path},
           {"weight", FormatMilli(e.weight)},
           {"dominant_resource", e.dominant_share == Share{0, 1} ? Json() : Json(names.Name(e.dominant))},
           {"dominant_share", FormatShare(e.dominant_share)},
           {"usage", usage},
           {"guarantee", guarantee},
           {"max", max},
           {"shares", shares},
           {"siblings", siblings},
           {"borrowed", loans_json(e.borrowed, "from")},
           {"lent", loans_json(e.lent, "to")},
           {"reclaim_first", reclaim},
           {"summary", SummariseTenant(st, e, name)}});
  });
}

// Moves a subtree: {"path": "org/team", "to": "other-org/team"}. The caller manages both the
// old parent and the new one; quotas are checked at the new place; running jobs move along.
void MoveTenant(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "tenant.move", "", ctx.request_id(req, res));
  MoveBody body;
  if (Status s = ParseMoveBody(req.body, body); !s.ok()) return ctx.refuse(res, audit, s);
  const std::string &path = body.path, &to = body.to;
  audit.tenant = path;
  audit.target = path + " -> " + to;
  if (Status s = CheckTenantPath("to", to); !s.ok()) return ctx.refuse(res, audit, s);
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
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
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(TenantMoved{path, to}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, {{"path", to}, {"from", path}});
}

// Resource-hours per tenant (each over its subtree) in a window: `from` and `to` are Unix
// seconds or RFC 3339 UTC times ("2026-11-01T00:00:00Z"); the default is the last 24 hours.
// Runs still going count up to now. `tenant` narrows to one subtree.
void Usage(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  int64_t now = ctx.ctl.now_ms();
  auto time_param = [&](const char* key, int64_t def) { return TimeParam(req, key, def); };
  auto to = time_param("to", now);
  if (!to) return ReplyError(res, to.error());
  auto from = time_param("from", *to - 24 * 3600 * 1000);
  if (!from) return ReplyError(res, from.error());
  if (*from >= *to) {
    return ReplyError(res, InvalidArgument("from: " + FormatApiTime(*from) + " is not before to (" + FormatApiTime(*to) + ")"));
  }
  std::string tenant = req.has_param("tenant") ? req.get_param_value("tenant") : "";
  ctx.ctl.ReadView([&](const Controller::View& v) {
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
    auto cost = WindowCost(ctx.ctl, v.state, *from, *to, v.now_ms);  // with a rate card
    auto hours = [](__int128 amount_ms, int64_t unit) {
      // amount·ms → unit-hours, to the thousandth (exact integer division first).
      __int128 milli = amount_ms * 1000 / (static_cast<__int128>(unit) * 3600 * 1000);
      return static_cast<double>(static_cast<int64_t>(milli)) / 1000.0;
    };
    // Each confirmed reservation's whole-GPU time inside the window, by model (issue 16), and the
    // GPU time its jobs ran in it (runs of class reserved): what is left is idle reserved time.
    std::vector<std::pair<const CapacityReservation*, __int128>> reserved;
    for (const CapacityReservation& r : v.state.reservations()) {
      if (r.state != ReservationState::kConfirmed) continue;
      if (__int128 gpu_ms = r.BookedUnitMs(*from, *to); gpu_ms > 0) reserved.emplace_back(&r, gpu_ms);
    }
    std::vector<std::pair<const Job*, __int128>> ran_reserved;
    if (!reserved.empty()) {
      for (const Job& j : v.state.jobs()) {
        if (j.spec.reservation.empty()) continue;
        __int128 gpu_ms = 0;
        auto add = [&](int64_t a, int64_t b) {
          a = std::max(a, *from);
          b = std::min(b, *to);
          if (a < b) gpu_ms += static_cast<__int128>(b - a) * j.demand.gpu;
        };
        for (const Job::RunSpan& r : j.ended_runs) {
          if (r.admission == AdmissionClass::kReserved) add(r.start_ms, r.end_ms);
        }
        if (j.admission == AdmissionClass::kReserved && j.last_started_ms >= 0) {
          if (j.holds_resources()) add(j.last_started_ms, v.now_ms);
          if (j.state == JobState::kFinished || j.state == JobState::kFailed) add(j.last_started_ms, j.finished_ms);
        }
        if (gpu_ms > 0) ran_reserved.emplace_back(&j, gpu_ms);
      }
    }
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
      std::map<ResourceId, __int128> booked;
      for (const auto& [r, gpu_ms] : reserved) {
        if (InSubtree(tree, r->spec.tenant, t.id)) booked[r->spec.gpu_resource] += gpu_ms;
      }
      if (!booked.empty()) {
        std::map<ResourceId, __int128> used;
        for (const auto& [j, gpu_ms] : ran_reserved) {
          if (InSubtree(tree, j->spec.tenant, t.id)) used[j->spec.gpu_resource] += gpu_ms;
        }
        Json by_model = Json::object(), idle = Json::object();
        for (const auto& [res_id, gpu_ms] : booked) {
          const std::string model = v.state.resource_names().Name(res_id).substr(4);
          by_model[model] = hours(gpu_ms, kGpuUnit);
          idle[model] = hours(std::max<__int128>(0, gpu_ms - used[res_id]), kGpuUnit);
        }
        rows.back()["reserved_gpu_hours"] = by_model;
        rows.back()["idle_reserved_gpu_hours"] = idle;
      }
      if (cost) {
        rows.back()["cost"] = {{"amount_micros", (*cost)[t.id.value()]}, {"amount", FormatMicros((*cost)[t.id.value()])},
                               {"currency", ctx.ctl.metering()->billing().card.currency}};
      }
    }
    Reply(res, 200, {{"from", FormatApiTime(*from)}, {"to", FormatApiTime(*to)}, {"tenants", rows}});
    return 0;
  });
}

}  // namespace

void TenantRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Get("/v1/tenants", ctx.Handle(ListTenants));
  http.Post("/v1/tenants", ctx.Handle(UpsertTenant));
  http.Post("/v1/tenants/move", ctx.Handle(MoveTenant));
  http.Get(R"(/v1/tenants/(.+)/explain)", ctx.Handle(ExplainTenantRoute));
  http.Delete(R"(/v1/tenants/(.+))", ctx.Handle(DeleteTenant));
  http.Get("/v1/usage", ctx.Handle(Usage));
}

}  // namespace allot
