// FailedAttempts: a memo, kept across passes, of waiting gangs that could neither be placed nor
// preempt their way in, so that later passes skip the attempt until capacity that could change
// the answer comes back. Whoever runs passes over one evolving state keeps one (allotd's
// controller, the simulator) and hands it to PlanPass; without one every job is tried.
//
// Sound by counting, not by replay. An entry is made only for a whole-GPU job that must lie in
// one rack or one zone (a rack or zone gang; one task lies on one node, so in one of each), and
// only when in every domain d of that kind
//     B_d = free GPUs of its model in d (the pass's view at its turn)
//         + GPUs placed in d earlier in the same pass
//         + GPUs in d of every running job that could ever be its victim: its tenant's jobs of
//           any priority (priority preemption), and every burstable job when it may reclaim
//           or fair share is on
// is below its demand: no placement and no victim set can make it fit in d (placement needs a
// domain with that many free GPUs; victims free only their own). Between passes B_d grows only
// by GPUs given back in d: placements take free GPUs (a new candidate takes them from the free
// ones), signals turn candidates into non-candidates, protections (cooldown, min runtime) only
// ever hide candidates that B_d already counts. ClusterState counts the GPUs given back per
// rack and zone (released_gpus); any other change that could give capacity or change who may
// be a victim (nodes, tenants, reservations, MIG layouts, noisy-neighbour moves, services)
// moves its change_epoch, and the memo then forgets everything. An entry keeps
// slack_d = demand - 1 - B_d and dies once the GPUs given back in some d exceed it there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fleet/fleet.h"
#include "state/cluster_state.h"

namespace allot {

class FailedAttempts {
 public:
  // Brings the memo up to `state`: forgets every entry when `state` is another object or its
  // change epoch moved since the last call; otherwise drops the entries whose slack the GPUs
  // given back since have used up in some domain, and those of jobs no longer pending or
  // whose shape changed.
  void Sync(const ClusterState& state);
  // Whether job `id` is remembered to fail (after Sync, an entry's job is pending with the
  // shape it was remembered with). `with_burstable`: the attempt now would also consider
  // burstable victims of every tenant; an entry made without them does not answer for it.
  // Read from two bits a job (asked for the head of every waiting group in every pass: the
  // bits of a month's 900,000 jobs fit a core's cache, the entries do not).
  bool Fails(JobId id, bool with_burstable) const {
    const uint32_t i = id.value();
    if ((i >> 5) >= bits_.size()) return false;
    const uint64_t b = bits_[i >> 5] >> ((i & 31) * 2);
    return (b & 1) && ((b & 2) || !with_burstable);
  }
  // Remembers job `id`'s failure with its slack per domain of `kind` (all >= 0).
  void Remember(JobId id, uint32_t shape, bool with_burstable, DomainKind kind, std::vector<int32_t> slack);

  size_t size() const { return entries_.size(); }
  // Attempts skipped, failures remembered, and runs of a group settled at once without going
  // through the fair queue, since this memo was made (for tests and benches).
  int64_t hits() const { return hits_; }
  int64_t remembered() const { return remembered_; }
  int64_t runs_settled() const { return runs_settled_; }
  void CountHit() { ++hits_; }
  void CountRunSettled() { ++runs_settled_; }

 private:
  struct Entry {
    uint32_t job;
    uint32_t shape;
    bool with_burstable;
    int kind;  // 0 rack, 1 zone
    std::vector<int32_t> slack;  // by domain
  };
  void Forget(size_t i);  // entries_[i], the last entry taking its place
  const ClusterState* state_ = nullptr;
  uint64_t epoch_ = 0;
  uint64_t shape_changes_ = 0;  // the state's shape_changes at the last Sync
  std::vector<int64_t> seen_[2];    // released_gpus at the last Sync, [rack, zone]
  // The entries in no particular order, and each job's index among them (-1: none): looked up
  // for the head of every waiting group in every pass, walked once a pass by Sync.
  std::vector<Entry> entries_;
  std::vector<int32_t> at_;
  // Per job, two bits: remembered (1), made with burstable victims (2); kept with the entries.
  std::vector<uint64_t> bits_;
  void SetBits(uint32_t job, uint64_t bits) {
    if ((job >> 5) >= bits_.size()) bits_.resize(std::max<size_t>((job >> 5) + 1, bits_.size() * 2), 0);
    const int shift = (job & 31) * 2;
    bits_[job >> 5] = (bits_[job >> 5] & ~(uint64_t{3} << shift)) | bits << shift;
  }
  int64_t hits_ = 0;
  int64_t remembered_ = 0;
  int64_t runs_settled_ = 0;
};

}  // namespace allot
