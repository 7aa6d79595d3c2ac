// Fixed-bucket histograms for allotd's own durations (Prometheus "histogram" type), kept in
// memory: counts per bucket, a sum and a count, guarded by one mutex per family. Label sets are
// bounded by the caller (route patterns, admission classes), never job names.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace allot {

// Bucket upper bounds in seconds, for request and pass durations: 0.5 ms to 10 s.
const std::vector<double>& DurationBuckets();

// One histogram's values. `buckets[i]` counts observations <= bounds[i] and > bounds[i-1]
// (not cumulative: the exposition writer sums them); `count` includes those above the last bound.
struct HistogramData {
  std::vector<double> bounds;
  std::vector<uint64_t> buckets;
  double sum = 0;
  uint64_t count = 0;
  explicit HistogramData(std::vector<double> b = {}) : bounds(std::move(b)), buckets(bounds.size(), 0) {}
  void Observe(double v);
};

// A family of histograms over label values (in the family's label order). Thread-safe.
class HistogramVec {
 public:
  // REQUIRES: `bounds` ascending.
  HistogramVec(std::vector<std::string> labels, std::vector<double> bounds)
      : labels_(std::move(labels)), bounds_(std::move(bounds)) {}
  // REQUIRES: values.size() == labels().size().
  void Observe(const std::vector<std::string>& values, double v);
  // Every label set observed so far, in label order.
  std::map<std::vector<std::string>, HistogramData> Snapshot() const;
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<std::string> labels_;
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, HistogramData> series_;
};

// A family of monotonic counters over label values. Thread-safe.
class CounterVec {
 public:
  void Add(const std::vector<std::string>& values, uint64_t n = 1);
  std::map<std::vector<std::string>, uint64_t> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, uint64_t> series_;
};

// What allotd measures about itself (durations with a steady clock in the daemon and HTTP layers;
// the scheduling core reads no clock). Shared by the controller and the API server.
struct DaemonMetrics {
  HistogramVec scheduler_pass{{}, DurationBuckets()};
  HistogramVec journal_commit{{}, DurationBuckets()};
  HistogramVec api_request{{"route", "code"}, DurationBuckets()};
  CounterVec preemptions;  // {reason}
};

}  // namespace allot
