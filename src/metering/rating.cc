#include "metering/rating.h"

#include <algorithm>
#include <climits>
#include <map>
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

// Floor × ms over [start, end) for a floor that is `current` now and changed as `changes` say
// (its own, in time order): walking back from now, each change's `before` held until it.
__int128 FloorMs(int64_t current, const std::vector<const FloorChange*>& changes, int64_t start, int64_t end) {
  __int128 total = 0;
  int64_t value = current;
  int64_t upto = end;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    int64_t from = std::max((*it)->time_ms, start);
    if (upto > from) total += static_cast<__int128>(value) * (upto - from);
    upto = std::min(upto, std::max((*it)->time_ms, start));
    value = (*it)->before;
  }
  if (upto > start) total += static_cast<__int128>(value) * (upto - start);
  return total;
}

}  // namespace

const char* AccountingName(Accounting a) { return a == Accounting::kShowback ? "showback" : "chargeback"; }

const char* BillingModeName(BillingMode m) { return m == BillingMode::kFloorBurst ? "floor+burst" : "usage"; }

std::vector<TenantId> OrgOf(const QuotaTree& tenants) {
  std::vector<TenantId> org(tenants.size());
  for (const Tenant& t : tenants.tenants()) org[t.id.value()] = tenants.OrgOf(t.id);
  return org;
}

UsageSums::UsageSums(const QuotaTree& tenants, std::vector<OrgPeriod> periods)
    : periods_(std::move(periods)), org_(OrgOf(tenants)), period_of_(tenants.size(), -1),
      gpu_unit_ms_(tenants.size(), 0) {
  ALLOT_CHECK(periods_.size() < (1u << 16));
  for (size_t p = 0; p < periods_.size(); ++p) period_of_[periods_[p].org.value()] = static_cast<int32_t>(p);
}

void UsageSums::Add(const UsageInterval& iv) {
  uint32_t t = iv.tenant.value();
  if (t >= org_.size()) return;
  int32_t p = period_of_[org_[t].value()];
  if (p < 0) return;
  int64_t from = std::max(iv.start_ms, periods_[p].period.start_ms);
  int64_t to = std::min(iv.end_ms, periods_[p].period.end_ms);
  if (to <= from) return;
  __int128 ms = to - from;
  if (iv.gpu > 0 && iv.gpu_resource != kCpu) {
    sums_[Pack(p, t, iv.gpu_resource, iv.usage_class, iv.topology)] += iv.gpu * ms;
    gpu_unit_ms_[t] += iv.gpu * ms;
  }
  if (iv.cpu > 0) sums_[Pack(p, t, kCpu, iv.usage_class, Topology::kNone)] += iv.cpu * ms;
  if (iv.memory > 0) sums_[Pack(p, t, kMemory, iv.usage_class, Topology::kNone)] += iv.memory * ms;
}

Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const std::vector<OrgPeriod>& periods,
                                     const std::vector<UsageInterval>& intervals) {
  // 1. Sum resource × ms per line, clipped to each org's period.
  UsageSums sums(in.tenants, periods);
  for (const UsageInterval& iv : intervals) sums.Add(iv);
  return Rate(in, sums);
}

Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const UsageSums& usage) {
  const QuotaTree& tree = in.tenants;
  const std::vector<OrgPeriod>& periods = usage.periods_;
  std::vector<TenantId> org = OrgOf(tree);
  const std::unordered_map<uint64_t, __int128>& sums = usage.sums_;

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

  // 2. Floors (floor+burst): each tenant's own part of the org's guarantee, for the time it held
  // in the period. The changes that matter are those since the earliest period's start, by
  // (tenant, resource), in time order (a stable sort: the history is already, unless the clock
  // that timed the events stepped back).
  std::map<std::pair<uint32_t, ResourceId>, std::vector<const FloorChange*>> changed;
  if (in.floors) {
    int64_t earliest = INT64_MAX;
    for (const OrgPeriod& op : periods) {
      if (op.mode == BillingMode::kFloorBurst) earliest = std::min(earliest, op.period.start_ms);
    }
    for (const FloorChange& fc : *in.floors) {
      if (fc.time_ms >= earliest) changed[{fc.tenant.value(), fc.resource}].push_back(&fc);
    }
    for (auto& [key, list] : changed) {
      std::stable_sort(list.begin(), list.end(),
                       [](const FloorChange* x, const FloorChange* y) { return x->time_ms < y->time_ms; });
    }
  }
  static const std::vector<const FloorChange*> kNone;
  std::vector<std::vector<bool>> has_floor(periods.size());  // by period, resource: any floor held
  for (uint32_t p = 0; p < periods.size(); ++p) {
    if (periods[p].mode != BillingMode::kFloorBurst) continue;
    has_floor[p].assign(in.names.size(), false);
    for (const Tenant& t : tree.tenants()) {
      if (t.depth == 0 || org[t.id.value()] != periods[p].org) continue;
      for (int ri = 0; ri < in.names.size(); ++ri) {
        ResourceId r = static_cast<ResourceId>(ri);
        auto c = changed.find({t.id.value(), r});
        const auto& changes = c == changed.end() ? kNone : c->second;
        int64_t own = tree.OwnGuarantee(t.id, r);
        if (own == 0 && changes.empty()) continue;
        __int128 q = FloorMs(own, changes, periods[p].period.start_ms, periods[p].period.end_ms);
        if (q <= 0) continue;
        has_floor[p][ri] = true;
        auto price = UnitPrice(in, r);
        if (!price) return Err(price.error());
        if (Status s = add(p, t.id, EntryKind::kFloor, r, UsageClass::kGuaranteed, Topology::kNone, q, *price, kPpm,
                           kPpm, "");
            !s.ok()) {
          return Err(s);
        }
      }
    }
  }

  // 2b. Reservations: the GPUs each holds over its windows' part of the period, until cancelled.
  if (in.reservations) {
    std::map<std::tuple<uint32_t, uint32_t, ResourceId, std::string>, __int128> booked;  // (period, tenant, model, name)
    for (const CapacityReservation& x : *in.reservations) {
      uint32_t t = x.spec.tenant.value();
      if (t >= org.size()) continue;
      for (uint32_t p = 0; p < periods.size(); ++p) {
        if (org[t] != periods[p].org) continue;
        __int128 q = x.BookedUnitMs(periods[p].period.start_ms, periods[p].period.end_ms);
        if (q > 0) booked[{p, t, x.spec.gpu_resource, x.spec.name}] += q;
      }
    }
    for (const auto& [key, q] : booked) {
      const auto& [p, t, r, name] = key;
      auto price = UnitPrice(in, r);
      if (!price) return Err(price.error());
      if (Status s = add(p, TenantId(t), EntryKind::kReservation, r, UsageClass::kGuaranteed, Topology::kNone, q, *price,
                         kPpm, kPpm, "reservation '" + name + "'");
          !s.ok()) {
        return Err(s);
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
    int64_t burst = c == UsageClass::kGuaranteed || c == UsageClass::kReserved ? kPpm : in.card.burst_premium;
    int64_t topo_ppm = r >= kFirstGpu ? in.card.topology_premium[static_cast<int>(topo)] : kPpm;
    std::string note;
    if (op.mode == BillingMode::kFloorBurst && c == UsageClass::kGuaranteed && has_floor[p][r]) {
      *price = 0;
      note = "covered by the floor";
    }
    if (c == UsageClass::kReserved) {
      *price = 0;
      topo_ppm = kPpm;
      note = "covered by its reservation";
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
    return std::tie(period_index[a], x.tenant, x.kind, x.resource, x.usage_class, x.topology, x.tenant_id, x.note) <
           std::tie(period_index[b], y.tenant, y.kind, y.resource, y.usage_class, y.topology, y.tenant_id, y.note);
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
