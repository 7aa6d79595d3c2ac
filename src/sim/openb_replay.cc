#include "sim/openb_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "fleet/gpu_catalog.h"

namespace allot {
namespace {

// openb's model codes → the catalogue's names (fleet/gpu_catalog.cc).
std::string CatalogModel(const std::string& openb) {
  static const std::map<std::string, std::string> kNames = {
      {"P100", "P100-16GB"}, {"T4", "T4-16GB"}, {"V100M16", "V100-32GB"}, {"V100M32", "V100-32GB"},
      {"A10", "A10-24GB"},   {"G2", "G2"},      {"G3", "G3"}};
  auto it = kNames.find(openb);
  if (it != kNames.end()) return it->second;
  return FindGpuModel(openb) ? openb : "";
}

constexpr int64_t kSecond = 1000;

}  // namespace

Result<Scenario> OpenbReplayScenario(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods,
                                     const OpenbReplayOptions& options, OpenbReplayInput& input) {
  input = {};
  input.pods = static_cast<int64_t>(pods.size());
  if (nodes.empty()) return Err(InvalidArgument("openb replay: the node list is empty; expected at least one node"));
  // 1. The pool's model: the most common among the nodes' GPUs (ties: the first by name).
  std::map<std::string, int64_t> gpus_by_model;
  for (const OpenbNode& n : nodes) gpus_by_model[n.model] += n.gpus;
  int64_t most = -1;
  for (const auto& [model, count] : gpus_by_model) {
    if (!model.empty() && count > most) {
      most = count;
      input.model = model;
    }
  }
  const std::string model = CatalogModel(input.model);
  if (!input.model.empty() && model.empty()) {
    return Err(InvalidArgument("openb replay: GPU model '" + input.model + "' is not in the catalogue; expected P100, T4, V100M16, "
                               "V100M32, A10, G2, G3 or a catalogue name"));
  }
  input.model = model;
  // 2. The jobs, and the share pods' part of the GPU demand.
  int64_t end_s = 0;
  for (const OpenbPod& p : pods) end_s = std::max({end_s, p.creation_s, p.deletion_s});
  Scenario sc;
  sc.file = "openb replay";
  int64_t share_milli = 0, all_milli = 0, cpu_only = 0;
  for (const OpenbPod& p : pods) {
    if (!p.gpu_spec.empty()) {
      return Err(InvalidArgument("openb replay: pod " + p.name + ": gpu_spec '" + p.gpu_spec +
                                 "': the replay takes every GPU as one pool; expected no gpu_spec"));
    }
    const int32_t milli = std::min<int32_t>(p.gpu_milli, 1000);  // above 1000 clamped, as in the fill experiment
    if (p.num_gpu > 1 && milli < 1000) {
      return Err(InvalidArgument("openb replay: pod " + p.name + ": num_gpu " + std::to_string(p.num_gpu) + " with gpu_milli " +
                                 std::to_string(p.gpu_milli) + "; expected gpu_milli 1000 when a pod asks several GPUs"));
    }
    if (p.creation_s < 0 || (p.deletion_s >= 0 && p.deletion_s <= p.creation_s)) {
      ++input.dropped;
      continue;
    }
    if (p.deletion_s < 0) ++input.until_trace_end;
    ScenarioJob j;
    j.tenant = "openb";
    j.spec.name = p.name;
    j.spec.submit_ms = p.creation_s * kSecond;
    j.spec.duration_ms = std::max<int64_t>((p.deletion_s < 0 ? end_s : p.deletion_s) - p.creation_s, 1) * kSecond;
    TaskGroup g;
    g.cpu = p.cpu;
    g.memory = p.memory;
    if (p.num_gpu > 0 && milli > 0) {
      g.gpu = milli < 1000 ? milli * (kGpuUnit / 1000) : int64_t{p.num_gpu} * kGpuUnit;
      (milli < 1000 ? share_milli : all_milli) += int64_t{p.num_gpu} * milli;
    }
    if (g.gpu == 0) ++cpu_only;
    j.spec.groups.push_back(g);
    j.mig.emplace_back();
    sc.jobs.push_back(std::move(j));
  }
  all_milli += share_milli;
  // 3. The fleet: every n-th node (by name) an MPS pool, n from the share pods' part of the GPU
  //    demand, leaving exclusive nodes at least in the CPU-only pods' part of the pods (they
  //    run on exclusive nodes only, as whole GPUs do).
  double f = options.mps_fraction;
  if (f < 0) {
    f = all_milli == 0 ? 0 : static_cast<double>(share_milli) / static_cast<double>(all_milli);
    if (!sc.jobs.empty()) f = std::min(f, 1.0 - static_cast<double>(cpu_only) / static_cast<double>(sc.jobs.size()));
  }
  f = std::clamp(f, 0.0, 1.0);
  std::vector<const OpenbNode*> sorted;
  for (const OpenbNode& n : nodes) sorted.push_back(&n);
  std::sort(sorted.begin(), sorted.end(), [](const OpenbNode* a, const OpenbNode* b) { return a->name < b->name; });
  for (size_t i = 0; i < sorted.size(); ++i) {
    const OpenbNode& n = *sorted[i];
    NodeSpec s;
    s.name = n.name;
    s.cpu = n.cpu;
    s.memory = n.memory;
    if (n.gpus > 0) {
      s.gpu_model = model;
      s.gpu_count = n.gpus;
      // Node i is a pool when floor((i + 1) f) passes floor(i f): the pools spread evenly.
      if (std::floor((i + 1) * f) > std::floor(i * f)) {
        s.sharing = Sharing::kMps;
        ++input.mps_nodes;
      }
    }
    sc.nodes.push_back(std::move(s));
  }
  input.nodes = static_cast<int>(sc.nodes.size());
  ScenarioTenant t;
  t.path = "openb";
  sc.tenants.push_back(std::move(t));
  if (!options.share_policy.empty()) sc.scheduler.share_policy = options.share_policy;
  return sc;
}

void OpenbReplayMeter::Observe(const Event& e, const ClusterState& state) {
  auto release = [&](JobId id) {
    if (id.value() < held_.size()) {
      allocated_ -= held_[id.value()];
      held_[id.value()] = 0;
    }
  };
  if (const auto* p = std::get_if<JobPlaced>(&e.body)) {
    if (held_.size() <= p->job.value()) held_.resize(p->job.value() + 1, 0);
    held_[p->job.value()] = state.job(p->job).demand.gpu;
    allocated_ += held_[p->job.value()];
  } else if (const auto* f = std::get_if<JobFinished>(&e.body)) {
    release(f->job);
  } else if (const auto* s = std::get_if<JobStopped>(&e.body)) {
    release(s->job);
  } else if (const auto* x = std::get_if<JobFailed>(&e.body)) {
    release(x->job);
  } else if (const auto* c = std::get_if<JobCancelled>(&e.body)) {
    release(c->job);
  }
  const int64_t pending = static_cast<int64_t>(state.pending().size());
  most_pending_ = std::max(most_pending_, pending);
  if (allocated_ > peak_) {
    peak_ = allocated_;
    peak_at_ms_ = e.time_ms;
    pending_at_peak_ = pending;
  }
}

OpenbReplayMeter::Figures OpenbReplayMeter::Summarize(const SimRun& run) const {
  Figures f;
  std::vector<int64_t> waits;
  const ClusterState& st = run.state;
  for (const Job& j : st.jobs()) {
    ++f.jobs;
    if (j.state == JobState::kRejected) ++f.rejected;
    if (j.first_started_ms < 0) {
      if (j.state != JobState::kRejected) ++f.never_placed;
      continue;
    }
    ++f.placed;
    waits.push_back((j.first_started_ms - j.spec.submit_ms) / kSecond);
  }
  std::sort(waits.begin(), waits.end());
  auto rank = [&](int pct) { return waits.empty() ? 0 : waits[(waits.size() * pct + 99) / 100 - 1]; };
  f.wait_p50_s = rank(50);
  f.wait_p95_s = rank(95);
  f.wait_max_s = waits.empty() ? 0 : waits.back();
  const SimResult& r = run.result;
  const double capacity = static_cast<double>(r.fleet_gpus) * kGpuUnit;
  if (capacity > 0 && r.end_ms > 0) f.allocation = static_cast<double>(r.allocated_unit_ms) / (capacity * static_cast<double>(r.end_ms));
  if (capacity > 0) f.peak_allocation = static_cast<double>(peak_) / capacity;
  f.peak_at_s = peak_at_ms_ / kSecond;
  f.pending_at_peak = pending_at_peak_;
  f.most_pending = most_pending_;
  return f;
}

namespace {

// A moment of the trace as a person reads it: "day 144, 22:46:54" after the trace's start.
std::string TraceTime(int64_t s) {
  char out[64];
  std::snprintf(out, sizeof out, "day %lld, %02lld:%02lld:%02lld", static_cast<long long>(s / 86400), static_cast<long long>(s / 3600 % 24),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return out;
}

}  // namespace

void PrintOpenbReplay(const OpenbReplayInput& in, const OpenbReplayMeter::Figures& f, int64_t fleet_gpus, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line,
                "openb replay: %lld pods (%lld dropped, %lld without a deletion time); %d nodes, %lld GPUs of %s, %d of them MPS pools\n",
                static_cast<long long>(in.pods), static_cast<long long>(in.dropped), static_cast<long long>(in.until_trace_end),
                in.nodes, static_cast<long long>(fleet_gpus), in.model.c_str(), in.mps_nodes);
  out << line;
  std::snprintf(line, sizeof line, "  placed %lld of %lld; never placed %lld; rejected %lld\n", static_cast<long long>(f.placed),
                static_cast<long long>(f.jobs), static_cast<long long>(f.never_placed), static_cast<long long>(f.rejected));
  out << line;
  std::snprintf(line, sizeof line, "  wait (first start - creation): p50 %llds, p95 %llds, max %llds; most waiting at once %lld\n",
                static_cast<long long>(f.wait_p50_s), static_cast<long long>(f.wait_p95_s), static_cast<long long>(f.wait_max_s),
                static_cast<long long>(f.most_pending));
  out << line;
  std::snprintf(line, sizeof line, "  GPU allocation over the run %.2f%%; peak %.2f%% at %s (%lld waiting then)\n", f.allocation * 100,
                f.peak_allocation * 100, TraceTime(f.peak_at_s).c_str(), static_cast<long long>(f.pending_at_peak));
  out << line;
}

}  // namespace allot
