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

// The current period of each org with a budget, in the order of the budgets; `org` is
// OrgOf(state.tenants()).
std::vector<OrgPeriod> BudgetPeriods(const ClusterState& state, const BillingSetup& billing, int64_t now,
                                     const std::vector<TenantId>& org) {
  const QuotaTree& tree = state.tenants();
  std::vector<OrgPeriod> periods;
  for (const auto& [t, budget] : state.billing().budgets()) {
    if (tree.tenant(t).removed) continue;
    TenantId o = org[t.value()];
    if (std::any_of(periods.begin(), periods.end(), [&](const OrgPeriod& p) { return p.org == o; })) continue;
    periods.push_back({o, billing.PeriodOf(tree.tenant(o).path, now), billing.card.ModeOf(tree.tenant(o).path)});
  }
  return periods;
}

// The usage so far in `periods`, from every job (what BudgetsAt reports).
UsageSums SumsAt(const ClusterState& state, std::vector<OrgPeriod> periods, int64_t now) {
  int64_t earliest = now;
  for (const OrgPeriod& p : periods) earliest = std::min(earliest, p.period.start_ms);
  UsageSums sums(state.tenants(), std::move(periods));
  if (!sums.periods().empty()) {
    for (const UsageInterval& iv : IntervalsFromState(state, earliest, now, now)) sums.Add(iv);
  }
  return sums;
}

Spend SpendOf(const ClusterState& state, const BillingSetup& billing, const UsageSums& sums) {
  const QuotaTree& tree = state.tenants();
  Spend s;
  s.org = OrgOf(tree);
  s.micros.assign(tree.size(), 0);
  s.gpu_unit_ms.assign(tree.size(), 0);
  for (const OrgPeriod& p : sums.periods()) s.periods.emplace(p.org, p.period);
  if (sums.periods().empty()) return s;
  const std::vector<__int128>& own = sums.gpu_unit_ms();
  for (size_t t = 0; t < own.size() && t < tree.size(); ++t) {
    if (own[t] == 0) continue;
    for (TenantId a(static_cast<uint32_t>(t)); a.valid(); a = tree.tenant(a).parent) s.gpu_unit_ms[a.value()] += own[t];
  }
  // A GPU model without a price is refused when the card is loaded against the fleet; here it
  // would only make the sum smaller, so it is skipped rather than stopping the pass.
  auto lines = Rate(RatingInput{tree, state.resource_names(), billing.card, &state.billing().floor_changes(), &state.reservations()}, sums);
  if (lines) s.micros = CostBySubtree(tree, *lines);
  return s;
}

bool SamePeriods(const std::vector<OrgPeriod>& a, const std::vector<OrgPeriod>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const OrgPeriod& x, const OrgPeriod& y) {
    return x.org == y.org && x.mode == y.mode && x.period.label == y.period.label &&
           x.period.start_ms == y.period.start_ms && x.period.end_ms == y.period.end_ms;
  });
}

}  // namespace

UsageSums BudgetSpendCache::At(const ClusterState& state, const BillingSetup& billing, int64_t now) {
  std::vector<TenantId> orgs = OrgOf(state.tenants());
  std::vector<OrgPeriod> periods = BudgetPeriods(state, billing, now, orgs);
  if (!settled_ || state_ != &state || !SamePeriods(periods, settled_->periods()) || orgs != orgs_ || now < now_ ||
      state.jobs().size() < next_job_) {
    // A new month, budget org, tenant, move between orgs or state (or a clock stepped back):
    // start again.
    settled_.emplace(state.tenants(), periods);
    state_ = &state;
    orgs_ = std::move(orgs);
    next_job_ = 0;
    open_.clear();
    ++rebuilds_;
  }
  now_ = now;
  // A job stays open until it can add nothing more: runs that ended since are added once.
  UsageSums sums = *settled_;
  auto visit = [&](const Job& j, uint32_t& counted) {
    for (size_t r = counted; r < j.ended_runs.size(); ++r) {
      const Job::RunSpan& run = j.ended_runs[r];
      UsageInterval iv = RunInterval(j, run.start_ms, run.end_ms, run.admission);
      settled_->Add(iv);
      sums.Add(iv);
    }
    counted = static_cast<uint32_t>(j.ended_runs.size());
    if (j.holds_resources()) {
      sums.Add(RunInterval(j, j.last_started_ms, now, j.admission));
      return true;
    }
    if (j.state == JobState::kPending) return true;
    // Finished, failed, cancelled or rejected: nothing more to come.
    if ((j.state == JobState::kFinished || j.state == JobState::kFailed) && j.first_started_ms >= 0) {
      UsageInterval iv = RunInterval(j, j.last_started_ms, j.finished_ms, j.admission);
      settled_->Add(iv);
      sums.Add(iv);
    }
    return false;
  };
  for (auto it = open_.begin(); it != open_.end();) {
    it = visit(state.job(JobId(it->first)), it->second) ? std::next(it) : open_.erase(it);
  }
  for (; next_job_ < state.jobs().size(); ++next_job_) {
    uint32_t counted = 0;
    if (visit(state.jobs()[next_job_], counted)) open_.emplace_hint(open_.end(), static_cast<uint32_t>(next_job_), counted);
  }
  return sums;
}

namespace {

__int128 CapUnitMs(int64_t gpu_hours_milli) {
  return static_cast<__int128>(gpu_hours_milli) * kGpuUnit * kMsPerHour / 1000;
}

int64_t UnitMsToMilliHours(__int128 q) { return static_cast<int64_t>(q * 1000 / (kGpuUnit * kMsPerHour)); }

std::string Percent(__int128 part, __int128 whole) {
  return whole <= 0 ? "100%" : std::to_string(static_cast<int64_t>(part * 100 / whole)) + "%";
}

class BudgetGate : public PassGate {
 public:
  BudgetGate(const ClusterState& state, const BillingSetup& billing, int64_t now, const UsageSums& sums)
      : state_(state), billing_(billing), now_(now), spend_(SpendOf(state, billing, sums)) {
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
        if (static_cast<__int128>(spent) + running + cost > b->spend_micros) {  // 128-bit: never wraps
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
    for (const auto& [id, b] : state_.billing().budgets()) {  // by tenant id: a stable order
      const TenantId t = id;  // a copy the lambda below may capture (clang 14 cannot capture a binding)
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
  return std::make_unique<BudgetGate>(state, *billing_, now_ms, cache_.At(state, *billing_, now_ms));
}

Result<int64_t> ProjectedCost(const ClusterState& state, const BillingSetup& billing, const Job& job,
                              AdmissionClass admission, int64_t ms) {
  const QuotaTree& tree = state.tenants();
  const RateCard& card = billing.card;
  TenantId org = tree.OrgOf(job.spec.tenant);
  BillingMode mode = card.ModeOf(tree.tenant(org).path);
  UsageClass c = ClassOf(job, admission == AdmissionClass::kNone ? AdmissionClass::kBurstable : admission);
  if (c == UsageClass::kReserved) return 0;  // its reservation's line bills it
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

std::vector<BudgetStatus> BudgetsAt(const ClusterState& state, const BillingSetup& billing, int64_t now_ms,
                                    BudgetSpendCache* cache) {
  Spend s = SpendOf(state, billing,
                    cache ? cache->At(state, billing, now_ms) : SumsAt(state, BudgetPeriods(state, billing, now_ms, OrgOf(state.tenants())), now_ms));
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
