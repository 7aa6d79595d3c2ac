#include "metering/budget_gate.h"

#include <algorithm>

#include "metering/state_usage.h"

namespace allot {
namespace {

constexpr __int128 kMsPerHour = 3600 * 1000;

// Cost and GPU time so far in each budgeted org's current period, per tenant subtree.
struct Spend {
  std::vector<TenantId> org;           // by tenant id
  std::map<TenantId, Period> periods;  // by org
  std::vector<int64_t> micros;         // by tenant id, its subtree
  std::vector<__int128> gpu_unit_ms;   // by tenant id, its subtree
};

Spend SpendAt(const ClusterState& state, const BillingSetup& billing, int64_t now) {
  const QuotaTree& tree = state.tenants();
  Spend s;
  s.org = OrgOf(tree);
  s.micros.assign(tree.size(), 0);
  s.gpu_unit_ms.assign(tree.size(), 0);
  std::vector<OrgPeriod> periods;
  int64_t earliest = now;
  for (const auto& [t, budget] : state.billing().budgets()) {
    if (tree.tenant(t).removed) continue;
    TenantId org = s.org[t.value()];
    if (s.periods.count(org)) continue;
    Period p = billing.PeriodOf(tree.tenant(org).path, now);
    s.periods.emplace(org, p);
    periods.push_back({org, p, billing.card.ModeOf(tree.tenant(org).path)});
    earliest = std::min(earliest, p.start_ms);
  }
  if (periods.empty()) return s;
  std::vector<UsageInterval> intervals = IntervalsFromState(state, earliest, now, now);
  for (const UsageInterval& iv : intervals) {
    auto it = s.periods.find(s.org[iv.tenant.value()]);
    if (it == s.periods.end() || iv.gpu == 0) continue;
    int64_t from = std::max(iv.start_ms, it->second.start_ms);
    if (iv.end_ms <= from) continue;
    __int128 q = static_cast<__int128>(iv.gpu) * (iv.end_ms - from);
    for (TenantId a = iv.tenant; a.valid(); a = tree.tenant(a).parent) s.gpu_unit_ms[a.value()] += q;
  }
  // A GPU model without a price is refused when the card is loaded against the fleet; here it
  // would only make the sum smaller, so it is skipped rather than stopping the pass.
  auto lines = Rate(RatingInput{tree, state.resource_names(), billing.card, &state.billing().floor_changes()}, periods, intervals);
  if (lines) s.micros = CostBySubtree(tree, *lines);
  return s;
}

__int128 CapUnitMs(int64_t gpu_hours_milli) {
  return static_cast<__int128>(gpu_hours_milli) * kGpuUnit * kMsPerHour / 1000;
}

int64_t UnitMsToMilliHours(__int128 q) { return static_cast<int64_t>(q * 1000 / (kGpuUnit * kMsPerHour)); }

std::string Percent(__int128 part, __int128 whole) {
  return whole <= 0 ? "100%" : std::to_string(static_cast<int64_t>(part * 100 / whole)) + "%";
}

class BudgetGate : public PassGate {
 public:
  BudgetGate(const ClusterState& state, const BillingSetup& billing, int64_t now)
      : state_(state), billing_(billing), now_(now), spend_(SpendAt(state, billing, now)) {
    const QuotaTree& tree = state.tenants();
    running_.assign(tree.size(), 0);
    running_gpu_.assign(tree.size(), 0);
    for (JobId id : state.active()) Commit(state.job(id), state.job(id).admission, state.job(id).expected_end_ms - now);
  }

  std::string Hold(const Job& job, AdmissionClass admission) override {
    const QuotaTree& tree = state_.tenants();
    const std::string& currency = billing_.card.currency;
    auto [cost, gpu] = Project(job, admission, job.estimated_remaining_ms());
    for (TenantId a = job.spec.tenant; a.valid() && a != tree.root(); a = tree.tenant(a).parent) {
      const Budget* b = state_.billing().BudgetOf(a);
      if (b == nullptr) continue;
      TenantId org = spend_.org[a.value()];
      if (billing_.card.AccountingOf(tree.tenant(org).path) == Accounting::kShowback) continue;
      const std::string& label = spend_.periods.at(org).label;
      std::string head = "held: budget of " + tree.tenant(a).path + " for " + label + ": ";
      if (b->spend_micros != kNoCap) {
        int64_t spent = spend_.micros[a.value()], running = running_[a.value()];
        if (spent + running + cost > b->spend_micros) {
          std::string run = running > 0 ? " + running jobs' projected " + FormatMoney(running, currency) : "";
          return head + "spent " + FormatMoney(spent, currency) + run + " + this job's projected " +
                 FormatMoney(cost, currency) + " > " + FormatMoney(b->spend_micros, currency);
        }
      }
      if (b->gpu_hours_milli != kNoCap) {
        __int128 used = spend_.gpu_unit_ms[a.value()], running = running_gpu_[a.value()];
        if (used + running + gpu > CapUnitMs(b->gpu_hours_milli)) {
          std::string run = running > 0 ? " + running jobs' projected " + FormatGpuHours(UnitMsToMilliHours(running)) : "";
          return head + "used " + FormatGpuHours(UnitMsToMilliHours(used)) + run + " + this job's projected " +
                 FormatGpuHours(UnitMsToMilliHours(gpu)) + " > " + FormatGpuHours(b->gpu_hours_milli);
        }
      }
    }
    return "";
  }

  void Placed(const Job& job, AdmissionClass admission) override {
    Commit(job, admission, job.estimated_remaining_ms());
  }

  std::vector<EventBody> Notices() override {
    std::vector<EventBody> out;
    const QuotaTree& tree = state_.tenants();
    const std::string& currency = billing_.card.currency;
    for (const auto& [t, b] : state_.billing().budgets()) {  // by tenant id: a stable order
      if (tree.tenant(t).removed) continue;
      const Period& p = spend_.periods.at(spend_.org[t.value()]);
      auto warn = [&](const char* what, __int128 used, __int128 cap, const std::string& used_s, const std::string& cap_s) {
        for (int32_t level : {80, 100}) {
          if (used <= 0 || used * 100 < cap * level || state_.billing().Warned(t, p.label, what, level)) continue;
          out.push_back(BudgetWarned{tree.tenant(t).path, p.label, what, level,
                                     "budget of " + tree.tenant(t).path + " for " + p.label + ": " + what + " " + used_s +
                                         " of " + cap_s + " (" + Percent(used, cap) + ")"});
        }
      };
      if (b.spend_micros != kNoCap) {
        int64_t spent = spend_.micros[t.value()];
        warn("spend", spent, b.spend_micros, FormatMoney(spent, currency), FormatMoney(b.spend_micros, currency));
      }
      if (b.gpu_hours_milli != kNoCap) {
        __int128 used = spend_.gpu_unit_ms[t.value()];
        warn("gpu-hours", used, CapUnitMs(b.gpu_hours_milli), FormatGpuHours(UnitMsToMilliHours(used)),
             FormatGpuHours(b.gpu_hours_milli));
      }
    }
    return out;
  }

 private:
  // Cost and GPU unit·ms of `job` over `ms` from now, cut at its org's period end.
  std::pair<int64_t, __int128> Project(const Job& job, AdmissionClass admission, int64_t ms) {
    TenantId org = spend_.org[job.spec.tenant.value()];
    auto it = spend_.periods.find(org);
    if (it == spend_.periods.end()) return {0, 0};  // no budget in this org
    ms = std::clamp<int64_t>(ms, 0, it->second.end_ms - now_);
    auto cost = ProjectedCost(state_, billing_, job, admission, ms);
    return {cost ? *cost : 0, static_cast<__int128>(job.demand.gpu) * ms};
  }
  void Commit(const Job& job, AdmissionClass admission, int64_t ms) {
    auto [cost, gpu] = Project(job, admission, ms);
    if (cost == 0 && gpu == 0) return;
    const QuotaTree& tree = state_.tenants();
    for (TenantId a = job.spec.tenant; a.valid(); a = tree.tenant(a).parent) {
      running_[a.value()] += cost;
      running_gpu_[a.value()] += gpu;
    }
  }

  const ClusterState& state_;
  const BillingSetup& billing_;
  int64_t now_;
  Spend spend_;
  std::vector<int64_t> running_;       // by tenant id: running and placed jobs' projected cost
  std::vector<__int128> running_gpu_;  // and GPU unit·ms
};

}  // namespace

std::unique_ptr<PassGate> BudgetGateFactory::Open(const ClusterState& state, int64_t now_ms) const {
  if (state.billing().budgets().empty()) return nullptr;
  return std::make_unique<BudgetGate>(state, *billing_, now_ms);
}

Result<int64_t> ProjectedCost(const ClusterState& state, const BillingSetup& billing, const Job& job,
                              AdmissionClass admission, int64_t ms) {
  const QuotaTree& tree = state.tenants();
  const RateCard& card = billing.card;
  TenantId org = job.spec.tenant;
  while (tree.tenant(org).depth > 1) org = tree.tenant(org).parent;
  BillingMode mode = card.ModeOf(tree.tenant(org).path);
  UsageClass c = ClassOf(job, admission == AdmissionClass::kNone ? AdmissionClass::kBurstable : admission);
  int64_t burst = c == UsageClass::kGuaranteed ? kPpm : card.burst_premium;
  const ResourceNames& names = state.resource_names();
  int64_t total = 0;
  auto add = [&](ResourceId r, int64_t amount, int64_t price, int64_t topo) -> Status {
    if (amount <= 0) return Status::Ok();
    if (mode == BillingMode::kFloorBurst && c == UsageClass::kGuaranteed && tree.EffectiveGuarantee(org, r) > 0) {
      return Status::Ok();  // covered by the floor, billed whether used or not
    }
    auto v = PriceLine(names.Name(r), static_cast<__int128>(amount) * ms, price, burst, topo);
    if (!v) return v.error();
    total += *v;
    return Status::Ok();
  };
  if (job.demand.gpu > 0) {
    const std::string& name = names.Name(job.demand.gpu_resource);
    std::string model = name.substr(name.find('/') + 1);
    auto it = card.gpu_hour.find(model);
    if (it == card.gpu_hour.end()) {
      return Err(FailedPrecondition("rate card: gpu_hour has no price for " + model +
                                    "; expected a price for every GPU model the fleet bills"));
    }
    if (Status s = add(job.demand.gpu_resource, job.demand.gpu, it->second,
                       card.topology_premium[static_cast<int>(job.spec.topology)]);
        !s.ok()) {
      return Err(s);
    }
  }
  if (Status s = add(kCpu, job.demand.cpu, card.cpu_hour, kPpm); !s.ok()) return Err(s);
  if (Status s = add(kMemory, job.demand.memory, card.memory_gib_hour, kPpm); !s.ok()) return Err(s);
  return total;
}

std::vector<BudgetStatus> BudgetsAt(const ClusterState& state, const BillingSetup& billing, int64_t now_ms) {
  Spend s = SpendAt(state, billing, now_ms);
  const QuotaTree& tree = state.tenants();
  std::vector<BudgetStatus> out;
  for (const auto& [t, b] : state.billing().budgets()) {
    if (tree.tenant(t).removed) continue;
    TenantId org = s.org[t.value()];
    out.push_back({t, b, s.periods.at(org), s.micros[t.value()], UnitMsToMilliHours(s.gpu_unit_ms[t.value()]),
                   billing.card.AccountingOf(tree.tenant(org).path)});
  }
  return out;
}

}  // namespace allot
