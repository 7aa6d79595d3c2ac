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
// A floor is billed for the time it held: given the state's floor history (RatingInput::floors,
// BillingState::floor_changes), a guarantee raised, cut, set or removed within the period is
// prorated to the millisecond, and a tenant removed within it still pays for the part it held.
// Without one, the tree's guarantees when rated are taken as held all period. A tenant moved to
// another org is billed, for the whole period, to the org it is in when rated.
#pragma once

#include <vector>

#include "metering/interval.h"
#include "metering/ledger.h"
#include "metering/rate_card.h"
#include "metering/time_zone.h"
#include "state/billing_state.h"
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
};

// The top-level tenant (org) each tenant id belongs to; the root maps to itself.
std::vector<TenantId> OrgOf(const QuotaTree& tenants);

// Lines for every org in `periods` over `intervals` (any order, any org: intervals of other
// orgs or outside the period are skipped), sorted by (org period, tenant path, kind, resource,
// class, topology, tenant id). Fails naming the GPU model the card has no price for.
Result<std::vector<LedgerLine>> Rate(const RatingInput& in, const std::vector<OrgPeriod>& periods,
                                     const std::vector<UsageInterval>& intervals);

// Every tenant's cost over its whole subtree, by tenant id (the root: everything).
std::vector<int64_t> CostBySubtree(const QuotaTree& tenants, const std::vector<LedgerLine>& lines);

}  // namespace allot
