// What the dashboard charts over time: the fleet's GPUs per model and each tenant's GPUs and
// queue, sampled every interval (allotd --history-interval, 60 s by default) into a bounded ring
// in memory. A restart starts it empty: it is for looking at the last hours, not for billing
// (that is the journal's and the ledger's) nor for long-term trends (that is Prometheus's).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "state/cluster_state.h"

namespace allot {

struct HistorySample {
  struct Model {
    std::string model;       // "H100-80GB"
    int32_t allocated = 0;   // whole GPUs held by jobs (any node condition)
    int32_t idle = 0;        // free GPUs on ready nodes
  };
  struct TenantRow {
    TenantId id;             // to filter by the reader's scope at read time
    std::string path;        // as it was when sampled
    int64_t gpu_units = 0;   // the subtree's GPUs in use, all models (GPU units, core/resources.h)
    int32_t pending = 0;     // the subtree's pending jobs
    int64_t oldest_wait_ms = 0;  // the subtree's oldest pending job's wait since it was queued; 0: none
  };
  int64_t time_ms = 0;
  std::vector<Model> fleet;         // by model name
  std::vector<TenantRow> tenants;   // tree order, live tenants only
};

// The sample of `st` at `now_ms`.
HistorySample SampleHistory(const ClusterState& st, int64_t now_ms);

// The ring: thread-safe; the sampler adds, readers copy.
class History {
 public:
  // The newest samples covering `span_ms` at `interval_ms`, at most kMaxSamples of them.
  static constexpr size_t kMaxSamples = 1440;
  static constexpr int64_t kSpanMs = 24 * 3600 * 1000;
  explicit History(int64_t interval_ms);

  void Add(HistorySample s);
  // The samples taken at or after `since_ms`, oldest first.
  std::vector<HistorySample> Since(int64_t since_ms) const;
  int64_t interval_ms() const { return interval_ms_; }
  size_t capacity() const { return capacity_; }

 private:
  const int64_t interval_ms_;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<HistorySample> samples_;  // GUARDED_BY(mu_)
};

}  // namespace allot
