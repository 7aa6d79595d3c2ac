// "Why is my share X" (tenant_explain.h). The borrowed and lent attributions are a reading of
// the tree, not a record: the scheduler admits a burstable job against the fleet's free
// capacity and keeps no lender per job. The reading names, nearest in the tree first, whose
// guarantee lies idle while the tenant runs beyond its own; other borrowers may be reading the
// same idle guarantee.
#include "scheduler/tenant_explain.h"

#include <algorithm>
#include <tuple>

#include "core/quantity.h"
#include "core/resources.h"
#include "scheduler/victims.h"
#include "tenancy/access.h"

namespace allot {
namespace {

constexpr size_t kReclaimLinesPerResource = 10;

Share ShareOf(int64_t usage, int64_t capacity, int64_t weight) {
  if (capacity <= 0) return Share{0, 1};
  return Share{usage * kMilli, capacity * weight};
}

// The tenant's dominant resource and weighted share, as WeightedDominantShare computes it (the
// first resource of the largest share on a tie).
std::pair<ResourceId, Share> Dominant(const ClusterState& st, TenantId t) {
  const Tenant& tenant = st.tenants().tenant(t);
  const Resources& cap = st.fleet().capacity();
  ResourceId best_r = kCpu;
  Share best{0, 1};
  for (int i = 0; i < st.resource_names().size(); ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    if (cap[r] <= 0) continue;
    Share s = ShareOf(tenant.usage[r], cap[r], tenant.weight);
    if (s > best) {
      best = s;
      best_r = r;
    }
  }
  return {best_r, best};
}

std::vector<TenantId> LiveSiblings(const QuotaTree& tree, TenantId t) {
  std::vector<TenantId> out;
  for (TenantId c : tree.tenant(tree.tenant(t).parent).children) {
    if (c != t && !tree.tenant(c).removed) out.push_back(c);
  }
  return out;
}

// The idle guarantee of r that `parent` keeps for itself: what of its own idle guarantee its
// children's idle guarantees do not account for (a parent guaranteed 16 whose children are
// guaranteed 8 in all keeps 8 for any of them).
int64_t KeptIdle(const QuotaTree& tree, TenantId parent, ResourceId r) {
  if (parent == tree.root() || !tree.tenant(parent).has_guarantee(r)) return 0;
  int64_t idle = tree.EffectiveGuarantee(parent, r) - tree.tenant(parent).usage[r];
  for (TenantId c : tree.tenant(parent).children) {
    if (!tree.tenant(c).removed) idle -= std::max<int64_t>(0, tree.EffectiveGuarantee(c, r) - tree.tenant(c).usage[r]);
  }
  return std::max<int64_t>(0, idle);
}

// Walks outward from `t`: at each level its siblings with something to give (`amount_of`),
// largest first, then by path, then (when `kept` is set) the parent's kept idle guarantee;
// takes from each until `need` is met. What no level covers is returned with an invalid tenant
// when `remainder` is set.
std::vector<Loan> Attribute(const QuotaTree& tree, TenantId t, ResourceId r, int64_t need, bool remainder, bool kept,
                            const std::function<int64_t(TenantId)>& amount_of) {
  std::vector<Loan> out;
  for (TenantId at = t; need > 0 && at != tree.root(); at = tree.tenant(at).parent) {
    std::vector<std::pair<int64_t, TenantId>> givers;
    for (TenantId s : LiveSiblings(tree, at)) {
      int64_t a = amount_of(s);
      if (a > 0) givers.push_back({a, s});
    }
    TenantId parent = tree.tenant(at).parent;
    if (int64_t idle = kept ? KeptIdle(tree, parent, r) : 0; idle > 0) givers.push_back({idle, parent});
    std::sort(givers.begin(), givers.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return tree.tenant(a.second).path < tree.tenant(b.second).path;
    });
    for (const auto& [a, s] : givers) {
      int64_t take = std::min(a, need);
      out.push_back({r, s, take});
      need -= take;
      if (need == 0) break;
    }
  }
  if (need > 0 && remainder) out.push_back({r, TenantId(), need});
  return out;
}

std::string Ordinal(size_t n) {
  int mod100 = static_cast<int>(n % 100), mod10 = static_cast<int>(n % 10);
  const char* suffix = (mod100 >= 11 && mod100 <= 13) ? "th" : mod10 == 1 ? "st" : mod10 == 2 ? "nd" : mod10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

std::string FormatShare(const Share& s) {
  if (s.den <= 0) return "0";
  __int128 milli = (static_cast<__int128>(s.num) * 1000 * 2 + s.den) / (static_cast<__int128>(s.den) * 2);
  return FormatMilli(static_cast<int64_t>(milli));
}

TenantExplanation ExplainTenant(const ClusterState& st, TenantId t, int64_t now) {
  const QuotaTree& tree = st.tenants();
  const Tenant& tenant = tree.tenant(t);
  const Resources& cap = st.fleet().capacity();
  TenantExplanation e;
  e.tenant = t;
  e.weight = tenant.weight;
  std::tie(e.dominant, e.dominant_share) = Dominant(st, t);

  for (int i = 0; i < st.resource_names().size(); ++i) {
    ResourceId r = static_cast<ResourceId>(i);
    int64_t guarantee = tree.EffectiveGuarantee(t, r);
    bool limited = guarantee > 0 || tenant.has_guarantee(r) || tenant.max[r] != kUnlimited;
    if (cap[r] <= 0 && !limited && tenant.usage[r] == 0) continue;
    e.shares.push_back({r, tenant.usage[r], tenant.guaranteed_usage[r], guarantee, guarantee > 0 || tenant.has_guarantee(r),
                        tenant.max[r], cap[r], ShareOf(tenant.usage[r], cap[r], tenant.weight)});
  }

  std::vector<TenantId> level = LiveSiblings(tree, t);
  level.push_back(t);
  for (TenantId s : level) {
    auto [r, share] = Dominant(st, s);
    e.level.push_back({s, r, share, tree.tenant(s).usage});
  }
  std::sort(e.level.begin(), e.level.end(), [&](const SiblingShare& a, const SiblingShare& b) {
    if (a.share != b.share) return a.share < b.share;
    return tree.tenant(a.tenant).path < tree.tenant(b.tenant).path;
  });

  for (const ResourceShareLine& line : e.shares) {
    ResourceId r = line.resource;
    // What its burstable jobs hold beyond its own guarantee (a burstable job may sit partly
    // inside it: admission takes a job whole), or all they hold when it has none of its own.
    int64_t burst = line.usage - line.guaranteed_usage;
    if (line.has_guarantee) burst = std::min(burst, line.usage - line.guarantee);
    if (burst > 0) {
      auto idle = [&](TenantId s) { return tree.EffectiveGuarantee(s, r) - tree.tenant(s).usage[r]; };
      for (Loan& l : Attribute(tree, t, r, burst, /*remainder=*/true, /*kept=*/true, idle)) e.borrowed.push_back(l);
    }
    int64_t idle = line.guarantee - line.usage;
    if (line.has_guarantee && idle > 0) {
      auto borrowing = [&](TenantId s) { return tree.tenant(s).usage[r] - tree.tenant(s).guaranteed_usage[r]; };
      for (Loan& l : Attribute(tree, t, r, idle, /*remainder=*/false, /*kept=*/false, borrowing)) e.lent.push_back(l);
    }
  }

  // Reclaim's order per GPU model the subtree borrows, and for its GPU-less burstable jobs the
  // order a GPU-less guaranteed job would use.
  std::vector<ResourceId> orders;
  bool cpu_only = false;
  for (JobId id : st.burstable_running()) {
    const Job& j = st.job(id);
    if (!InSubtree(tree, j.spec.tenant, t)) continue;
    ResourceId r = j.demand.gpu > 0 ? j.spec.gpu_resource : kCpu;
    if (r == kCpu) cpu_only = true;
    if (r != kCpu && std::find(orders.begin(), orders.end(), r) == orders.end()) orders.push_back(r);
  }
  std::sort(orders.begin(), orders.end());
  if (cpu_only) orders.push_back(kCpu);
  for (ResourceId r : orders) {
    std::vector<JobId> order = ReclaimOrder(st, now, r);
    size_t taken = 0;
    for (size_t i = 0; i < order.size() && taken < kReclaimLinesPerResource; ++i) {
      const Job& j = st.job(order[i]);
      if (!InSubtree(tree, j.spec.tenant, t)) continue;
      if (r == kCpu && j.demand.gpu > 0) continue;  // listed under its GPU model
      e.reclaim_first.push_back({order[i], r, i, order.size()});
      ++taken;
    }
  }
  return e;
}

std::vector<std::string> SummariseTenant(const ClusterState& st, const TenantExplanation& e,
                                         const std::function<std::string(TenantId)>& name) {
  const QuotaTree& tree = st.tenants();
  const ResourceNames& names = st.resource_names();
  const Tenant& tenant = tree.tenant(e.tenant);
  std::string me = name(e.tenant);
  std::vector<std::string> out;

  auto line_of = [&](ResourceId r) -> const ResourceShareLine* {
    for (const ResourceShareLine& l : e.shares) {
      if (l.resource == r) return &l;
    }
    return nullptr;
  };
  const ResourceShareLine* dom = line_of(e.dominant);
  if (e.dominant_share == Share{0, 1} || dom == nullptr) {
    out.push_back(me + " holds nothing now, so its dominant share is 0 and the fair queue serves it before any tenant "
                       "beside it that holds something.");
  } else {
    std::string s = me + "'s dominant resource is " + names.Name(e.dominant) + ": it holds " +
                    FormatAmount(e.dominant, dom->usage) + " of the fleet's " + FormatAmount(e.dominant, dom->capacity);
    if (e.weight == kMilli) {
      s += ", a dominant share of " + FormatShare(e.dominant_share) + ".";
    } else {
      s += "; at weight " + FormatMilli(e.weight) + " its weighted dominant share is " + FormatShare(e.dominant_share) + ".";
    }
    out.push_back(s);
  }

  if (e.level.size() > 1) {
    std::string where = tenant.parent == tree.root() ? "the top-level tenants" : "the tenants under " + name(tenant.parent);
    std::string s = "Among " + where + " the fair queue serves the lowest weighted share first: ";
    size_t pos = 0;
    for (size_t i = 0; i < e.level.size(); ++i) {
      const SiblingShare& l = e.level[i];
      if (i > 0) s += ", ";
      s += name(l.tenant) + " " + FormatShare(l.share);
      if (l.share != Share{0, 1}) s += " (" + names.Name(l.dominant) + ")";
      if (l.tenant == e.tenant) pos = i + 1;
    }
    s += "; " + me + " comes " + Ordinal(pos) + " of " + std::to_string(e.level.size()) + ".";
    out.push_back(s);
  }

  for (const ResourceShareLine& l : e.shares) {
    ResourceId r = l.resource;
    int64_t burst = l.usage - l.guaranteed_usage;
    if (l.usage == 0 && !l.has_guarantee) continue;
    std::string s = "Of " + names.Name(r) + " it holds " + FormatAmount(r, l.usage);
    TenantId above = tenant.parent;
    while (above != tree.root() && !tree.tenant(above).has_guarantee(r)) above = tree.tenant(above).parent;
    if (l.has_guarantee) {
      s += " against a guarantee of " + FormatAmount(r, l.guarantee);
    } else if (above != tree.root()) {
      s += " with no guarantee of its own, under " + name(above) + "'s guarantee of " +
           FormatAmount(r, tree.tenant(above).guarantee[r]);
    } else {
      s += " with no guarantee on its path";
    }
    if (burst > 0) s += "; its burstable jobs (reclaimable) hold " + FormatAmount(r, burst);
    int64_t borrowed = 0;
    for (const Loan& loan : e.borrowed) borrowed += loan.resource == r ? loan.amount : 0;
    if (borrowed > 0) {
      s += (l.has_guarantee ? ", " + FormatAmount(r, borrowed) + " of it beyond its guarantee: "
                            : ", borrowed: ");
      bool first = true;
      for (const Loan& loan : e.borrowed) {
        if (loan.resource != r) continue;
        if (!first) s += ", ";
        first = false;
        if (!loan.other.valid()) {
          s += FormatAmount(r, loan.amount) + " from capacity no other tenant is guaranteed";
        } else if (InSubtree(tree, e.tenant, loan.other)) {
          s += FormatAmount(r, loan.amount) + " from the idle guarantee " + name(loan.other) + " keeps for its children";
        } else {
          s += FormatAmount(r, loan.amount) + " from the idle guarantee of " + name(loan.other);
        }
      }
    }
    int64_t idle = l.guarantee - l.usage;
    if (l.has_guarantee && idle > 0) {
      s += "; " + FormatAmount(r, idle) + " of its guarantee lies idle";
      int64_t lent = 0;
      std::string to;
      for (const Loan& loan : e.lent) {
        if (loan.resource != r) continue;
        lent += loan.amount;
        to += (to.empty() ? "" : ", ") + name(loan.other) + " " + FormatAmount(r, loan.amount);
      }
      if (lent > 0) s += ", and others borrow it (" + to + "): reclaim gives it back when " + me + " asks";
    }
    if (l.max != kUnlimited) s += "; its max is " + FormatAmount(r, l.max);
    out.push_back(s + ".");
  }

  if (tenant.usage.IsZero()) {
    // nothing running, nothing to reclaim
  } else if (e.reclaim_first.empty()) {
    out.push_back("None of its running jobs can be reclaimed: every one runs within a guarantee.");
  } else {
    for (size_t i = 0; i < e.reclaim_first.size(); ++i) {
      const ReclaimLine& l = e.reclaim_first[i];
      if (i > 0 && e.reclaim_first[i - 1].resource == l.resource) continue;
      std::string what = l.resource == kCpu ? "CPU or memory" : names.Name(l.resource);
      out.push_back("If a guaranteed job needs " + what + ", reclaim takes " + me + "'s job '" + st.job(l.job).spec.name +
                    "' first of its jobs (" + Ordinal(l.rank + 1) + " of " + std::to_string(l.of) +
                    " burstable jobs fleet-wide), furthest-over-guarantee tenants first, then lowest priority, "
                    "least work lost, newest start.");
    }
  }
  return out;
}

}  // namespace allot
