// The Meter turns the event stream into usage intervals. It is fed every event just after
// ClusterState::apply accepted it, with that state (the job's resolved spec — GPU units per task
// after share resolution — lives only there); refused events must not be fed. It keeps only
// the runs now open, so memory follows the active jobs, not the history.
//
// A job holds resources from JobPlaced until JobStopped, JobFinished, JobFailed or JobCancelled
// (a job being preempted still holds them), or until its node fails or re-registers (requeued).
// Each run gives one interval per node, cut at every period boundary when a NextBoundary is given.
#pragma once

#include <map>
#include <vector>

#include "metering/interval.h"
#include "state/cluster_state.h"

namespace allot {

class Meter {
 public:
  explicit Meter(NextBoundary next_boundary = nullptr) : next_(std::move(next_boundary)) {}

  // REQUIRES: `after` is the state `e` was just applied to, successfully.
  void Observe(const Event& e, const ClusterState& after);

  // Intervals closed so far, in the order they closed (a run's nodes in placement order).
  const std::vector<UsageInterval>& closed() const { return closed_; }
  // Hands the closed intervals over (a daemon rates and drops them) and forgets them.
  std::vector<UsageInterval> TakeClosed();
  // The runs still open cut at now_ms (for a report), by job id; nothing is closed.
  std::vector<UsageInterval> OpenAt(int64_t now_ms) const;
  // closed() then OpenAt(now_ms).
  std::vector<UsageInterval> AllAt(int64_t now_ms) const;
  size_t open_runs() const { return open_.size(); }

 private:
  void Close(JobId job, int64_t end_ms);

  NextBoundary next_;
  std::map<JobId, std::vector<UsageInterval>> open_;  // per node, end_ms unset
  std::vector<UsageInterval> closed_;
};

}  // namespace allot
