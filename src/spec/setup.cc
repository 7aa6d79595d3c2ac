#include "spec/setup.h"

#include <algorithm>

#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"

namespace allot {
namespace {

Status At(const Scenario& sc, int line, const std::string& path, const std::string& msg) {
  return InvalidArgument(sc.file + ":" + std::to_string(line) + ": " + path + ": " + msg);
}


}  // namespace



Status BuildInitialState(Scenario& sc, ClusterState& state, const std::function<void(const Event&)>& on_event) {
  auto apply = [&](Event e) {
    Status s = state.apply(e);
    if (s.ok() && on_event) on_event(e);
    return s;
  };
  for (const NodeSpec& n : sc.nodes) {
    Status s = apply({0, NodeAdded{n}});
    if (!s.ok()) return InvalidArgument(sc.file + ": fleet: " + s.message());
  }
  for (const ScenarioTenant& t : sc.tenants) {
    std::string where = "tenants[" + t.path + "]";
    auto spec = ResolveTenant(t, state.resource_names(), where + ".");
    if (!spec) return InvalidArgument(sc.file + ":" + std::to_string(t.line) + ": " + spec.error().message());
    Status s = apply({0, TenantUpserted{*spec}});
    if (!s.ok()) return At(sc, t.line, where, s.message());
  }
  if (Status s = state.tenants().ValidateAgainstCapacity(state.fleet().capacity(), state.resource_names()); !s.ok()) {
    return InvalidArgument(sc.file + ": " + s.message());
  }
  // Templates once the tenants exist, as allotd's POST /v1/templates journals them (the jobs that
  // name them were merged with them when the file was read: spec/job_template.h).
  for (size_t i = 0; i < sc.templates.size(); ++i) {
    const TemplateDef& d = sc.templates[i];
    std::string where = "templates[" + std::to_string(i) + "]";
    TenantId t = state.tenants().Find(d.tenant);
    if (!t.valid() || t == state.tenants().root()) {
      return At(sc, d.line, where + ".tenant", "'" + d.tenant + "' is not a tenant of the scenario; expected a path under tenants: such as vfx");
    }
    Status s = apply({0, TemplateSaved{JobTemplate{t, d.name, d.description, d.fields, "scenario", 0}}});
    if (!s.ok()) return At(sc, d.line, where, s.message());
  }
  // Budgets once the tenants exist, as allotd's POST /v1/budgets journals them.
  for (size_t i = 0; i < sc.budgets.size(); ++i) {
    const ScenarioBudget& b = sc.budgets[i];
    std::string where = "budgets[" + std::to_string(i) + "]";
    TenantId t = state.tenants().Find(b.tenant);
    if (!t.valid() || t == state.tenants().root()) {
      return At(sc, b.line, where + ".tenant",
                "'" + b.tenant + "' is not a tenant of the scenario; expected a path under tenants: such as research/nlp");
    }
    Status s = apply({0, BudgetSet{b.tenant, b.spend_micros, b.gpu_hours_milli}});
    if (!s.ok()) return At(sc, b.line, where, s.message());
  }
  // Reservations at time 0, in file order, as allotd books them: every window placed against the
  // book, all or none; a refusal is an outcome of the run (reported), not an error of the file.
  for (size_t i = 0; i < sc.reservations.size(); ++i) {
    ScenarioReservation& x = sc.reservations[i];
    std::string where = "reservations[" + std::to_string(i) + "].";
    auto spec = ResolveReservation(x.request, state, where);
    if (!spec) return InvalidArgument(sc.file + ":" + std::to_string(x.request.line) + ": " + spec.error().message());
    x.windows = spec->windows;
    ReservationPlan plan = PlanReservation(state, *spec);
    if (plan.shortfall) {
      x.refused = "windows[" + std::to_string(plan.refused_window) + "]: " + plan.shortfall->reason;
      continue;
    }
    // Over the booking cap (its tenant's max): refused, as allotd refuses it.
    if (Status s = apply({0, std::move(plan.booking)}); !s.ok()) {
      if (s.code() != Code::kFailedPrecondition) {
        return InvalidArgument(sc.file + ":" + std::to_string(x.request.line) + ": " + s.message());
      }
      x.refused = s.message();
    }
  }
  for (ScenarioJob& j : sc.jobs) {
    const std::string& file = j.in_jobs_file ? sc.jobs_file : sc.file;
    if (Status r = ResolveJob(j, state, j.in_jobs_file ? "" : "jobs[" + j.spec.name + "]."); !r.ok()) {
      return InvalidArgument(file + ":" + std::to_string(j.line) + ": " + r.message());
    }
    // A job may name a reservation the scenario lists (a refused one too: the job is then
    // rejected by the scheduler, as allotd's would be once its reservation is gone).
    if (!j.spec.reservation.empty()) {
      bool listed = std::any_of(sc.reservations.begin(), sc.reservations.end(), [&](const ScenarioReservation& x) {
        return x.request.name == j.spec.reservation && x.request.tenant == j.tenant;
      });
      if (!listed) {
        return InvalidArgument(file + ":" + std::to_string(j.line) + ": " + (j.in_jobs_file ? "" : "jobs[" + j.spec.name + "].") + "reservation: '" +
                               j.spec.reservation + "' is not a reservation of tenant '" + j.tenant +
                               "' in this scenario; expected a name under reservations:");
      }
    }
    std::vector<std::string>().swap(j.mig);  // resolved into the groups; a month of jobs keeps none
  }
  for (ScenarioService& v : sc.services) {
    if (Status r = ResolveService(v, state, "jobs[" + v.spec.name + "]."); !r.ok()) {
      return InvalidArgument(sc.file + ":" + std::to_string(v.line) + ": " + r.message());
    }
  }
  for (const ScenarioIncident& in : sc.incidents) {
    if (!in.node_lost.empty() && !state.fleet().Find(in.node_lost).valid()) {
      return InvalidArgument(sc.file + ":" + std::to_string(in.line) + ": incidents.node_lost: '" + in.node_lost +
                             "' is not a node of the fleet");
    }
    if (!in.tenant.empty() && !state.tenants().Find(in.tenant).valid()) {
      return InvalidArgument(sc.file + ":" + std::to_string(in.line) + ": incidents.tenant: unknown tenant '" + in.tenant + "'");
    }
  }
  return Status::Ok();
}

}  // namespace allot
