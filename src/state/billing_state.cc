#include "state/billing_state.h"

#include <cctype>

namespace allot {

void BillingState::SetBudget(TenantId t, const Budget& b) {
  if (b.spend_micros == kNoCap && b.gpu_hours_milli == kNoCap) {
    budgets_.erase(t);
  } else {
    budgets_[t] = b;
  }
}

Status BillingState::AddWarning(BudgetWarning w) {
  if (w.percent <= 0 || w.period.empty() || (w.what != "spend" && w.what != "gpu-hours")) {
    return InvalidArgument("budget warning: expected a period, what spend|gpu-hours and a percent > 0; have '" +
                           w.period + "', '" + w.what + "', " + std::to_string(w.percent));
  }
  if (!warned_.insert({w.tenant.value(), w.period, w.what, w.percent}).second) {
    return FailedPrecondition("budget warning: " + w.what + " " + std::to_string(w.percent) + "% for " + w.period +
                              " was already given");
  }
  warnings_.push_back(std::move(w));
  return Status::Ok();
}

Status BillingState::AppendLedger(const std::vector<std::string>& entries, const std::string& closes) {
  // Each entry starts with its seq: it must continue the ledger.
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string want = std::to_string(ledger_.size() + i + 1) + "\t";
    if (entries[i].compare(0, want.size(), want) != 0) {
      return InvalidArgument("ledger append: entry " + std::to_string(i) + " does not start with seq " +
                             std::to_string(ledger_.size() + i + 1));
    }
  }
  if (!closes.empty() && !closed_period_.empty() && closes <= closed_period_) {
    return FailedPrecondition("ledger append: period " + closes + " is not after the last closed, " + closed_period_);
  }
  ledger_.insert(ledger_.end(), entries.begin(), entries.end());
  if (!closes.empty()) closed_period_ = closes;
  return Status::Ok();
}

Result<int64_t> ParseBudgetHours(const std::string& text, const std::string& field) {
  int64_t whole = 0, frac = 0;
  int decimals = 0;
  size_t i = 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    digits = true;
    if (dot) {
      if (++decimals > 3) break;
      frac = frac * 10 + (c - '0');
    } else {
      whole = whole * 10 + (c - '0');
      if (whole > 1000000000000LL) break;  // at most 10^12 GPU-hours
    }
  }
  if (!digits || i != text.size()) {
    return Err(InvalidArgument(field + ": '" + text + "' is not a number of GPU-hours; expected e.g. 1000 or 0.5 " +
                               "(from 0 to 1000000000000, at most 3 decimals)"));
  }
  while (decimals++ < 3) frac *= 10;
  return whole * 1000 + frac;
}

}  // namespace allot
