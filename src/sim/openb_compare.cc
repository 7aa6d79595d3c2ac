#include "sim/openb_compare.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace allot {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  auto num = [&](std::string_view s) -> Result<uint64_t> {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
      return Err(InvalidArgument("--seeds: '" + text + "'; expected FROM-TO or a comma list of integers"));
    }
    return v;
  };
  std::vector<uint64_t> out;
  size_t dash = text.find('-');
  if (dash != std::string::npos) {
    auto a = num(std::string_view(text).substr(0, dash));
    auto b = num(std::string_view(text).substr(dash + 1));
    if (!a) return Err(a.error());
    if (!b) return Err(b.error());
    if (*b < *a || *b - *a > 10000) return Err(InvalidArgument("--seeds: '" + text + "'; expected FROM ≤ TO, at most 10,000 seeds"));
    for (uint64_t s = *a; s <= *b; ++s) out.push_back(s);
    return out;
  }
  for (const std::string& part : Split(text, ',')) {
    auto v = num(part);
    if (!v) return Err(v.error());
    out.push_back(*v);
  }
  return out;
}

Result<OpenbCompare> RunOpenbCompare(const OpenbCompareOptions& o) {
  auto nodes = ReadOpenbNodes(o.dir + "/openb_node_list_gpu_node.csv");
  if (!nodes) return Err(nodes.error());
  auto pods = ReadOpenbPods(o.dir + "/openb_pod_list_" + o.workload + ".csv");
  if (!pods) return Err(pods.error());
  OpenbCompare c;
  c.workload = o.workload;
  for (const std::string& policy : o.policies) {
    std::vector<double> mean;
    for (uint64_t seed : o.seeds) {
      auto r = RunOpenb(*nodes, *pods, {.policy = policy, .seed = seed, .inflate = o.inflate});
      if (!r) return Err(r.error());
      c.total_gpus = r->total_gpus;
      if (mean.empty()) mean.assign(r->curve.size(), 0);
      for (size_t x = 0; x < mean.size(); ++x) mean[x] += r->curve[x] / static_cast<double>(o.seeds.size());
      c.runs.push_back(std::move(*r));
    }
    c.means.push_back({policy, std::move(mean)});
  }
  return c;
}

void PrintOpenbTable(const OpenbCompare& c, std::ostream& out) {
  out << "openb " << c.workload << ": " << c.total_gpus << " GPUs; mean over " << (c.means.empty() ? 0 : c.runs.size() / c.means.size())
      << " seed(s)\n";
  out << "policy            alloc@100%  alloc@130%  unallocated GPUs@130%\n";
  for (const auto& [policy, curve] : c.means) {
    double a100 = curve.size() > 100 ? curve[100] : 0, a130 = curve.size() > 130 ? curve[130] : curve.back();
    char line[160];
    std::snprintf(line, sizeof line, "%-16s  %9.2f%%  %9.2f%%  %10.0f\n", policy.c_str(), a100, a130,
                  (1 - a130 / 100) * static_cast<double>(c.total_gpus));
    out << line;
  }
}

void WriteOpenbJson(const OpenbCompare& c, std::ostream& out) {
  nlohmann::ordered_json j;
  j["workload"] = c.workload;
  j["total_gpus"] = c.total_gpus;
  j["results"] = nlohmann::json::array();
  for (const OpenbResult& r : c.runs) {
    j["results"].push_back({{"policy", r.policy}, {"seed", r.seed}, {"alloc_at_100", r.AllocAt(100)},
                            {"alloc_at_130", r.AllocAt(130)}, {"pods", r.pods}, {"placed", r.placed}});
  }
  j["means"] = nlohmann::json::array();
  for (const auto& [policy, curve] : c.means) {
    j["means"].push_back({{"policy", policy},
                          {"alloc_at_100", curve.size() > 100 ? curve[100] : 0},
                          {"alloc_at_130", curve.size() > 130 ? curve[130] : 0}});
  }
  out << j.dump(1) << "\n";
}

void WriteOpenbCsv(const OpenbCompare& c, std::ostream& out) {
  out << "arrived_percent";
  for (const auto& [policy, curve] : c.means) out << "," << policy;
  out << "\n";
  size_t n = c.means.empty() ? 0 : c.means.front().second.size();
  for (size_t x = 0; x < n; ++x) {
    out << x;
    for (const auto& [policy, curve] : c.means) out << "," << Fixed(curve[x], 3);
    out << "\n";
  }
}

void WriteOpenbSvg(const OpenbCompare& c, std::ostream& out) {
  // Allocation (y, 70–100%) over arrived demand (x, 70–max%): where the policies part ways.
  const double w = 760, h = 480, left = 60, right = 170, top = 40, bottom = 50;
  size_t n = c.means.empty() ? 0 : c.means.front().second.size();
  double x0 = 70, x1 = n > 0 ? static_cast<double>(n - 1) : 130, y0 = 70, y1 = 100;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (w - left - right); };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * (h - top - bottom); };
  static const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">openb " << c.workload
      << ": GPU allocation vs arrived demand (mean over seeds)</text>\n";
  for (int y = 70; y <= 100; y += 5) {
    out << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << py(y) << "\" y2=\"" << py(y)
        << "\" stroke=\"#ddd\"/><text x=\"" << left - 8 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << y << "%</text>\n";
  }
  for (int x = 70; x <= static_cast<int>(x1); x += 10) {
    out << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << top << "\" y2=\"" << h - bottom
        << "\" stroke=\"#eee\"/><text x=\"" << px(x) << "\" y=\"" << h - bottom + 18 << "\" text-anchor=\"middle\">" << x << "%</text>\n";
  }
  out << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 12 << "\" text-anchor=\"middle\">arrived GPU demand (% of capacity)</text>\n";
  for (size_t k = 0; k < c.means.size(); ++k) {
    const auto& [policy, curve] = c.means[k];
    const char* colour = kColours[k % 7];
    out << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << colour << "\" points=\"";
    for (size_t x = static_cast<size_t>(x0); x < curve.size(); ++x) {
      out << Fixed(px(static_cast<double>(x)), 1) << "," << Fixed(py(std::max(y0, curve[x])), 1) << " ";
    }
    out << "\"/>\n";
    double ly = top + 20 + 20 * static_cast<double>(k);
    out << "<line x1=\"" << w - right + 12 << "\" x2=\"" << w - right + 34 << "\" y1=\"" << ly << "\" y2=\"" << ly
        << "\" stroke-width=\"3\" stroke=\"" << colour << "\"/><text x=\"" << w - right + 40 << "\" y=\"" << ly + 4 << "\">"
        << policy << " " << Fixed(curve.back(), 2) << "%</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace allot
