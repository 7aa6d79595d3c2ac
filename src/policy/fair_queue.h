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

#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "core/function_ref.h"
#include "policy/drf.h"
#include "state/job.h"
#include "tenancy/usage_overlay.h"

namespace allot {

class FairQueue {
 public:
  FairQueue(const UsageOverlay& usage, const Resources& capacity, int resource_count);

  // Empties the queue for pushes anew (costs the tenants it held, not the tree).
  void Clear();
  // All pushes come before the first Pop.
  void Push(const Job& job);
  // A run of one tenant's jobs, in queue order and alive until the queue is done; `tag` comes
  // back with each job popped from it.
  void PushRun(TenantId tenant, const QueuedJob* first, const QueuedJob* last, uint32_t tag);
  bool empty() const;
  // Removes and returns the next job; REQUIRES: !empty().
  JobId Pop();
  // The next job, in the same order as Pop, except that jobs of the runs `silent(tag, head)`
  // names (`head`: the run's next job) are not returned: popping them must change nothing
  // (their jobs fail as the last one tried did, or as their head is known to), so they are
  // popped in batches, each batch given to `settle(tag, first, last)`:
  // every job a tenant's silent runs hold before the next job that is not silent, or before
  // the DRF order would turn to another tenant. nullopt once the queue is empty. `silent`
  // must not change within one call; between calls it may (a placement, OnUsageChanged, may
  // make runs speak again; a failure may make its run silent). Once every run left is
  // silent, all of them are settled together (in no particular order) and the queue is
  // empty.
  struct Popped {
    JobId job;
    uint32_t tag;
  };
  std::optional<Popped> PopNext(FunctionRef<bool(uint32_t, const QueuedJob&)> silent,
                                FunctionRef<void(uint32_t, const QueuedJob*, const QueuedJob*)> settle);
  // Call after usage under `tenant` changed (a placement): refreshes shares on its path.
  void OnUsageChanged(TenantId tenant);

 private:
  using Head = QueuedJob;  // queue time, then job id; the default is "none"
  struct Run {
    const QueuedJob* cur;
    const QueuedJob* end;
    uint32_t tag;
  };
  struct Entry {
    std::vector<Run> own;  // a heap, earliest head on top
    int64_t count = 0;     // pending jobs in the subtree
    Head head;             // earliest pending job in the subtree
    Share share;
    bool share_valid = false;
    // Where it has no own jobs and many children tie on the lowest share (tenants of equal
    // weight and usage, whose jobs interleave by queue order): those children as a min-heap by
    // head (heaps_[heap]), so a descent reads its top instead of scanning every child. Valid
    // while no share below it changed; a pop moves only the top's head (the chosen child's).
    // Built on the second scan since a share below it changed (`scans`): it pays only where
    // shares hold across pops.
    bool by_head_valid = false;
    uint8_t scans = 0;
    int32_t heap = -1;
    // Its children with pending jobs (count > 0), in no particular order: active_[at, at + n).
    uint32_t active_at = 0;
    uint32_t active_n = 0;
  };
  using ByHead = std::vector<std::pair<Head, TenantId>>;
  // A step of the descent: at `at`, the own queue (child invalid) or `child` was chosen; `tie`
  // is the earliest head among the others with an equal share (they win once the chosen
  // one's head passes it).
  struct Step {
    TenantId at;
    TenantId child;
    Head tie;
  };

  // Children of equal lowest share from which a level keeps them in a heap by head.
  static constexpr int kHeapFrom = 4;
  void Prepare();
  const Share& ShareOf(TenantId t);
  void RefreshHead(TenantId t);
  static Head OwnHead(const Entry& e) { return e.own.empty() ? Head{} : *e.own.front().cur; }
  // The children of `e` with pending jobs: a level is chosen among them only (the order does
  // not matter: (share, head) is a total order since heads are distinct jobs).
  std::span<const TenantId> Active(const Entry& e) const { return {active_.data() + e.active_at, e.active_n}; }
  void Descend(std::vector<Step>& path);
  void Consumed(TenantId leaf, int64_t n);
  // `t`'s subtree has no pending job left: it leaves its parent's active children.
  void Deactivate(TenantId t);
  // `t`'s head moved (a pop under it): its parent's heap by head follows, or is dropped.
  void HeadMoved(TenantId t);
  static void SiftDown(ByHead& heap, size_t i);
  // When every run left is silent: settles them all, empties the queue and says so.
  bool SettleIfAllSilent(FunctionRef<bool(uint32_t, const QueuedJob&)> silent,
                         FunctionRef<void(uint32_t, const QueuedJob*, const QueuedJob*)> settle);

  const UsageOverlay& usage_;
  const Resources& capacity_;
  int resource_count_;
  std::vector<Entry> entries_;
  std::vector<TenantId> touched_;  // tenants with pending jobs in their subtree, pre-Prepare
  std::vector<TenantId> active_;   // the entries' active children, by range
  std::vector<ByHead> heaps_;      // the entries' heaps by head (Entry::heap)
  std::deque<QueuedJob> singles_;  // what Push(job) queued
  std::vector<Step> path_;
  std::vector<char> silent_of_;  // PopNext's answers of `silent` for the leaf's runs
  bool path_valid_ = false;  // path_ is the last descent's and no share changed since
  bool prepared_ = false;
  // Silent batches popped since the last look for a queue of silent runs only, and the runs
  // that look went through (the next look waits until the batches have cost as much).
  int64_t silent_batches_ = 0;
  int64_t runs_at_look_ = 0;
};

}  // namespace allot
