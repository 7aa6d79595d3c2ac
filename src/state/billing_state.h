// Billing state the scheduler and the ledger read: spend and GPU-hour budgets per tenant node,
// the budget warnings already given, and the ledger's entries. Journaled like everything else
// (BudgetSet, BudgetWarned, LedgerAppended), so a replay and the simulator see the same.
//
// The ledger entries are kept in their text form (metering/ledger.h), which is what is hashed
// and signed: the state does not check hashes (the core has no crypto); `allot ledger verify`
// does. LedgerAppended checks only that the entries follow on (seq) and name a period.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace allot {

inline constexpr int64_t kNoCap = -1;

struct Budget {
  int64_t spend_micros = kNoCap;     // per period, in the rate card's currency
  int64_t gpu_hours_milli = kNoCap;  // per period, thousandths of a GPU-hour (any model)
  bool operator==(const Budget&) const = default;
};

// One tenant's floor of one resource changed (QuotaTree::OwnGuarantee: what floor+burst bills),
// by a tenant upsert, removal or move at `time_ms`. Recorded from the first tenant event on, so a
// guarantee changed within a billing period is billed for the time each value held
// (metering/rating.h). Guarantees change rarely; the whole history is kept.
struct FloorChange {
  int64_t time_ms = 0;
  TenantId tenant;
  uint8_t resource = 0;  // a ResourceId
  int64_t before = 0;
  int64_t after = 0;
  bool operator==(const FloorChange&) const = default;
};

struct BudgetWarning {
  int64_t time_ms = 0;
  TenantId tenant;
  std::string period;   // "2026-11"
  std::string what;     // "spend" or "gpu-hours"
  int32_t percent = 0;  // 80 or 100
  std::string message;
  bool operator==(const BudgetWarning&) const = default;
};

class BillingState {
 public:
  // By tenant id; a tenant without an entry has no budget.
  const std::map<TenantId, Budget>& budgets() const { return budgets_; }
  const Budget* BudgetOf(TenantId t) const {
    auto it = budgets_.find(t);
    return it == budgets_.end() ? nullptr : &it->second;
  }
  const std::vector<BudgetWarning>& warnings() const { return warnings_; }
  bool Warned(TenantId t, const std::string& period, const std::string& what, int32_t percent) const {
    return warned_.count({t.value(), period, what, percent}) > 0;
  }
  // The ledger's entries in text form, one a line without its newline, in seq order.
  const std::vector<std::string>& ledger() const { return ledger_; }
  // The last period closed (signed), "" before the first close.
  const std::string& closed_period() const { return closed_period_; }
  // In the order applied (which is time order while the clock that times events runs forward).
  const std::vector<FloorChange>& floor_changes() const { return floor_changes_; }

  // Both caps kNoCap removes the budget.
  void SetBudget(TenantId t, const Budget& b);
  Status AddWarning(BudgetWarning w);
  // `closes`: the period this append closes, or "".
  Status AppendLedger(const std::vector<std::string>& entries, const std::string& closes);
  void RecordFloorChange(const FloorChange& c) { floor_changes_.push_back(c); }

 private:
  friend class SnapshotCodec;
  std::map<TenantId, Budget> budgets_;
  std::vector<BudgetWarning> warnings_;
  std::set<std::tuple<uint32_t, std::string, std::string, int32_t>> warned_;  // rebuilt from warnings_
  std::vector<std::string> ledger_;
  std::string closed_period_;
  std::vector<FloorChange> floor_changes_;
};

// "5000" or "4812.5" (currency units, at most 6 decimals) and "1000" or "0.5" (GPU-hours, at
// most 3 decimals) as the API and CLI take them; errors name `field`, the value and the form.
Result<int64_t> ParseBudgetHours(const std::string& text, const std::string& field);

}  // namespace allot
