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

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "metering/billing.h"
#include "metering/rating.h"
#include "policy/pass_gate.h"

namespace allot {

// The usage so far in the budgeted orgs' current periods, kept from pass to pass: a run that
// has ended is added once, when the cache first sees it ended, and only the jobs not yet ended
// are looked at again; so a pass costs what the live jobs cost, not the month's history. The
// sums equal a scan of every job (BudgetsAt's) — integers added in any order — and are started
// again at each new month, budget org or tenant, a move between orgs, for another state, or if
// the clock steps back.
class BudgetSpendCache {
 public:
  UsageSums At(const ClusterState& state, const BillingSetup& billing, int64_t now_ms);
  int rebuilds() const { return rebuilds_; }  // how often it started again (tests, benchmarks)

 private:
  const ClusterState* state_ = nullptr;
  std::vector<TenantId> orgs_;         // each tenant's org when the sums were started
  int64_t now_ = 0;
  std::optional<UsageSums> settled_;   // the ended runs seen so far
  size_t next_job_ = 0;                // jobs below it have been seen
  std::map<uint32_t, uint32_t> open_;  // jobs not ended yet → their ended runs already added
  int rebuilds_ = 0;
};

class BudgetGateFactory : public PassGateFactory {
 public:
  explicit BudgetGateFactory(std::shared_ptr<const BillingSetup> billing) : billing_(std::move(billing)) {}
  // REQUIRES: one caller at a time (the pass's thread), as the scheduler calls it.
  std::unique_ptr<PassGate> Open(const ClusterState& state, int64_t now_ms) const override;
  const BudgetSpendCache& cache() const { return cache_; }

 private:
  std::shared_ptr<const BillingSetup> billing_;
  mutable BudgetSpendCache cache_;
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
// From every job; or, given a cache, as the gate sees it (the same figures).
std::vector<BudgetStatus> BudgetsAt(const ClusterState& state, const BillingSetup& billing, int64_t now_ms,
                                    BudgetSpendCache* cache = nullptr);

// The cost of `job` holding its resources over `ms` as `admission`, priced as a usage line of
// its org (premiums; guaranteed usage under a floor+burst floor is free). Fails naming a GPU
// model without a price.
Result<int64_t> ProjectedCost(const ClusterState& state, const BillingSetup& billing, const Job& job,
                              AdmissionClass admission, int64_t ms);

}  // namespace allot
