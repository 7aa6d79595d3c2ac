// ClusterState::Apply for the billing events (state/billing_state.h) and the agents' task
// reports that metering reconciles, apart from the job and fleet events in cluster_state.cc.
#include "state/cluster_state.h"

namespace allot {

bool ClusterState::OnAgents(const Job& job) const {
  for (const TaskPlacement& p : job.placement) {
    if (agent_managed(p.node)) return true;
  }
  return false;
}

ClusterState::FloorMap ClusterState::FloorsOfOrgs(std::initializer_list<std::string_view> paths) const {
  FloorMap out;
  for (std::string_view path : paths) {
    TenantId org = tenants_.Find(path.substr(0, path.find('/')));
    if (!org.valid() || org == tenants_.root()) continue;
    std::vector<TenantId> todo{org};
    while (!todo.empty()) {
      TenantId t = todo.back();
      todo.pop_back();
      const Tenant& x = tenants_.tenant(t);
      todo.insert(todo.end(), x.children.begin(), x.children.end());
      for (int r = 0; r < names_.size(); ++r) {
        if (int64_t own = tenants_.OwnGuarantee(t, static_cast<ResourceId>(r)); own > 0) {
          out[{t.value(), static_cast<ResourceId>(r)}] = own;
        }
      }
    }
  }
  return out;
}

void ClusterState::RecordFloorChanges(int64_t now, const FloorMap& before, const FloorMap& after) {
  auto b = before.begin();
  auto a = after.begin();
  // A merge of the two sorted maps: a key in one only went to or came from 0.
  while (b != before.end() || a != after.end()) {
    FloorChange c{now, TenantId(), 0, 0, 0};
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      c.tenant = TenantId(b->first.first), c.resource = b->first.second, c.before = b->second;
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      c.tenant = TenantId(a->first.first), c.resource = a->first.second, c.after = a->second;
      ++a;
    } else {
      c.tenant = TenantId(a->first.first), c.resource = a->first.second, c.before = b->second, c.after = a->second;
      ++a, ++b;
    }
    if (c.before != c.after) billing_.RecordFloorChange(c);
  }
}

Status ClusterState::Apply(int64_t, const BudgetSet& e) {
  TenantId t = tenants_.Find(e.path);
  if (!t.valid() || t == tenants_.root()) {
    return NotFound("budget.tenant: '" + e.path + "' does not exist; expected a tenant path");
  }
  if (e.spend_micros < kNoCap || e.gpu_hours_milli < kNoCap) {
    return InvalidArgument("budget of '" + e.path + "': caps must be ≥ 0 (or unset); have spend " +
                           std::to_string(e.spend_micros) + " micros, gpu-hours " + std::to_string(e.gpu_hours_milli) +
                           " thousandths");
  }
  billing_.SetBudget(t, Budget{e.spend_micros, e.gpu_hours_milli});
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const BudgetWarned& e) {
  TenantId t = tenants_.Find(e.path);
  if (!t.valid()) return NotFound("budget warning: tenant '" + e.path + "' does not exist");
  return billing_.AddWarning(BudgetWarning{now, t, e.period, e.what, e.percent, e.message});
}

Status ClusterState::Apply(int64_t, const LedgerAppended& e) { return billing_.AppendLedger(e.entries, e.closes); }

// Only what is plainly wrong is refused: a run or task index that names no allocation is kept,
// and reconciliation lists it as a report without one.
Status ClusterState::Apply(int64_t now, const TaskRunReported& e) {
  if (!e.job.valid() || e.job.value() >= jobs_.size()) {
    return NotFound("task report: job " + std::to_string(e.job.value()) + " does not exist");
  }
  const std::string& name = jobs_[e.job.value()].spec.name;
  NodeId node = fleet_.Find(e.node);
  if (!node.valid()) return NotFound("task report of job '" + name + "': node '" + e.node + "' does not exist");
  if (e.run < 0 || e.task < 0) {
    return InvalidArgument("task report of job '" + name + "': run " + std::to_string(e.run) + ", task " +
                           std::to_string(e.task) + ": expected indexes ≥ 0");
  }
  if (e.ended_ms < e.started_ms) {
    return InvalidArgument("task report of job '" + name + "': ended_ms " + std::to_string(e.ended_ms) +
                           ": expected ≥ started_ms " + std::to_string(e.started_ms));
  }
  if (!task_reported_.insert({e.job.value(), e.run, e.task}).second) {
    return Conflict("task " + std::to_string(e.task) + " of job '" + name + "' run " + std::to_string(e.run) +
                    " was already reported");
  }
  task_reports_.push_back({e.job, e.run, e.task, node, e.started_ms, e.ended_ms, now});
  return Status::Ok();
}

}  // namespace allot
