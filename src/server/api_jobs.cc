// The jobs of the REST API: submit (POST /v1/jobs, a job spec as JSON or YAML), list, show,
// explain (why a job waits) and cancel, each within the caller's scope: a job of a tenant the
// caller cannot see does not exist for it.
#include <map>
#include <set>

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "core/quantity.h"
#include "server/api_interference.h"
#include "server/api_json.h"
#include "server/api_routes.h"
#include "server/api_services.h"
#include "spec/service_reader.h"
#include "server/auth.h"
#include "server/body_reader.h"
#include "server/job_lookup.h"
#include "spec/job_spec.h"
#include "spec/job_template.h"
#include "spec/tenant_spec.h"
#include "state/usage.h"

namespace allot {
namespace {

// One job, an array (its elements), or a list of them (a pipeline): resolved together, refused
// together, then submitted in one batch in dependency order (spec/array_reader.h).
void SubmitJob(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "job.submit", "", ctx.request_id(req, res));
  if (req.body.empty()) return ctx.refuse(res, audit, InvalidArgument("body: expected a job as JSON"));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "job");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  // `kind: service` (or inference with replicas): `allot submit` of a service's file.
  if (IsServiceObject(*tree)) return CreateService(ctx, req, res, who, *tree);
  auto templates = TemplatesNamedBy(ctx, *tree);
  if (!templates) return ctx.refuse(res, audit, templates.error());
  auto batch = ReadJobBatch(*tree, "body", &*templates);
  if (!batch) return ctx.refuse(res, audit, batch.error());
  std::vector<ScenarioJob>& jobs = *batch;
  const ScenarioJob& head = jobs.front();
  audit.target = head.spec.array.empty() ? head.spec.name : head.spec.array.array;
  // The array's name for one array; the first job's, and "…", for a pipeline.
  bool one_array = !head.spec.array.empty() && static_cast<int32_t>(jobs.size()) == head.spec.array.count;
  if (jobs.size() > 1 && !one_array) audit.target += ", …";
  audit.tenant = head.tenant;
  bool single = !tree->IsSequence() && head.spec.array.empty();
  Status resolved = ctx.ctl.Read([&](const ClusterState& st) {
    std::map<std::string, Status> tenants;  // each tenant's scope checked once
    for (size_t i = 0; i < jobs.size(); ++i) {
      ScenarioJob& job = jobs[i];
      std::string where = single ? "job." : "jobs[" + (job.spec.array.empty() ? job.spec.name : job.spec.array.array) + "].";
      auto [it, fresh] = tenants.emplace(job.tenant, Status::Ok());
      if (fresh) {
        // A tenant outside the caller's scope is as unknown as one that does not exist.
        TenantId t = st.tenants().Find(job.tenant);
        if (t.valid() && !Allowed(st.tenants(), who, Action::kRead, t)) {
          it->second = InvalidArgument(where + "tenant: unknown tenant '" + job.tenant + "'; expected a path listed under tenants");
        } else if (t.valid() && !Allowed(st.tenants(), who, Action::kSubmit, t)) {
          it->second = MayNot(who, "submit jobs");
        }
      }
      if (!it->second.ok()) return it->second;
      if (Status s = ResolveJob(job, st, where); !s.ok()) return s;
      if (st.FindJob(job.spec.tenant, job.spec.name).valid()) {
        return Conflict(where + "name: job '" + job.spec.name + "' already exists in tenant '" + job.tenant + "'");
      }
      if (!job.spec.reservation.empty()) {
        if (std::string why = st.ReservationMisfit(job.spec); !why.empty()) return InvalidArgument(where + why);
      }
    }
    return Status::Ok();
  });
  if (!resolved.ok()) return ctx.refuse(res, audit, resolved);
  int64_t now = ctx.ctl.now_ms();
  std::vector<std::pair<TenantId, std::string>> names;
  std::vector<EventBody> events;
  for (ScenarioJob& job : jobs) {
    job.spec.submit_ms = now;
    names.push_back({job.spec.tenant, job.spec.name});
    events.push_back(JobSubmitted{std::move(job.spec)});
  }
  if (single) {
    auto r = ctx.ctl.Execute(std::move(events.front()), audit);
    if (!r) return ReplyError(res, r.error());
  } else {
    // Checked above against the same state, so only a race with another submit refuses one;
    // the jobs before it stay submitted and the answer names the first refusal.
    for (auto& r : ctx.ctl.ExecuteAll(std::move(events), audit)) {
      if (!r) return ReplyError(res, r.error());
    }
  }
  ctx.ctl.ReadView([&](const Controller::View& v) {
    if (single) {
      Reply(res, 201, JobJson(v, v.state.job(v.state.FindJob(names[0].first, names[0].second))));
      return 0;
    }
    Json out_jobs = Json::array();
    Json arrays = Json::array();
    for (const auto& [tenant, name] : names) {
      const Job& j = v.state.job(v.state.FindJob(tenant, name));
      if (j.spec.array.empty()) {
        out_jobs.push_back(JobJson(v, j));
      } else if (j.spec.array.index == 0) {
        arrays.push_back(ArrayJson(v, tenant, j.spec.array.array, /*elements=*/false));
      }
    }
    Reply(res, 201, {{"jobs", out_jobs}, {"arrays", arrays}});
    return 0;
  });
}

void ListJobs(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string tenant = req.has_param("tenant") ? req.get_param_value("tenant") : "";
  std::string state = req.has_param("state") ? req.get_param_value("state") : "";
  auto limit = IntParam(req, "limit", 1, 1000, 100);
  if (!limit) return ReplyError(res, limit.error());
  auto after = IntParam(req, "after", 0, INT32_MAX, -1);
  if (!after) return ReplyError(res, after.error());
  static const std::set<std::string> kStates = {"", "pending", "running", "preempting", "finished", "rejected", "cancelled", "failed"};
  if (!kStates.count(state)) {
    return ReplyError(res, InvalidArgument("state: '" + state + "' is not valid; expected pending, running, preempting, "
                                           "finished, rejected, cancelled or failed"));
  }
  ctx.ctl.ReadView([&](const Controller::View& v) {
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

void Explain(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  ctx.ctl.ReadView([&](const Controller::View& v) {
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
    if (Json in_force = InterferenceOfJob(v.state, id, who); !in_force.empty()) out["interference"] = std::move(in_force);
    Reply(res, 200, out);
    return 0;
  });
}

void GetJob(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  ctx.ctl.ReadView([&](const Controller::View& v) {
    // A job outside the caller's scope does not exist for it.
    auto id = LookupJob(v.state, who, req);
    if (!id) return ReplyError(res, id.error());
    Reply(res, 200, JobJson(v, v.state.job(*id)));
  });
}

void CancelJob(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  // Filed under the job's tenant once found; a refusal before that under none.
  AuditContext audit = AuditOf(who, "", "job.cancel", name, ctx.request_id(req, res));
  Status may = Status::Ok();
  JobId id = ctx.ctl.Read([&](const ClusterState& st) {
    auto j = LookupJob(st, who, req);
    if (!j) {
      may = j.error();
      return JobId();
    }
    audit.tenant = st.tenants().tenant(st.job(*j).spec.tenant).path;
    if (!Allowed(st.tenants(), who, Action::kSubmit, st.job(*j).spec.tenant)) {
      may = MayNot(who, "cancel jobs");
    }
    return *j;
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(JobCancelled{id}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.ReadView([&](const Controller::View& v) { Reply(res, 200, JobJson(v, v.state.job(id))); return 0; });
}

}  // namespace

void JobRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/jobs", ctx.Handle(SubmitJob));
  http.Get("/v1/jobs", ctx.Handle(ListJobs));
  http.Get(R"(/v1/jobs/([^/]+))", ctx.Handle(GetJob));
  http.Get(R"(/v1/jobs/([^/]+)/explain)", ctx.Handle(Explain));
  http.Post(R"(/v1/jobs/([^/]+)/cancel)", ctx.Handle(CancelJob));
}

}  // namespace allot
