// Inference services in the REST API (docs/services.md): create (POST /v1/services, or a
// `kind: service` body to POST /v1/jobs), list, show (each replica's node, port, state, revision
// and restarts: what a load balancer follows), delete, scale, update (a rolling update) and
// rollback. Scoped like jobs: a service of a tenant the caller cannot see does not exist for it.
#include <httplib.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "core/quantity.h"
#include "scheduler/service_reconciler.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/api_services.h"
#include "server/auth.h"
#include "server/body_reader.h"
#include "server/job_environment_json.h"
#include "server/job_lookup.h"
#include "spec/job_template.h"
#include "spec/job_environment_reader.h"
#include "spec/service_reader.h"

namespace allot {
namespace {

// The service named by the route's first match, as LookupJob finds a job: ?tenant= or the one
// visible service of that name; a hidden one reads as missing.
Result<ServiceId> LookupService(const ClusterState& st, const Principal& who, const httplib::Request& req) {
  std::string name = req.matches[1];
  std::optional<std::string> tenant = TenantParam(req);
  Status missing = NotFound("service '" + EscapeText(name) + "' does not exist" +
                            (tenant ? " in tenant '" + EscapeText(*tenant) + "'" : ""));
  std::vector<ServiceId> visible;
  for (const Service& s : st.services()) {
    if (s.deleted || s.spec.name != name || !Allowed(st.tenants(), who, Action::kRead, s.spec.tenant)) continue;
    if (tenant && st.tenants().tenant(s.spec.tenant).path != *tenant) continue;
    visible.push_back(s.id);
  }
  if (visible.empty()) return Err(missing);
  if (visible.size() == 1) return visible[0];
  std::string list;
  for (ServiceId id : visible) list += (list.empty() ? "" : ", ") + st.tenants().tenant(st.service(id).spec.tenant).path;
  return Err(Conflict("service '" + EscapeText(name) + "' exists in " + std::to_string(visible.size()) + " tenants (" + list +
                      "); expected ?tenant=PATH to say which"));
}

Json ReplicaJson(const ClusterState& st, const Service& v, const ServiceReplica& r) {
  const Job& j = st.job(r.job);
  Json nodes = Json::array();
  for (const TaskPlacement& p : j.placement) {
    const std::string& n = st.fleet().node(p.node).name;
    if (j.holds_resources() && std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  int64_t restart_at = RestartAtMs(j, r);
  Json out = {{"name", j.spec.name},
              {"slot", r.slot},
              {"state", ReplicaStateName(j)},
              {"job_state", JobStateName(j.state)},
              {"revision", r.revision},
              {"current", r.revision == v.revision},
              {"node", nodes.empty() ? Json() : nodes[0]},
              {"nodes", nodes},
              {"port", r.port},
              {"class", j.admission == AdmissionClass::kNone ? Json() : Json(AdmissionClassName(j.admission))},
              {"restarts", r.restarts},
              {"crashes", r.crashes},
              {"requeues", j.requeues},
              {"last_exit", r.last_exit.empty() ? Json() : Json(r.last_exit)},
              {"started", j.holds_resources() ? Json(FormatApiTime(j.last_started_ms)) : Json()},
              {"next_restart", restart_at >= 0 ? Json(FormatApiTime(restart_at)) : Json()}};
  if (j.state != JobState::kRunning && !j.reason.empty()) out["reason"] = j.reason;
  return out;
}

}  // namespace

Json ServiceJson(const Controller::View& v, const Service& s) {
  const ClusterState& st = v.state;
  Json replicas = Json::array();
  int32_t running = 0, restarts = 0, updated = 0;
  for (const ServiceReplica& r : s.replicas) {
    Json x = ReplicaJson(st, s, r);
    if (x["state"] == "running") ++running;
    if (st.job(r.job).state == JobState::kPending && !v.ReasonOf(r.job).empty()) x["reason"] = v.ReasonOf(r.job);
    restarts += r.restarts;
    updated += r.revision == s.revision;
    replicas.push_back(std::move(x));
  }
  const JobSpec& t = s.current();
  Json out = {{"name", s.spec.name},
              {"tenant", st.tenants().tenant(s.spec.tenant).path},
              {"state", s.deleted ? "deleted" : running == s.desired ? "ready" : running == 0 ? "unavailable" : "degraded"},
              {"revision", s.revision},
              {"revisions", s.templates.size()},
              {"desired", s.desired},
              {"running", running},
              {"updated", updated},
              {"replicas", replicas},
              {"restarts", restarts},
              {"replaced", s.replaced},
              {"spread", SpreadName(s.spec.spread)},
              {"port", s.spec.port > 0 ? Json(s.spec.port) : Json()},
              {"max_unavailable", s.spec.max_unavailable},
              {"max_surge", s.spec.max_surge},
              {"command", t.command},
              {"created", FormatApiTime(s.created_ms)}};
  if (!t.environment.empty()) out["environment"] = EnvironmentJson(t.environment);
  if (s.spec.autoscaled()) {
    const AutoscaleSpec& a = s.spec.autoscale;
    out["autoscale"] = {{"min_replicas", s.spec.min_replicas},
                        {"max_replicas", s.spec.max_replicas},
                        {"target", FormatMilli(a.target_milli)},
                        {"stable_window", FormatDuration(a.stable_window_ms)},
                        {"panic_window", FormatDuration(a.panic_window_ms)},
                        {"panic_threshold", FormatMilli(a.panic_threshold_milli)},
                        {"scale_down_delay", FormatDuration(a.scale_down_delay_ms)}};
  }
  if (s.scaled_ms >= 0) out["scaled"] = {{"at", FormatApiTime(s.scaled_ms)}, {"why", s.scale_reason}};
  if (s.deleted) out["deleted"] = FormatApiTime(s.deleted_ms);
  return out;
}

void CreateService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who,
                   const YAML::Node& tree) {
  AuditContext audit = AuditOf(who, "", "service.create", "", ctx.request_id(req, res));
  auto templates = TemplatesNamedBy(ctx, tree);
  if (!templates) return ctx.refuse(res, audit, templates.error());
  auto svc = ReadServiceObject(tree, "body", &*templates);
  if (!svc) return ctx.refuse(res, audit, svc.error());
  audit.target = svc->spec.name;
  audit.tenant = svc->replica.tenant;
  Status resolved = ctx.ctl.Read([&](const ClusterState& st) {
    TenantId t = st.tenants().Find(svc->replica.tenant);
    if (t.valid() && !Allowed(st.tenants(), who, Action::kRead, t)) {
      return InvalidArgument("service.tenant: unknown tenant '" + svc->replica.tenant + "'; expected a path listed under tenants");
    }
    if (t.valid() && !Allowed(st.tenants(), who, Action::kSubmit, t)) return MayNot(who, "create services");
    return ResolveService(*svc, st, "service.");
  });
  if (!resolved.ok()) return ctx.refuse(res, audit, resolved);
  std::string name = svc->spec.name;
  TenantId tenant = svc->spec.tenant;
  auto r = ctx.ctl.Execute(ServiceCreated{std::move(svc->spec)}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.ReadView([&](const Controller::View& v) {
    Reply(res, 201, ServiceJson(v, v.state.service(v.state.FindService(tenant, name))));
    return 0;
  });
}

namespace {

void PostService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  if (req.body.empty()) {
    return ctx.refuse(res, AuditOf(who, "", "service.create", "", ctx.request_id(req, res)),
                      InvalidArgument("body: expected a service as JSON or YAML"));
  }
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "service");
  if (!tree) return ctx.refuse(res, AuditOf(who, "", "service.create", "", ctx.request_id(req, res)), tree.error());
  CreateService(ctx, req, res, who, *tree);
}

void ListServices(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::optional<std::string> tenant = TenantParam(req);
  ctx.ctl.ReadView([&](const Controller::View& v) {
    Result<TenantId> scope = ListScope(v.state, who, tenant);
    if (!scope) {
      ReplyError(res, scope.error());
      return 0;
    }
    Json out = Json::array();
    for (const Service& s : v.state.services()) {
      if (s.deleted || !InListScope(v.state, who, *scope, s.spec.tenant)) continue;
      out.push_back(ServiceJson(v, s));
    }
    Reply(res, 200, {{"services", out}});
    return 0;
  });
}

void GetService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  ctx.ctl.ReadView([&](const Controller::View& v) {
    auto id = LookupService(v.state, who, req);
    if (!id) return ReplyError(res, id.error());
    Reply(res, 200, ServiceJson(v, v.state.service(*id)));
  });
}

// A change to a found service: looked up, the caller's right to submit in its tenant checked, the
// command built from the service by `make`, executed with an audit record, the service answered.
template <class Make>
void Change(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who, const char* action,
            const char* verb, Make make) {
  AuditContext audit = AuditOf(who, "", action, std::string(req.matches[1]), ctx.request_id(req, res));
  ServiceId id;
  Result<EventBody> command = Err(Status());
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
    auto found = LookupService(st, who, req);
    if (!found) return found.error();
    id = *found;
    const Service& s = st.service(id);
    audit.tenant = st.tenants().tenant(s.spec.tenant).path;
    if (!Allowed(st.tenants(), who, Action::kSubmit, s.spec.tenant)) return MayNot(who, verb);
    command = make(st, s);
    return command ? Status::Ok() : command.error();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(std::move(*command), audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.ReadView([&](const Controller::View& v) {
    Reply(res, 200, ServiceJson(v, v.state.service(id)));
    return 0;
  });
}

void DeleteService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  Change(ctx, req, res, who, "service.delete", "delete services",
         [](const ClusterState&, const Service& s) -> Result<EventBody> { return EventBody(ServiceDeleted{s.id}); });
}

void ScaleService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body.empty() ? "{}" : req.body, "scale");
  Change(ctx, req, res, who, "service.scale", "scale services", [&](const ClusterState&, const Service& s) -> Result<EventBody> {
    if (!tree) return Err(tree.error());
    YamlReader rd("body");
    TRY_STATUS(rd.Fields(*tree, "scale", {"replicas"}));
    if (!(*tree)["replicas"]) return Err(rd.Error(*tree, "scale.replicas", "required"));
    int64_t lo = s.spec.autoscaled() ? s.spec.min_replicas : 0, hi = s.spec.autoscaled() ? s.spec.max_replicas : kMaxServiceReplicas;
    int64_t n = 0;
    TRY_ASSIGN(n, rd.Integer((*tree)["replicas"], "scale.replicas", lo, hi));
    return EventBody(ServiceScaled{s.id, static_cast<int32_t>(n), "scaled to " + std::to_string(n) + " by " + who.name});
  });
}

// The body of an update: any of command (a list), image and env (a mapping NAME: VALUE, each set
// over the current template's variables).
void UpdateService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body.empty() ? "{}" : req.body, "update");
  Change(ctx, req, res, who, "service.update", "update services", [&](const ClusterState& st, const Service& s) -> Result<EventBody> {
    if (!tree) return Err(tree.error());
    YamlReader rd("body");
    const YAML::Node& n = *tree;
    TRY_STATUS(rd.Fields(n, "update", {"command", "image", "env"}));
    if (!n["command"] && !n["image"] && !n["env"]) {
      return Err(rd.Error(n, "update", "nothing to change; expected command, image or env"));
    }
    JobSpec next = s.current();
    if (const YAML::Node c = n["command"]) {
      if (!c.IsSequence() || c.size() == 0) return Err(rd.Error(c, "update.command", "expected the program and its arguments as a list"));
      next.command.clear();
      for (size_t i = 0; i < c.size(); ++i) {
        std::string arg;
        TRY_ASSIGN(arg, rd.Scalar(c[i], "update.command[" + std::to_string(i) + "]"));
        next.command.push_back(std::move(arg));
      }
      if (next.command[0].empty()) return Err(rd.Error(c[0], "update.command[0]", "expected the program to run, not an empty string"));
    }
    // The image and variables read as a job's are, then laid over the current template's.
    YAML::Node env_only;
    if (n["image"]) env_only["image"] = n["image"];
    if (n["env"]) env_only["env"] = n["env"];
    JobSpec read = next;
    read.environment = {};
    if (env_only.size() > 0) TRY_STATUS(ReadJobEnvironment(rd, env_only, "update", st.tenants().tenant(s.spec.tenant).path, read));
    if (n["image"]) next.environment.image = read.environment.image;
    for (const auto& [k, val] : read.environment.env) {
      auto& env = next.environment.env;
      auto it = std::lower_bound(env.begin(), env.end(), k, [](const auto& kv, const std::string& key) { return kv.first < key; });
      if (it != env.end() && it->first == k) {
        it->second = val;
      } else {
        env.insert(it, {k, val});
      }
    }
    if (next == s.current()) return Err(InvalidArgument("update: the service already runs that (revision " + std::to_string(s.revision) + ")"));
    std::string what;
    if (n["command"]) what += " command";
    if (n["image"]) what += " image";
    if (n["env"]) what += " env";
    return EventBody(ServiceUpdated{s.id, std::move(next), "update by " + who.name + ":" + what});
  });
}

void RollbackService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  Change(ctx, req, res, who, "service.rollback", "roll back services", [&](const ClusterState&, const Service& s) -> Result<EventBody> {
    if (s.revision < 2) return Err(FailedPrecondition("service '" + s.spec.name + "' has no revision before " + std::to_string(s.revision)));
    return EventBody(ServiceUpdated{s.id, s.templates[s.revision - 2], "rollback by " + who.name + " to the template of revision " +
                                                                        std::to_string(s.revision - 1)});
  });
}

}  // namespace

void ServiceRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/services", ctx.Handle(PostService));
  http.Get("/v1/services", ctx.Handle(ListServices));
  http.Get(R"(/v1/services/([^/]+))", ctx.Handle(GetService));
  http.Delete(R"(/v1/services/([^/]+))", ctx.Handle(DeleteService));
  http.Patch(R"(/v1/services/([^/]+))", ctx.Handle(UpdateService));
  http.Post(R"(/v1/services/([^/]+)/update)", ctx.Handle(UpdateService));
  http.Post(R"(/v1/services/([^/]+)/rollback)", ctx.Handle(RollbackService));
  http.Post(R"(/v1/services/([^/]+)/scale)", ctx.Handle(ScaleService));
}

}  // namespace allot
