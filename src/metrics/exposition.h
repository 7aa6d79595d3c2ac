// The Prometheus text exposition format, version 0.0.4: every family with # HELP and # TYPE,
// then its samples; histograms as cumulative _bucket{le} series ending with +Inf, _sum, _count.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace allot {

inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value with \, " and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view v);
// A HELP text with \ and newline escaped.
std::string EscapeHelp(std::string_view v);
// A sample value: integers without a fraction, "+Inf", "-Inf", "NaN", else shortest round-trip.
std::string FormatSampleValue(double v);

class Exposition {
 public:
  // Starts a family: its # HELP and # TYPE lines. `type`: gauge, counter, histogram.
  // REQUIRES: each family started once, and its samples written before the next family starts.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  // One histogram series of the current family: `labels` plus le for each bucket.
  void Histogram(std::string_view name, const Labels& labels, const HistogramData& h);
  // A family of histograms: its header and every series in `vec`.
  void HistogramFamily(std::string_view name, std::string_view help, const HistogramVec& vec);
  const std::string& text() const { return out_; }

 private:
  void Line(std::string_view name, const Labels& labels, std::string_view value);
  std::string out_;
};

}  // namespace allot
