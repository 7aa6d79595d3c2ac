#include "sim/setup.h"

#include <algorithm>

#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"

namespace allot {
namespace {

Status At(const Scenario& sc, int line, const std::string& path, const std::string& msg) {
  return InvalidArgument(sc.file + ":" + std::to_string(line) + ": " + path + ": " + msg);
}

Status ResolveQuota(const std::vector<QuotaEntry>& entries, const std::string& field, const ResourceNames& names,
                    TenantSpec& spec, bool guarantee) {
  for (const QuotaEntry& e : entries) {
    ResourceId r = names.Find(e.resource);
    if (r == ResourceNames::kInvalid) {
      std::string model = e.resource.substr(4);
      if (!FindGpuModel(model)) return InvalidArgument(field + "." + e.resource + ": unknown GPU model '" + model + "'");
      return InvalidArgument(field + "." + e.resource + ": no node in the fleet has GPU model '" + model + "'");
    }
    if (guarantee) {
      spec.SetGuarantee(r, e.amount);
    } else {
      spec.max[r] = e.amount;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<TenantSpec> ResolveTenant(const ScenarioTenant& t, const ResourceNames& names, const std::string& where) {
  TenantSpec spec;
  spec.path = t.path;
  spec.weight = t.weight;
  spec.trust = t.trust;
  spec.pools = t.pools;
  if (Status s = ResolveQuota(t.guarantee, where + "guarantee", names, spec, true); !s.ok()) return Err(s);
  if (Status s = ResolveQuota(t.max, where + "max", names, spec, false); !s.ok()) return Err(s);
  return spec;
}

Status ResolveJob(ScenarioJob& j, const ClusterState& state, const std::string& where) {
  // The fleet's GPU models, for jobs that do not name one.
  std::vector<ResourceId> models;
  for (const Fleet::NodeShape& s : state.fleet().shapes()) {
    if (s.gpu_resource != kCpu && std::find(models.begin(), models.end(), s.gpu_resource) == models.end()) {
      models.push_back(s.gpu_resource);
    }
  }
  TenantId t = state.tenants().Find(j.tenant);
  if (!t.valid() || t == state.tenants().root()) {
    return InvalidArgument(where + "tenant: " + "unknown tenant '" + j.tenant + "'; expected a path listed under tenants");
  }
  j.spec.tenant = t;
  bool wants_gpu = false;
  for (const TaskGroup& g : j.spec.groups) wants_gpu |= g.gpu > 0 || g.shared();
  if (!j.gpu_model.empty()) {
    ResourceId r = state.resource_names().Find("gpu/" + j.gpu_model);
    if (r == ResourceNames::kInvalid) {
      return InvalidArgument(where + "tasks.gpu_model: " + "no node in the fleet has GPU model '" + j.gpu_model + "'");
    }
    j.spec.gpu_resource = r;
  } else if (wants_gpu) {
    if (models.size() != 1) {
      return InvalidArgument(where + "tasks.gpu_model: " + "required: the fleet has " + std::to_string(models.size()) +
                                                             " GPU models; expected one of them");
    }
    j.spec.gpu_resource = models.front();
  }
  // MIG profiles by name, against the job's GPU model.
  for (size_t i = 0; i < j.spec.groups.size(); ++i) {
    if (j.spec.groups[i].share != ShareKind::kMig) continue;
    std::string model = state.resource_names().Name(j.spec.gpu_resource).substr(4);
    const MigGeometry* geo = FindMigGeometry(model);
    std::string field = where + "tasks" + (j.spec.groups.size() > 1 ? "[" + std::to_string(i) + "]" : "") + ".mig";
    const std::string& name = i < j.mig.size() ? j.mig[i] : "";
    if (!geo) return InvalidArgument(field + ": " + "'" + name + "' asks MIG on " + model + ", which has no MIG");
    int p = geo->Find(name);
    if (p < 0) {
      std::string known;
      for (const MigProfile& q : geo->profiles) known += (known.empty() ? "" : ", ") + std::string(q.name);
      return InvalidArgument(field + ": " + "'" + name + "' is not a MIG profile of " + model + "; expected one of " + known);
    }
    j.spec.groups[i].mig_profile = static_cast<uint8_t>(p);
  }
  return Status::Ok();
}

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
  for (ScenarioJob& j : sc.jobs) {
    if (Status r = ResolveJob(j, state, "jobs[" + j.spec.name + "]."); !r.ok()) {
      return InvalidArgument(sc.file + ":" + std::to_string(j.line) + ": " + r.message());
    }
  }
  return Status::Ok();
}

}  // namespace allot
