// Rating one month of a 30,000-jobs/day fleet: 900,000 jobs, a tenth preempted and resumed and
// a twentieth 2-node gangs, ≈ 1M usage intervals over 300 teams in 10 orgs (half billed
// floor+burst in Europe/Berlin, half usage in UTC). Times each step: cut at the month ends,
// rate, chain and sign the ledger, build every org's invoice (JSON and CSV), verify the ledger.
// Run under /usr/bin/time -v for the peak RSS (make bench does).
#include <chrono>
#include <cstdio>

#include "billing/invoice_json.h"
#include "billing/sodium_crypto.h"
#include "billing/zoneinfo.h"
#include "core/rng.h"
#include "metering/invoice.h"
#include "metering/rating.h"
#include "state/cluster_state.h"

using namespace allot;

namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t jobs_per_day = argc > 1 ? std::atoll(argv[1]) : 30000;
  auto berlin = LoadTimeZone("Europe/Berlin");
  if (!berlin) {
    std::fprintf(stderr, "%s\n", berlin.error().message().c_str());
    return 2;
  }
  ClusterState st;
  // 50,000 GPUs: 5,000 H100 and 1,250 A100 nodes of 8 (guarantees must fit the capacity).
  for (int n = 0; n < 6250; ++n) {
    NodeSpec spec{"n" + std::to_string(n), "z", "r" + std::to_string(n / 32), "", 96000, 1 << 20,
                  n < 5000 ? "H100-80GB" : "A100-80GB", 8};
    if (Status s = st.apply({0, NodeAdded{spec}}); !s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 2;
  }
  const ResourceId h100 = st.resource_names().Find("gpu/H100-80GB"), a100 = st.resource_names().Find("gpu/A100-80GB");
  std::vector<TenantId> teams;
  for (int o = 0; o < 10; ++o) {
    TenantSpec org;
    org.path = "org" + std::to_string(o);
    org.SetGuarantee(h100, 1500 * kGpuUnit);
    if (Status s = st.apply({0, TenantUpserted{org}}); !s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 2;
    for (int t = 0; t < 30; ++t) {
      TenantSpec team;
      team.path = org.path + "/team" + std::to_string(t);
      team.SetGuarantee(h100, 40 * kGpuUnit);
      if (Status s = st.apply({0, TenantUpserted{team}}); !s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 2;
      teams.push_back(st.tenants().Find(team.path));
    }
  }
  RateCard card;
  card.gpu_hour = {{"H100-80GB", 2500000}, {"A100-80GB", 1800000}};
  card.cpu_hour = 20000;
  card.memory_gib_hour = 3000;
  card.burst_premium = 1200000;
  card.topology_premium[static_cast<int>(Topology::kRack)] = 1050000;
  std::vector<TenantId> org_of = OrgOf(st.tenants());
  std::vector<const TimeZone*> zone(st.tenants().size(), nullptr);
  TimeZone utc = TimeZone::Utc();
  std::vector<OrgPeriod> periods;
  for (const Tenant& t : st.tenants().tenants()) {
    if (t.depth != 1) continue;
    bool floor = (t.path.back() - '0') % 2 == 0;
    const TimeZone& tz = floor ? *berlin : utc;
    zone[t.id.value()] = &tz;
    periods.push_back({t.id, *ParseMonth(tz, "2025-03"), floor ? BillingMode::kFloorBurst : BillingMode::kUsage});
  }

  // Jobs start over 31 days from 2025-03-01 00:00 UTC; some run into April.
  Rng rng(42);
  const int64_t month0 = DaysFromCivil(2025, 3, 1) * 86400000;
  const int64_t jobs = jobs_per_day * 31;
  std::vector<UsageInterval> raw;
  raw.reserve(static_cast<size_t>(jobs * 12 / 10));
  for (int64_t j = 0; j < jobs; ++j) {
    UsageInterval iv;
    iv.job = JobId(static_cast<uint32_t>(j));
    iv.tenant = teams[rng.Below(teams.size())];
    iv.node = NodeId(static_cast<uint32_t>(rng.Below(6250)));
    iv.gpu_resource = rng.Below(4) == 0 ? a100 : h100;
    static constexpr int64_t kShapes[] = {kGpuUnit, 2 * kGpuUnit, 4 * kGpuUnit, 8 * kGpuUnit, 3000, 6300};
    iv.gpu = kShapes[rng.Below(6)];
    iv.cpu = 8000 * std::max<int64_t>(1, iv.gpu / kGpuUnit);
    iv.memory = 65536 * std::max<int64_t>(1, iv.gpu / kGpuUnit);
    iv.usage_class = rng.Below(10) < 7 ? UsageClass::kGuaranteed : rng.Below(10) == 0 ? UsageClass::kBestEffort : UsageClass::kBurstable;
    iv.start_ms = month0 + static_cast<int64_t>(rng.Below(31 * 86400)) * 1000;
    iv.end_ms = iv.start_ms + (10 * 60000) + static_cast<int64_t>(rng.Below(8 * 3600)) * 1000;
    bool gang = iv.gpu == 8 * kGpuUnit && rng.Below(3) == 0;  // ≈ 1 in 18 jobs
    if (gang) iv.topology = Topology::kRack;
    int64_t stop = rng.Below(10) == 0 ? iv.start_ms + (iv.end_ms - iv.start_ms) / 2 : -1;  // preempted, resumed 10 min later
    auto push = [&](UsageInterval x) {
      raw.push_back(x);
      if (gang) {
        x.node = NodeId(x.node.value() + 1);
        raw.push_back(x);
      }
    };
    if (stop > 0) {
      UsageInterval a = iv, b = iv;
      a.end_ms = stop;
      b.start_ms = stop + 600000;
      b.end_ms = iv.end_ms + 600000;
      push(a);
      push(b);
    } else {
      push(iv);
    }
  }
  std::printf("jobs %lld, intervals %zu (before the month cut)\n", static_cast<long long>(jobs), raw.size());

  auto t0 = std::chrono::steady_clock::now();
  NextBoundary next = [&](TenantId t, int64_t at) { return NextMonthStartMs(*zone[org_of[t.value()].value()], at); };
  std::vector<UsageInterval> intervals;
  intervals.reserve(raw.size() + raw.size() / 20);
  for (const UsageInterval& iv : raw) AppendSplit(iv, next, intervals);
  double t_split = Since(t0);

  t0 = std::chrono::steady_clock::now();
  auto lines = Rate({st.tenants(), st.resource_names(), card, &st.billing().floor_changes()}, periods, intervals);
  if (!lines) return std::fprintf(stderr, "%s\n", lines.error().message().c_str()), 1;
  double t_rate = Since(t0);

  t0 = std::chrono::steady_clock::now();
  auto crypto = *SodiumLedgerCrypto::FromSeed(std::string(64, '5'));
  Ledger ledger(crypto);
  for (const LedgerLine& l : *lines) ledger.Append(l);
  if (!ledger.Close("2025-03", card.currency)) return 1;
  std::string text = ledger.Encode();
  double t_ledger = Since(t0);

  t0 = std::chrono::steady_clock::now();
  int64_t total = 0;
  size_t bytes = 0;
  for (const OrgPeriod& p : periods) {
    Invoice inv = BuildInvoice(ledger.entries(), st.tenants().tenant(p.org).path, "2025-03", card.currency).value();
    total += inv.total;
    bytes += InvoiceJson(inv).size() + InvoiceCsv(inv).size();
  }
  double t_invoice = Since(t0);

  t0 = std::chrono::steady_clock::now();
  auto decoded = DecodeLedger(text, nullptr);
  auto verdict = decoded ? VerifyLedger(*decoded, crypto, crypto.PublicKey()) : Result<LedgerSummary>(Err(decoded.error()));
  double t_verify = Since(t0);
  if (!verdict) return std::fprintf(stderr, "%s\n", verdict.error().message().c_str()), 1;

  if (intervals.empty() || lines->empty() || total == 0) {
    std::fprintf(stderr, "meter_month: no usage was rated; nothing measured\n");
    return 1;
  }
  std::printf("intervals after the month cut %zu; ledger lines %zu (%zu bytes); invoices %zu bytes; total %s USD\n",
              intervals.size(), lines->size(), text.size(), bytes, FormatMicros(total).c_str());
  std::printf("cut %.3f s, rate %.3f s, ledger %.3f s, invoices %.3f s, decode+verify %.3f s\n", t_split, t_rate, t_ledger,
              t_invoice, t_verify);
  return 0;
}
