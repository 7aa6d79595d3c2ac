#include "metering/rating.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace allot {
namespace {

// (period index, tenant, resource, class, topology) packed: 16 + 32 + 8 + 4 + 4 bits. A hash map
// (its order never reaches the output: lines are sorted by a total order at the end).
uint64_t Pack(uint32_t p, uint32_t t, ResourceId r, UsageClass c, Topology topo) {
  return (uint64_t{p} << 48) | (uint64_t{t} << 16) | (uint64_t{r} << 8) | (uint64_t{static_cast<uint8_t>(c)} << 4) |
         static_cast<uint8_t>(topo);
}

Result<int64_t> UnitPrice(const RatingInput& in, ResourceId r) {
  if (r == kCpu) return in.card.cpu_hour;
  if (r == kMemory) return in.card.memory_gib_hour;
  const std::string& name = in.names.Name(r);
  std::string model = name.substr(name.find('/') + 1);
  auto it = in.card.gpu_hour.find(model);
  if (it == in.card.gpu_hour.end()) {
    return Err(FailedPrecondition("rate card: gpu_hour has no price for " + model +
                                  "; expected a price for every GPU model the fleet bills"));
  }
  return it->second;
}

}  // namespace

const char* AccountingName(Accounting a) { return a == Accounting::kShowback ? "showback" : "chargeback"; }

const char* BillingModeName(BillingMode m) { return m == BillingMode::kFloorBurst ? "floor+burst" : "usage"; }

std::vector<TenantId> OrgOf(const QuotaTree& tenants) {
  std::vector<TenantId> org(tenants.size());
  for (const Tenant& t : tenants.tenants()) {
    TenantId a = t.id;
    while (tenants.tenant(a).depth > 1) a = tenants.tenant(a).parent;
    org[t.id.value()] = a;
  }
  return org;
}

Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const std::vector<OrgPeriod>& periods,
                                     const std::vector<UsageInterval>& intervals) {
  const QuotaTree& tree = in.tenants;
  std::vector<TenantId> org = OrgOf(tree);
  std::vector<int32_t> period_of(tree.size(), -1);  // by org id
  for (size_t p = 0; p < periods.size(); ++p) period_of[periods[p].org.value()] = static_cast<int32_t>(p);

  // 1. Sum resource × ms per line, clipped to each org's period.
  ALLOT_CHECK(periods.size() < (1u << 16));
  std::unordered_map<uint64_t, __int128> sums;
  for (const UsageInterval& iv : intervals) {
    int32_t p = period_of[org[iv.tenant.value()].value()];
    if (p < 0) continue;
    int64_t from = std::max(iv.start_ms, periods[p].period.start_ms);
    int64_t to = std::min(iv.end_ms, periods[p].period.end_ms);
    if (to <= from) continue;
    __int128 ms = to - from;
    uint32_t t = iv.tenant.value();
    if (iv.gpu > 0 && iv.gpu_resource != kCpu) sums[Pack(p, t, iv.gpu_resource, iv.usage_class, iv.topology)] += iv.gpu * ms;
    if (iv.cpu > 0) sums[Pack(p, t, kCpu, iv.usage_class, Topology::kNone)] += iv.cpu * ms;
    if (iv.memory > 0) sums[Pack(p, t, kMemory, iv.usage_class, Topology::kNone)] += iv.memory * ms;
  }

  std::vector<LedgerLine> lines;
  std::vector<uint32_t> period_index;  // per line, for the sort
  auto add = [&](uint32_t p, TenantId t, EntryKind kind, ResourceId r, UsageClass c, Topology topo, __int128 q,
                 int64_t price, int64_t burst, int64_t topo_ppm, std::string note) -> Status {
    LedgerLine l;
    l.period = periods[p].period.label;
    l.tenant = tree.tenant(t).path;
    l.tenant_id = t;
    l.kind = kind;
    l.resource = in.names.Name(r);
    l.usage_class = c;
    l.topology = topo;
    l.quantity = q;
    l.unit_price = price;
    l.burst_ppm = burst;
    l.topology_ppm = topo_ppm;
    l.note = std::move(note);
    auto amount = PriceLine(l.resource, q, price, burst, topo_ppm);
    if (!amount) return Status(amount.error().code(), l.tenant + " " + l.resource + ": " + amount.error().message());
    l.amount = *amount;
    lines.push_back(std::move(l));
    period_index.push_back(p);
    return Status::Ok();
  };

  // 2. Floors (floor+burst): each tenant's own part of the org's guarantee, for the period.
  for (uint32_t p = 0; p < periods.size(); ++p) {
    if (periods[p].mode != BillingMode::kFloorBurst) continue;
    int64_t length = periods[p].period.end_ms - periods[p].period.start_ms;
    for (const Tenant& t : tree.tenants()) {
      if (t.removed || t.depth == 0 || org[t.id.value()] != periods[p].org) continue;
      for (int ri = 0; ri < in.names.size(); ++ri) {
        ResourceId r = static_cast<ResourceId>(ri);
        if (!t.has_guarantee(r)) continue;
        int64_t own = tree.EffectiveGuarantee(t.id, r);
        for (TenantId c : t.children) own -= tree.EffectiveGuarantee(c, r);
        if (own <= 0) continue;
        auto price = UnitPrice(in, r);
        if (!price) return Err(price.error());
        if (Status s = add(p, t.id, EntryKind::kFloor, r, UsageClass::kGuaranteed, Topology::kNone,
                           static_cast<__int128>(own) * length, *price, kPpm, kPpm, "");
            !s.ok()) {
          return Err(s);
        }
      }
    }
  }

  // 3. Usage lines.
  for (const auto& [key, q] : sums) {
    uint32_t p = static_cast<uint32_t>(key >> 48), t = static_cast<uint32_t>(key >> 16);
    ResourceId r = static_cast<ResourceId>(key >> 8);
    UsageClass c = static_cast<UsageClass>((key >> 4) & 0xF);
    Topology topo = static_cast<Topology>(key & 0xF);
    const OrgPeriod& op = periods[p];
    auto price = UnitPrice(in, r);
    if (!price) return Err(price.error());
    int64_t burst = c == UsageClass::kGuaranteed ? kPpm : in.card.burst_premium;
    int64_t topo_ppm = r >= kFirstGpu ? in.card.topology_premium[static_cast<int>(topo)] : kPpm;
    std::string note;
    if (op.mode == BillingMode::kFloorBurst && c == UsageClass::kGuaranteed &&
        tree.EffectiveGuarantee(op.org, r) > 0) {
      *price = 0;
      note = "covered by the floor";
    }
    if (Status s = add(p, TenantId(t), EntryKind::kUsage, r, c, topo, q, *price, burst, topo_ppm, std::move(note));
        !s.ok()) {
      return Err(s);
    }
  }

  // 4. A total order: period, then tenant path, kind, resource, class, topology, tenant id.
  std::vector<size_t> order(lines.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const LedgerLine& x = lines[a];
    const LedgerLine& y = lines[b];
    return std::tie(period_index[a], x.tenant, x.kind, x.resource, x.usage_class, x.topology, x.tenant_id) <
           std::tie(period_index[b], y.tenant, y.kind, y.resource, y.usage_class, y.topology, y.tenant_id);
  });
  std::vector<LedgerLine> out;
  out.reserve(lines.size());
  for (size_t i : order) out.push_back(std::move(lines[i]));
  return out;
}

std::vector<int64_t> CostBySubtree(const QuotaTree& tenants, const std::vector<LedgerLine>& lines) {
  std::vector<int64_t> cost(tenants.size(), 0);
  for (const LedgerLine& l : lines) {
    for (TenantId a = l.tenant_id; a.valid(); a = tenants.tenant(a).parent) cost[a.value()] += l.amount;
  }
  return cost;
}

}  // namespace allot
