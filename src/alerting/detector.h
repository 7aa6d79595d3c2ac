// The anomaly detector (issue 17): observations in, alerts out. Pure and deterministic: the time
// comes with each observation, nothing is read; the daemon (daemon/alert_monitor.h) feeds it
// and delivers what it returns. It remembers only what its windows need, bounded, and says each
// anomaly once:
//   out-of-hours usage  once per tenant per out-of-hours stretch (a weekend is one stretch);
//   failed logins       once per source address per window, re-armed after it;
//   crash loop          once per (tenant, job family) per window, re-armed after it;
//   GPU ECC             a corrected rise once per GPU per window (the rise counted afresh after
//                       it); every uncorrected rise, at once.
// Not thread-safe: the caller serialises.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "alerting/alert.h"
#include "metering/business_hours.h"
#include "metering/time_zone.h"

namespace allot {

// A tenant's hold on GPUs at a moment, with its business hours and their zone, loaded.
struct TenantUsageSample {
  std::string tenant;      // path
  BusinessHours hours;
  const TimeZone* zone = nullptr;  // hours.zone; REQUIRES: not null
  int64_t gpu_units = 0;   // GPUs held by the jobs of the tenant's subtree, in GPU units (kGpuUnit)
};

// A job run that ended failed (non-zero exit, a signal, out of memory, past its time limit).
struct JobFailure {
  std::string tenant;  // path
  std::string job;     // the job's name
  int64_t job_id = 0;
  std::string reason;  // "task 0 on n1: exited with code 3"
};

// One GPU's ECC counters as its agent last reported them (volatile counts since the driver
// loaded; a count lower than before means they were reset, which starts afresh).
struct GpuEccSample {
  std::string node;
  int gpu = 0;  // index on the node
  std::string uuid;
  std::string model;
  std::optional<int64_t> corrected;
  std::optional<int64_t> uncorrected;
};

// The family a job's name belongs to, for crash loops: a tenant's job names are unique, so a
// job submitted again after failing carries a counter ("train-7", "train_8", "train.9"); the
// name without its last such numeric part ("train"). A name with none is its own family.
std::string JobFamily(std::string_view name);

class AnomalyDetector {
 public:
  explicit AnomalyDetector(AlertThresholds thresholds = {});

  std::optional<Alert> TenantUsage(const TenantUsageSample& sample, int64_t now_ms);
  // A request from `source` (an address) refused for its credentials.
  std::optional<Alert> FailedLogin(const std::string& source, int64_t now_ms);
  std::optional<Alert> JobFailed(const JobFailure& failure, int64_t now_ms);
  std::vector<Alert> GpuEcc(const GpuEccSample& sample, int64_t now_ms);
  // Whether another sample of the GPU with the counters it last gave would change nothing and
  // fire nothing: it was heard from and no corrected rise is in its window. Its agent's next
  // heartbeats with the same counters can then be skipped (50,000 GPUs a second at 6,250 nodes).
  bool GpuEccSettled(const std::string& node, int gpu) const;

  const AlertThresholds& thresholds() const { return thresholds_; }
  // Sources (and job families) remembered at most; past it the stalest is forgotten, so a flood
  // of addresses cannot grow memory without bound. GPUs are not capped: agents' nodes are known.
  static constexpr size_t kMaxKeys = 4096;

 private:
  // The last `needed` times something happened, and until when the key stays quiet after firing.
  struct Burst {
    std::deque<int64_t> times;
    int64_t quiet_until_ms = 0;
  };
  // Records one occurrence; true when `needed` fell within `window_ms` and the key is not quiet
  // (it then goes quiet for the window).
  static bool Count(Burst& b, int needed, int64_t window_ms, int64_t now_ms);
  static void Bound(std::map<std::string, Burst>& bursts, int64_t now_ms);

  struct EccTrack {
    std::deque<std::pair<int64_t, int64_t>> corrected;  // (time, count) where the count changed
    std::optional<int64_t> uncorrected;
    int64_t quiet_until_ms = 0;
  };

  AlertThresholds thresholds_;
  std::map<std::string, int64_t> stretch_alerted_;  // tenant → the out-of-hours stretch alerted
  std::map<std::string, Burst> logins_;             // by source
  std::map<std::string, Burst> failures_;           // by tenant + "\n" + job family
  std::map<std::string, EccTrack> ecc_;             // by node + "/" + GPU index: one per GPU heard from
};

}  // namespace allot
