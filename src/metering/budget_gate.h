// Budgets in the scheduling pass: a pending job whose projected cost would break the spend or
// GPU-hour cap of its tenant or an ancestor in the current billing period is held, with the
// sums in its reason; budgets crossing 80% and 100% are warned about once per period.
//
//   spent     the period's cost so far of the budget's subtree: Rate over IntervalsFromState
//             from the org's period start to now (floor+burst floors for the whole period)
//   running   the running jobs' projected cost from now to their expected end
//   projected this job's, as if it ran from now for its time limit (else its duration)
//   Both projections are cut at the period end (later hours belong to the next period's budget)
//   and priced as rating would: burst and topology premiums, floor-covered guaranteed usage free.
//   held when spent + running (+ jobs placed earlier in this pass) + projected > cap.
//
// showback orgs (RateCard accounting) are warned, never held. Pure: the simulator and the
// daemon hold the same jobs for the same state, card and time.
#pragma once

#include <memory>

#include "metering/billing.h"
#include "policy/pass_gate.h"

namespace allot {

class BudgetGateFactory : public PassGateFactory {
 public:
  explicit BudgetGateFactory(std::shared_ptr<const BillingSetup> billing) : billing_(std::move(billing)) {}
  std::unique_ptr<PassGate> Open(const ClusterState& state, int64_t now_ms) const override;

 private:
  std::shared_ptr<const BillingSetup> billing_;
};

// What a budget stands at now (the API's /v1/budgets).
struct BudgetStatus {
  TenantId tenant;
  Budget budget;
  Period period;
  int64_t spent_micros = 0;
  int64_t gpu_hours_milli = 0;  // used, rounded down
  Accounting accounting = Accounting::kChargeback;
};
std::vector<BudgetStatus> BudgetsAt(const ClusterState& state, const BillingSetup& billing, int64_t now_ms);

// The cost of `job` holding its resources over `ms` as `admission`, priced as a usage line of
// its org (premiums; guaranteed usage under a floor+burst floor is free). Fails naming a GPU
// model without a price.
Result<int64_t> ProjectedCost(const ClusterState& state, const BillingSetup& billing, const Job& job,
                              AdmissionClass admission, int64_t ms);

}  // namespace allot
