// ClusterState::Apply for the billing events (state/billing_state.h) and the agents' task
// reports that metering reconciles, apart from the job and fleet events in cluster_state.cc.
#include "state/cluster_state.h"

namespace allot {

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
