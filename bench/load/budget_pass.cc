// What a scheduling pass pays for budgets at the end of a busy month: the state holds a month of
// a 30,000-jobs/day fleet (900,000 finished jobs, a tenth of them preempted once) and 10,000
// running, 300 teams in 10 orgs, a budget on every team and org. Times the gate's view of the
// month so far (BudgetsAt) scanned from every job — what every pass cost before the gate kept
// running sums — against BudgetSpendCache: its first pass (which scans once) and the passes
// after it (which look only at jobs not yet ended). Checks both give the same figures. Run under
// /usr/bin/time -v for the peak RSS (make bench does).
#include <chrono>
#include <cstdio>

#include "metering/budget_gate.h"
#include "state/cluster_state.h"

using namespace allot;

namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "%s\n", s.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t jobs_per_day = argc > 1 ? std::atoll(argv[1]) : 30000;
  if (jobs_per_day <= 0) {
    std::fprintf(stderr, "budget_pass: JOBS_PER_DAY %s: expected a whole number above 0\n", argv[1]);
    return 2;
  }
  constexpr int64_t kMar1 = 1740787200000;  // 2025-03-01T00:00:00Z
  constexpr int64_t kDay = 24 * 3600 * 1000;
  constexpr int kNodes = 6250, kRunning = 10000;
  ClusterState st;
  for (int n = 0; n < kNodes; ++n) {
    NodeSpec spec{"n" + std::to_string(n), "z", "r" + std::to_string(n / 32), "", 96000, 1 << 20, "H100-80GB", 8};
    if (Status s = st.apply({0, NodeAdded{spec}}); !s.ok()) return Fail(s);
  }
  const ResourceId h100 = st.resource_names().Find("gpu/H100-80GB");
  std::vector<TenantId> teams;
  for (int o = 0; o < 10; ++o) {
    TenantSpec org;
    org.path = "org" + std::to_string(o);
    if (Status s = st.apply({0, TenantUpserted{org}}); !s.ok()) return Fail(s);
    if (Status s = st.apply({0, BudgetSet{org.path, 5000000 * kMicros, kNoCap}}); !s.ok()) return Fail(s);
    for (int t = 0; t < 30; ++t) {
      TenantSpec team;
      team.path = org.path + "/team" + std::to_string(t);
      if (Status s = st.apply({0, TenantUpserted{team}}); !s.ok()) return Fail(s);
      if (Status s = st.apply({0, BudgetSet{team.path, 100000 * kMicros, 100000000}}); !s.ok()) return Fail(s);
      teams.push_back(st.tenants().Find(team.path));
    }
  }
  auto billing = std::make_shared<BillingSetup>();
  billing->card.gpu_hour = {{"H100-80GB", 2500000}};
  billing->card.cpu_hour = 20000;
  billing->card.memory_gib_hour = 3000;
  billing->card.burst_premium = 1200000;

  // One GPU a job, each on the next GPU in turn; placed and ended before the GPU is used again.
  auto t0 = std::chrono::steady_clock::now();
  const int64_t jobs = jobs_per_day * 30;
  const int64_t step = 30 * kDay / jobs;
  auto place = [&](int64_t i, int64_t at, JobId& id) -> Status {
    JobSpec spec;
    spec.name = "j" + std::to_string(i);
    spec.tenant = teams[i % teams.size()];
    spec.gpu_resource = h100;
    spec.duration_ms = 3600 * 1000;
    spec.submit_ms = at;
    spec.groups = {TaskGroup{1, kGpuUnit, 4000, 16 * 1024}};
    id = st.next_job_id();
    if (Status s = st.apply({at, JobSubmitted{spec}}); !s.ok()) return s;
    int64_t gpu = i % (kNodes * 8);
    TaskPlacement p{NodeId(static_cast<uint32_t>(gpu / 8)), uint64_t{1} << (gpu % 8), 4000, 16 * 1024, {}};
    return st.apply({at, JobPlaced{id, i % 2 ? AdmissionClass::kBurstable : AdmissionClass::kGuaranteed, {p}}});
  };
  for (int64_t i = 0; i < jobs; ++i) {
    int64_t at = kMar1 + i * step;
    JobId id;
    if (Status s = place(i, at, id); !s.ok()) return Fail(s);
    if (i % 10 == 0) {  // preempted once, then run again
      if (Status s = st.apply({at + step / 3, JobStopped{id, 0}}); !s.ok()) return Fail(s);
      int64_t gpu = i % (kNodes * 8);
      TaskPlacement p{NodeId(static_cast<uint32_t>(gpu / 8)), uint64_t{1} << (gpu % 8), 4000, 16 * 1024, {}};
      if (Status s = st.apply({at + step / 2, JobPlaced{id, st.job(id).admission, {p}}}); !s.ok()) return Fail(s);
    }
    if (Status s = st.apply({at + step - 1, JobFinished{id}}); !s.ok()) return Fail(s);
  }
  const int64_t now = kMar1 + 30 * kDay;
  for (int64_t i = 0; i < kRunning; ++i) {
    JobId id;
    if (Status s = place(jobs + i, now - 3600 * 1000, id); !s.ok()) return Fail(s);
  }
  std::printf("state: %zu jobs (%zu running), %zu tenants with budgets, built in %.1f s\n", st.jobs().size(),
              st.active().size(), st.billing().budgets().size(), Since(t0));

  // Scanned from every job, a few times.
  constexpr int kScans = 5, kPasses = 200;
  t0 = std::chrono::steady_clock::now();
  std::vector<BudgetStatus> scanned;
  for (int k = 0; k < kScans; ++k) scanned = BudgetsAt(st, *billing, now + k);
  double t_scan = Since(t0) / kScans;

  BudgetSpendCache cache;
  t0 = std::chrono::steady_clock::now();
  auto first = BudgetsAt(st, *billing, now, &cache);
  double t_first = Since(t0);
  t0 = std::chrono::steady_clock::now();
  std::vector<BudgetStatus> later;
  for (int k = 1; k <= kPasses; ++k) later = BudgetsAt(st, *billing, now + k * 100, &cache);
  double t_pass = Since(t0) / kPasses;
  auto check = BudgetsAt(st, *billing, now + kPasses * 100);
  if (check.empty() || check.size() != later.size()) {
    std::fprintf(stderr, "budget_pass: no budget was read; nothing measured\n");
    return 1;
  }
  for (size_t i = 0; i < check.size(); ++i) {
    if (check[i].spent_micros != later[i].spent_micros || check[i].gpu_hours_milli != later[i].gpu_hours_milli) {
      std::fprintf(stderr, "budget %zu: the running sums (%lld) differ from a scan (%lld)\n", i,
                   static_cast<long long>(later[i].spent_micros), static_cast<long long>(check[i].spent_micros));
      return 1;
    }
  }
  std::printf("budgets %zu; org0 spent %s USD this month\n", check.size(), FormatMicros(check[0].spent_micros).c_str());
  std::printf("scan of every job %.1f ms a pass; running sums: first pass %.1f ms, then %.2f ms a pass (%.0fx); "
              "rebuilds %d\n",
              t_scan * 1e3, t_first * 1e3, t_pass * 1e3, t_scan / t_pass, cache.rebuilds());
  return 0;
}
