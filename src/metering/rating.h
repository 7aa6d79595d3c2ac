// Rating: usage intervals and a rate card → ledger lines for one period per org.
//
// One line per (leaf tenant, resource, class, topology) per period: the exact sum of resource ×
// ms over its intervals (clipped to the period), priced once (PriceLine: round half up). So an
// invoice is a sum of integers and adds up exactly in every breakdown, and the rounding error is
// at most half a micro-unit per line, never per interval.
//
// usage mode: every line priced; burstable and best-effort lines carry the burst premium, GPU
// lines of topology-constrained gangs the topology premium.
// floor+burst mode: floor lines bill each tenant's own share of the org's guarantees (its
// effective guarantee less its children's, so the org's floor is split down the tree without
// overlap) for the whole period, used or not; guaranteed usage of a resource with a floor is
// then covered (a line priced at 0, kept to show how much of the floor was used); everything
// else is billed as in usage mode.
//
// Reservations (issue 16), in either mode: one line per tenant and reservation, the GPUs it holds
// for the part of its windows inside the period (until it was cancelled), at the model's price
// with no premium, used or not. Runs inside a reservation are usage lines of class reserved,
// priced at 0 (kept to show how much of the reservation was used).
//
// A floor is billed for the time it held: given the state's floor history (RatingInput::floors,
// BillingState::floor_changes), a guarantee raised, cut, set or removed within the period is
// prorated to the millisecond, and a tenant removed within it still pays for the part it held.
// Without one, the tree's guarantees when rated are taken as held all period. A tenant moved to
// another org is billed, for the whole period, to the org it is in when rated.
#pragma once

#include <unordered_map>
#include <vector>

#include "metering/interval.h"
#include "metering/ledger.h"
#include "metering/rate_card.h"
#include "metering/time_zone.h"
#include "state/billing_state.h"
#include "state/reservation.h"
#include "tenancy/quota_tree.h"

namespace allot {

struct OrgPeriod {
  TenantId org;  // a top-level tenant
  Period period;
  BillingMode mode = BillingMode::kUsage;
};

struct RatingInput {
  const QuotaTree& tenants;
  const ResourceNames& names;
  const RateCard& card;
  const std::vector<FloorChange>* floors = nullptr;  // the floors' history, in time order
  const std::vector<CapacityReservation>* reservations = nullptr;  // billed by their windows
};

// The top-level tenant (org) each tenant id belongs to; the root maps to itself.
std::vector<TenantId> OrgOf(const QuotaTree& tenants);

// Resource × ms per usage line (tenant, resource, class, topology) within each org's period:
// what Rate prices, kept apart so that a caller can add intervals as their runs end rather
// than collect them all again (the budget gate). The sums are exact integers, so any order of
// Adds gives the same lines.
class UsageSums {
 public:
  UsageSums(const QuotaTree& tenants, std::vector<OrgPeriod> periods);
  // Clipped to its org's period; an interval of another org, or of a tenant the tree did not
  // have when these sums were made, is skipped.
  void Add(const UsageInterval& iv);
  const std::vector<OrgPeriod>& periods() const { return periods_; }
  // GPU units × ms by tenant id: each tenant's own, not its subtree's.
  const std::vector<__int128>& gpu_unit_ms() const { return gpu_unit_ms_; }

 private:
  friend Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const UsageSums& sums);
  std::vector<OrgPeriod> periods_;
  std::vector<TenantId> org_;        // by tenant id
  std::vector<int32_t> period_of_;   // by org id; -1: not rated
  std::unordered_map<uint64_t, __int128> sums_;  // by packed line key
  std::vector<__int128> gpu_unit_ms_;
};

// Lines for every org in `periods` over `intervals` (any order, any org: intervals of other
// orgs or outside the period are skipped), sorted by (org period, tenant path, kind, resource,
// class, topology, tenant id). Fails naming the GPU model the card has no price for.
Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const std::vector<OrgPeriod>& periods,
                                     const std::vector<UsageInterval>& intervals);
// The same over sums already made (their periods).
Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const UsageSums& sums);

// Every tenant's cost over its whole subtree, by tenant id (the root: everything).
std::vector<int64_t> CostBySubtree(const QuotaTree& tenants, const std::vector<LedgerLine>& lines);

}  // namespace allot
