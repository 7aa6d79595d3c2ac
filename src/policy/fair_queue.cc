#include "policy/fair_queue.h"

#include <algorithm>

namespace allot {

FairQueue::FairQueue(const UsageOverlay& usage, const Resources& capacity, int resource_count)
    : usage_(usage), capacity_(capacity), resource_count_(resource_count), entries_(usage.tree().size()) {}

void FairQueue::Push(const Job& job) {
  ALLOT_CHECK(!prepared_);
  entries_[job.spec.tenant.value()].own.push_back({job.queued_ms, job.id.value()});
  for (TenantId a = job.spec.tenant; a.valid(); a = usage_.tree().tenant(a).parent) {
    if (entries_[a.value()].count++ == 0) touched_.push_back(a);
  }
}

bool FairQueue::empty() const { return entries_[0].count == 0; }

void FairQueue::Prepare() {
  prepared_ = true;
  for (TenantId t : touched_) {
    auto& own = entries_[t.value()].own;
    std::sort(own.begin(), own.end(), [](const Head& a, const Head& b) { return b < a; });
  }
  // Children before parents: deeper tenants first.
  std::sort(touched_.begin(), touched_.end(), [&](TenantId a, TenantId b) {
    int da = usage_.tree().tenant(a).depth, db = usage_.tree().tenant(b).depth;
    return da != db ? da > db : a < b;
  });
  for (TenantId t : touched_) RefreshHead(t);
}

const Share& FairQueue::ShareOf(TenantId t) {
  Entry& e = entries_[t.value()];
  if (!e.share_valid) {
    e.share = WeightedDominantShare(usage_, t, capacity_, resource_count_);
    e.share_valid = true;
  }
  return e.share;
}

void FairQueue::RefreshHead(TenantId t) {
  Entry& e = entries_[t.value()];
  Head h = e.own.empty() ? Head{} : e.own.back();
  for (TenantId c : usage_.tree().tenant(t).children) {
    const Entry& ce = entries_[c.value()];
    if (ce.count > 0 && ce.head < h) h = ce.head;
  }
  e.head = h;
}

JobId FairQueue::Pop() {
  if (!prepared_) Prepare();
  ALLOT_CHECK(!empty());
  const QuotaTree& tree = usage_.tree();
  TenantId at = tree.root();
  // Descend: at each level pick the own queue or the child with (share, head) lowest.
  while (true) {
    Entry& e = entries_[at.value()];
    TenantId best;  // invalid = own queue
    bool have = false;
    Share best_share;
    Head best_head;
    if (!e.own.empty()) {
      best_share = ShareOf(at);
      best_head = e.own.back();
      have = true;
    }
    for (TenantId c : tree.tenant(at).children) {
      const Entry& ce = entries_[c.value()];
      if (ce.count == 0) continue;
      const Share& s = ShareOf(c);
      if (!have || s < best_share || (s == best_share && ce.head < best_head)) {
        best = c;
        best_share = s;
        best_head = ce.head;
        have = true;
      }
    }
    ALLOT_CHECK(have);
    if (!best.valid()) break;
    at = best;
  }
  Entry& leaf = entries_[at.value()];
  JobId job(leaf.own.back().job);
  leaf.own.pop_back();
  for (TenantId a = at; a.valid(); a = tree.tenant(a).parent) {
    entries_[a.value()].count -= 1;
    RefreshHead(a);
  }
  return job;
}

void FairQueue::OnUsageChanged(TenantId tenant) {
  for (TenantId a = tenant; a.valid(); a = usage_.tree().tenant(a).parent) {
    entries_[a.value()].share_valid = false;
  }
}

}  // namespace allot
