// ClusterState::Apply for the billing events (state/billing_state.h), apart from the job and
// fleet events in cluster_state.cc.
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

}  // namespace allot
