// "Why is my share X": a tenant's place in hierarchical DRF, read off the state. Which resource
// is dominant and its weighted share; what the siblings it competes with hold; what it borrows
// beyond its guarantee and whose idle guarantee that is; what of its own guarantee others
// borrow; and which of its jobs reclaim would take first. Pure: time is a parameter, and it
// names tenants by id (the caller decides which names a reader may see).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "policy/drf.h"
#include "state/cluster_state.h"

namespace allot {

struct ResourceShareLine {
  ResourceId resource = kCpu;
  int64_t usage = 0;
  int64_t guaranteed_usage = 0;  // of it, held by jobs admitted as guaranteed
  int64_t guarantee = 0;         // effective (its own, else its children's sum); 0 when none
  bool has_guarantee = false;
  int64_t max = kUnlimited;
  int64_t capacity = 0;          // the fleet's
  Share share;                   // usage / (capacity × weight)
};

struct SiblingShare {
  TenantId tenant;
  ResourceId dominant = kCpu;
  Share share;
  Resources usage;
};

// An amount of one resource between the tenant's subtree and another tenant's (`other` invalid:
// the fleet's capacity that no tenant is guaranteed).
struct Loan {
  ResourceId resource = kCpu;
  TenantId other;
  int64_t amount = 0;
};

struct ReclaimLine {
  JobId job;
  ResourceId resource = kCpu;  // the reclaim order it was ranked in (a GPU model, or kCpu)
  size_t rank = 0;             // 0: the first job reclaim would take, fleet-wide
  size_t of = 0;               // jobs in that order
};

struct TenantExplanation {
  TenantId tenant;
  int64_t weight = kMilli;
  ResourceId dominant = kCpu;
  Share dominant_share;
  std::vector<ResourceShareLine> shares;  // every resource the fleet has or the tenant is limited in
  // Its parent's other live children, and itself, in the order the fair queue serves them:
  // lowest weighted dominant share first, then path.
  std::vector<SiblingShare> level;
  std::vector<Loan> borrowed;  // its burstable usage, attributed to idle guarantees, nearest first
  std::vector<Loan> lent;      // its idle guarantee, attributed to borrowers, nearest first
  std::vector<ReclaimLine> reclaim_first;  // its burstable jobs in reclaim order, at most 10 a resource
};

TenantExplanation ExplainTenant(const ClusterState& state, TenantId tenant, int64_t now);

// Plain sentences that say the same. `name` gives a tenant's path as the reader may see it.
std::vector<std::string> SummariseTenant(const ClusterState& state, const TenantExplanation& e,
                                         const std::function<std::string(TenantId)>& name);

// "0.375" (three decimals at most, exact rounding half-up of the fraction).
std::string FormatShare(const Share& s);

}  // namespace allot
