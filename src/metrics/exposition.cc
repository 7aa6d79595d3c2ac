#include "metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace allot {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

void Exposition::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += EscapeHelp(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void Exposition::Line(std::string_view name, const Labels& labels, std::string_view value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first;
      out_ += "=\"";
      out_ += EscapeLabelValue(labels[i].second);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void Exposition::Sample(std::string_view name, const Labels& labels, double value) {
  Line(name, labels, FormatSampleValue(value));
}

void Exposition::Histogram(std::string_view name, const Labels& labels, const HistogramData& h) {
  std::string bucket = std::string(name) + "_bucket";
  Labels with_le = labels;
  with_le.emplace_back("le", "");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.buckets[i];
    with_le.back().second = FormatSampleValue(h.bounds[i]);
    Line(bucket, with_le, std::to_string(cumulative));
  }
  with_le.back().second = "+Inf";
  Line(bucket, with_le, std::to_string(h.count));
  Line(std::string(name) + "_sum", labels, FormatSampleValue(h.sum));
  Line(std::string(name) + "_count", labels, std::to_string(h.count));
}

void Exposition::HistogramFamily(std::string_view name, std::string_view help, const HistogramVec& vec) {
  Family(name, "histogram", help);
  for (const auto& [values, h] : vec.Snapshot()) {
    Labels labels;
    for (size_t i = 0; i < values.size() && i < vec.labels().size(); ++i) labels.emplace_back(vec.labels()[i], values[i]);
    Histogram(name, labels, h);
  }
}

}  // namespace allot
