// Hierarchical DRF over pending jobs, by progressive filling: at each level of the tenant tree
// the child with the lowest weighted dominant share goes first, and shares are recomputed
// (OnPlaced) after every placement rather than sorted once per pass.
//
// Order at each level, a total order:
//   1. lowest weighted dominant share of the subtree (a tenant's own jobs compete with the
//      tenant's share);
//   2. earliest head job (queue time, then job id).
// Within a tenant's own queue: queue time, then job id. Queue time is the submit time, or the
// requeue time of a preempted job.
#pragma once

#include <vector>

#include "policy/drf.h"
#include "state/job.h"
#include "tenancy/usage_overlay.h"

namespace allot {

class FairQueue {
 public:
  FairQueue(const UsageOverlay& usage, const Resources& capacity, int resource_count);

  // All pushes come before the first Pop.
  void Push(const Job& job);
  bool empty() const;
  // Removes and returns the next job; REQUIRES: !empty().
  JobId Pop();
  // Call after usage under `tenant` changed (a placement): refreshes shares on its path.
  void OnUsageChanged(TenantId tenant);

 private:
  struct Head {
    int64_t queued_ms = INT64_MAX;
    uint32_t job = UINT32_MAX;
    auto operator<=>(const Head&) const = default;
  };
  struct Entry {
    std::vector<Head> own;  // sorted descending: back() is next
    int64_t count = 0;      // pending jobs in the subtree
    Head head;              // earliest pending job in the subtree
    Share share;
    bool share_valid = false;
  };

  void Prepare();
  const Share& ShareOf(TenantId t);
  void RefreshHead(TenantId t);

  const UsageOverlay& usage_;
  const Resources& capacity_;
  int resource_count_;
  std::vector<Entry> entries_;
  std::vector<TenantId> touched_;  // tenants with pending jobs in their subtree, pre-Prepare
  bool prepared_ = false;
};

}  // namespace allot
