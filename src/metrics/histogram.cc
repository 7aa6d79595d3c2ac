#include "metrics/histogram.h"

#include <algorithm>

namespace allot {

const std::vector<double>& DurationBuckets() {
  static const std::vector<double> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return kBuckets;
}

void HistogramData::Observe(double v) {
  // The first bound >= v: Prometheus buckets are "less than or equal".
  auto it = std::lower_bound(bounds.begin(), bounds.end(), v);
  if (it != bounds.end()) ++buckets[static_cast<size_t>(it - bounds.begin())];
  sum += v;
  ++count;
}

void HistogramVec::Observe(const std::vector<std::string>& values, double v) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = series_.try_emplace(values, bounds_);
  it->second.Observe(v);
}

std::map<std::vector<std::string>, HistogramData> HistogramVec::Snapshot() const {
  std::lock_guard lock(mu_);
  return series_;
}

void CounterVec::Add(const std::vector<std::string>& values, uint64_t n) {
  std::lock_guard lock(mu_);
  series_[values] += n;
}

std::map<std::vector<std::string>, uint64_t> CounterVec::Snapshot() const {
  std::lock_guard lock(mu_);
  return series_;
}

}  // namespace allot
