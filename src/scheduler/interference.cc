#include "scheduler/interference.h"

#include <algorithm>

namespace allot {
namespace {

// A sample the state vouches for: the task runs on that node and GPU now, in that run.
bool RunsThere(const ClusterState& st, NodeId node, int32_t gpu, const InterferenceSample& s) {
  if (!s.job.valid() || s.job.value() >= st.jobs().size()) return false;
  const Job& j = st.job(s.job);
  if (!j.holds_resources() || s.task < 0 || s.task >= static_cast<int32_t>(j.placement.size())) return false;
  const TaskPlacement& p = j.placement[s.task];
  return p.node == node && (p.gpu_mask >> gpu & 1) && s.run == static_cast<int32_t>(j.ended_runs.size());
}

int64_t Util(const InterferenceSample& s) { return std::max<int64_t>(s.sm_percent.value_or(0), s.memory_percent.value_or(0)); }

// Running mean over the first `cap` values, then an exponential average (1/16) after.
void Learn(int64_t& mean, int32_t& n, int64_t value, int32_t cap) {
  if (n < cap) {
    mean = (mean * n + value) / (n + 1);
    ++n;
  } else {
    mean += (value - mean) / 16;
  }
}

const InterferenceResponse* ResponseOn(const ClusterState& st, NodeId node, int32_t gpu, const InterferenceSample& n) {
  for (const InterferenceResponse& r : st.interference()) {
    if (r.node == node && r.gpu == gpu && r.neighbour == n.job && r.neighbour_task == n.task) return &r;
  }
  return nullptr;
}

// The busiest neighbour that rose on the GPU: (1) highest utilization, (2) lowest job id, (3)
// lowest task. nullptr when none is busy and risen.
const InterferenceSample* RisenNeighbour(const InterferenceConfig& cfg, const std::vector<const InterferenceSample*>& tasks,
                                         const InterferenceSample& victim, InterferenceMemory& memory, NodeId node,
                                         int32_t gpu) {
  const InterferenceSample* best = nullptr;
  for (const InterferenceSample* n : tasks) {
    if (n->job == victim.job || !n->sm_percent.has_value()) continue;
    const InterferenceTrack& t = memory.tracks[{node.value(), gpu, n->job.value(), n->task, n->run}];
    const int64_t util = Util(*n);
    if (util < cfg.neighbour_busy_percent || util < t.util_baseline + cfg.neighbour_rise_percent) continue;
    if (best == nullptr || util > Util(*best) ||
        (util == Util(*best) && std::make_pair(n->job.value(), n->task) < std::make_pair(best->job.value(), best->task))) {
      best = n;
    }
  }
  return best;
}

// The response to `neighbour` for `victim` (a throttle needs an MPS share), as an event or a why.
std::optional<InterferenceActed> Respond(const ClusterState& st, const InterferenceConfig& cfg, const InterferenceFinding& f,
                                         const InterferenceSample& neighbour, std::string* why) {
  const TaskPlacement& p = st.job(neighbour.job).placement[neighbour.task];
  if (p.share.kind != ShareKind::kMps) {
    *why = std::string("none: the neighbour has a ") + ShareKindName(p.share.kind) +
           " share, which allotd cannot throttle (moving it is not built yet)";
    return std::nullopt;
  }
  if (st.job(neighbour.job).spec.tenant == st.job(f.victim).spec.tenant) {
    *why = "none: the neighbour is of the victim's tenant, whose tasks share one MPS server (a throttle would slow both)";
    return std::nullopt;
  }
  const int32_t own = std::max<int32_t>(1, p.share.percent);
  InterferenceResponse r;
  r.node = f.node;
  r.gpu = f.gpu;
  r.victim = f.victim;
  r.victim_task = f.victim_task;
  r.neighbour = f.neighbour;
  r.neighbour_task = f.neighbour_task;
  r.neighbour_run = neighbour.run;
  r.action = InterferenceAction::kThrottle;
  r.percent = std::max<int32_t>(1, static_cast<int32_t>(int64_t{own} * cfg.throttle_permille / 1000));
  r.neighbour_percent = own;
  r.baseline_p99_us = f.baseline_p99_us;
  r.p99_us = f.p99_us;
  r.neighbour_sm_percent = f.neighbour_sm_percent;
  r.neighbour_memory_percent = f.neighbour_memory_percent;
  *why = "throttle to " + std::to_string(r.percent) + "%";
  return InterferenceActed{r, r.Describe()};
}

// 1. Victims: each latency-sensitive report against its baseline; a bad one with a risen
//    neighbour extends the streak, and at the onset the response is planned.
bool JudgeVictims(const ClusterState& st, InterferenceMemory& memory, const InterferenceConfig& cfg, NodeId node,
                  int32_t gpu, const std::vector<const InterferenceSample*>& tasks, int64_t now, InterferenceOutcome& out) {
  bool any_bad = false;
  for (const InterferenceSample* v : tasks) {
    if (!v->p99_us) continue;  // only a reported p99 can be judged, whatever the job's kind
    InterferenceTrack& t = memory.tracks[{node.value(), gpu, v->job.value(), v->task, v->run}];
    if (t.baseline_n < cfg.baseline_samples) {
      Learn(t.baseline_p99_us, t.baseline_n, *v->p99_us, cfg.baseline_samples);
      continue;
    }
    const bool bad = *v->p99_us * 1000 >= t.baseline_p99_us * cfg.regression_permille;
    const InterferenceSample* n = bad ? RisenNeighbour(cfg, tasks, *v, memory, node, gpu) : nullptr;
    if (!bad) {
      t.bad_streak = 0;
      Learn(t.baseline_p99_us, t.baseline_n, *v->p99_us, cfg.baseline_samples);
      continue;
    }
    any_bad = true;
    t.last_bad_ms = now;  // a response in force stays while its victim is slow, whoever is to blame now
    if (n == nullptr) {  // regressed, but no neighbour to blame: not interference
      t.bad_streak = 0;
      continue;
    }
    if (++t.bad_streak < cfg.onset_samples) continue;
    InterferenceFinding f{node, gpu, v->job, v->task, n->job, n->task, t.baseline_p99_us, *v->p99_us,
                          n->sm_percent.value_or(0), n->memory_percent.value_or(0), now, ""};
    if (const InterferenceResponse* r = ResponseOn(st, node, gpu, *n)) {
      // In force: the bad sample delays its lifting. Still regressed a quiet period after it, the
      // next response (moving the neighbour) is due; it is not built, so a finding says so once.
      if (now - r->since_ms >= cfg.quiet_ms && !t.persisting_reported) {
        t.persisting_reported = true;
        f.response = "persists under the throttle to " + std::to_string(r->percent) +
                     "%; the next response, moving the neighbour, is not built";
        out.findings.push_back(std::move(f));
      }
      continue;
    }
    t.persisting_reported = false;
    auto acted = Respond(st, cfg, f, *n, &f.response);
    if (acted) out.events.emplace_back(std::move(*acted));
    if (acted || t.bad_streak == cfg.onset_samples) out.findings.push_back(std::move(f));  // a finding with no response once
  }
  return any_bad;
}

// 2. Lifts: a response whose victim had no bad sample for quiet_ms (counted from the response
//    when there was none since), or whose victim or neighbour no longer runs there.
void LiftQuiet(const ClusterState& st, InterferenceMemory& memory, const InterferenceConfig& cfg, NodeId node, int32_t gpu,
               int64_t now, InterferenceOutcome& out) {
  for (const InterferenceResponse& r : st.interference()) {
    if (r.node != node || r.gpu != gpu) continue;
    const Job& v = st.job(r.victim);
    InterferenceSample ns{r.neighbour, r.neighbour_task, r.neighbour_run, {}, {}, {}};
    InterferenceSample vs{r.victim, r.victim_task, static_cast<int32_t>(v.ended_runs.size()), {}, {}, {}};
    std::string why;
    if (!RunsThere(st, node, gpu, ns)) {
      why = "the neighbour no longer runs on this GPU";
    } else if (!RunsThere(st, node, gpu, vs)) {
      why = "the victim no longer runs on this GPU";
    } else {
      auto it = memory.tracks.find({node.value(), gpu, r.victim.value(), r.victim_task, vs.run});
      const int64_t last_bad = std::max(r.since_ms, it == memory.tracks.end() ? r.since_ms : it->second.last_bad_ms);
      if (now - last_bad < cfg.quiet_ms) continue;
      why = "quiet for " + std::to_string((now - last_bad) / 1000) + " s: the victim's p99 has stayed under " +
            std::to_string(cfg.regression_permille / 1000) + "." + std::to_string(cfg.regression_permille % 1000 / 100) +
            "x its baseline";
    }
    out.events.emplace_back(InterferenceCleared{node, gpu, r.neighbour, r.neighbour_task, why});
  }
}

}  // namespace

InterferenceOutcome DetectInterference(const ClusterState& st, InterferenceMemory& memory, const InterferenceConfig& cfg,
                                       NodeId node, const std::vector<GpuSamples>& gpus, int64_t now) {
  InterferenceOutcome out;
  if (!node.valid() || node.value() >= st.fleet().size()) return out;
  const Sharing pool = st.fleet().node(node).pool.sharing;
  if (pool != Sharing::kMps && pool != Sharing::kTimeslice) return out;
  std::vector<const GpuSamples*> order;
  for (const GpuSamples& g : gpus) order.push_back(&g);
  std::sort(order.begin(), order.end(), [](const GpuSamples* a, const GpuSamples* b) { return a->gpu < b->gpu; });
  for (const GpuSamples* g : order) {
    if (g->gpu < 0 || g->gpu >= st.fleet().node(node).gpu_count) continue;
    std::vector<const InterferenceSample*> tasks;
    for (const InterferenceSample& s : g->tasks) {
      if (RunsThere(st, node, g->gpu, s)) tasks.push_back(&s);
    }
    for (const InterferenceSample* s : tasks) memory.tracks[{node.value(), g->gpu, s->job.value(), s->task, s->run}].last_seen_ms = now;
    const bool any_bad = JudgeVictims(st, memory, cfg, node, g->gpu, tasks, now, out);
    // 3. Neighbours' own baselines learn only while no victim on the GPU is bad.
    if (!any_bad) {
      for (const InterferenceSample* s : tasks) {
        if (!s->sm_percent && !s->memory_percent) continue;
        InterferenceTrack& t = memory.tracks[{node.value(), g->gpu, s->job.value(), s->task, s->run}];
        Learn(t.util_baseline, t.util_n, Util(*s), cfg.baseline_samples);
      }
    }
  }
  for (int32_t gpu = 0; gpu < st.fleet().node(node).gpu_count; ++gpu) LiftQuiet(st, memory, cfg, node, gpu, now, out);
  // 4. Forget task runs of this node not sampled for forget_ms.
  for (auto it = memory.tracks.lower_bound({node.value(), 0, 0, 0, 0}); it != memory.tracks.end() && std::get<0>(it->first) == node.value();) {
    it = now - it->second.last_seen_ms > cfg.forget_ms ? memory.tracks.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace allot
