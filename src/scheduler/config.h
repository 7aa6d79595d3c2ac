// Scheduler policy knobs. Defaults are what a fleet gets without configuration.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "policy/pass_gate.h"

namespace allot {

struct SchedulerConfig {
  // Drivers run a pass when something changes and, while jobs wait, on this tick (so that
  // protections such as min_runtime and the cooldown expire into decisions).
  int64_t pass_interval_ms = 60 * 1000;
  // A job is not preempted again (priority or fair share) within this long of its last
  // preemption. Reclaim of a guarantee ignores it: guarantees are promises.
  int64_t preemption_cooldown_ms = 10 * 60 * 1000;
  // Most victims one preemptor may take in one pass.
  int max_victims = 256;
  // Fair share among borrowers: a burstable job may evict another tenant's burstable job when
  // the victim tenant's weighted dominant share exceeds the preemptor tenant's (after the
  // preemptor would run) by more than the threshold, in thousandths of a share.
  bool fair_share_preemption = false;
  int64_t fair_share_threshold_milli = 100;
  // MIG re-profiling: a re-laid-out GPU's instances are usable this long after the plan (the
  // agent destroys and creates instances), and a GPU is not re-laid out again within
  // `mig_relayout_hold_ms` of its last re-layout, so layouts do not flip-flop with demand.
  int64_t mig_relayout_delay_ms = 30 * 1000;
  int64_t mig_relayout_hold_ms = 10 * 60 * 1000;
  // EASY backfill: a reservation is kept (not recomputed) this long while its job stays the
  // first one blocked for capacity, as Slurm's bf_interval.
  int64_t backfill_interval_ms = 60 * 1000;
  // How MPS shares are placed: a registered scorer (placement/score/scorer.cc) planning for the
  // MPS task shapes submitted so far, or "" for the built-in packing (busiest GPU first).
  std::string share_policy = "allot";
  // Pool kinds (bit 1 << Sharing) each job kind may use, by JobKind; all by default.
  uint8_t kind_pools[4] = {0xF, 0xF, 0xF, 0xF};
  // Budgets (or any other gate) pending jobs must pass: opened once per pass. Unset: none.
  std::shared_ptr<const PassGateFactory> gate;
};

}  // namespace allot
