#include "scheduler/interference.h"

#include <algorithm>

#include "core/quantity.h"
#include "fleet/gpu_catalog.h"
#include "fleet/mig.h"
#include "state/share_request.h"

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

// The response of kind `action` in force on that GPU naming task `s` as its neighbour (or, with
// `as_victim`, as its victim); nullptr if none.
const InterferenceResponse* InForce(const ClusterState& st, NodeId node, int32_t gpu, InterferenceAction action,
                                    const InterferenceSample& s, bool as_victim = false) {
  for (const InterferenceResponse& r : st.interference()) {
    const bool names = as_victim ? r.victim == s.job && r.victim_task == s.task : r.neighbour == s.job && r.neighbour_task == s.task;
    if (r.node == node && r.gpu == gpu && r.action == action && names) return &r;
  }
  return nullptr;
}

// "a 1g.10gb MIG instance", "a whole H100-80GB GPU"
std::string DescribeHeld(const std::string& model, const TaskGroup& h) {
  const MigGeometry* geo = FindMigGeometry(model);
  if (h.share == ShareKind::kMig && geo) return "a " + std::string(geo->profiles[h.mig_profile].name) + " MIG instance";
  return "a whole " + model + " GPU";
}

// Why the neighbour cannot be moved at its next checkpoint, or empty.
std::string WhyNotMovable(const ClusterState& st, const InterferenceSample& n) {
  const Job& j = st.job(n.job);
  if (j.state != JobState::kRunning) return "it is already being stopped";
  if (j.spec.checkpoint_interval_ms <= 0) return "it does not checkpoint, so moving it would lose its work";
  for (const InterferenceResponse& r : st.interference()) {
    if (r.action == InterferenceAction::kMove && r.neighbour == n.job && r.neighbour_task == n.task) {
      return "a move of it is already in force";
    }
  }
  return "";
}

// The task group of task `task`.
int32_t GroupOf(const JobSpec& spec, int32_t task) {
  for (int32_t g = 0; g < static_cast<int32_t>(spec.groups.size()); ++g) {
    if (task < spec.groups[g].count) return g;
    task -= spec.groups[g].count;
  }
  return -1;
}

// The victim's task group hardened: the smallest MIG instance covering its share's compute and
// memory where the fleet has a MIG pool of its model the tenant may use, else one whole GPU of an
// exclusive pool; nullopt with *why when neither.
std::optional<TaskGroup> Hardened(const ClusterState& st, const Job& v, int32_t group, std::string* why) {
  if (!v.own_groups.empty() || st.HardeningOf(v.id)) {
    *why = "the victim is already hardened";
    return std::nullopt;
  }
  if (v.state != JobState::kRunning) {
    *why = "the victim is already being stopped";
    return std::nullopt;
  }
  const TaskGroup& g = v.spec.groups[group];
  const ResourceId res = v.spec.gpu_resource;
  const std::string model = st.resource_names().Name(res).substr(4);
  const uint32_t pools = st.fleet().pool_kinds(res) & st.AllowedPools(v.spec.tenant);
  auto has = [&](Sharing s) { return (pools >> static_cast<int>(s)) & 1; };
  const GpuModelInfo* info = FindGpuModel(model);
  const MigGeometry* geo = FindMigGeometry(model);
  if (has(Sharing::kMig) && geo && info) {
    // Compute: the share's fraction; memory: its MPS limit when it has one.
    int64_t units = g.gpu;
    if (g.share == ShareKind::kMps && g.gpu_memory > 0) {
      units = std::max(units, (g.gpu_memory * kGpuUnit + info->memory_mib - 1) / info->memory_mib);
    }
    int profile = CoveringMigProfile(*geo, std::min<int64_t>(units, kGpuUnit), info->memory_mib);
    if (profile >= 0) {
      TaskGroup h{g.count, int64_t{geo->profiles[profile].compute_slices} * kGpuUnit / geo->compute_slices, g.cpu, g.memory};
      h.share = ShareKind::kMig;
      h.mig_profile = static_cast<uint8_t>(profile);
      return h;
    }
  }
  if (has(Sharing::kExclusive)) return TaskGroup{g.count, kGpuUnit, g.cpu, g.memory};
  *why = "no MIG pool nor whole " + model + " GPUs the victim's tenant may use";
  return std::nullopt;
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

InterferenceResponse ResponseOf(const InterferenceFinding& f, const InterferenceSample& neighbour, InterferenceAction action) {
  InterferenceResponse r;
  r.node = f.node;
  r.gpu = f.gpu;
  r.victim = f.victim;
  r.victim_task = f.victim_task;
  r.neighbour = f.neighbour;
  r.neighbour_task = f.neighbour_task;
  r.neighbour_run = neighbour.run;
  r.action = action;
  r.baseline_p99_us = f.baseline_p99_us;
  r.p99_us = f.p99_us;
  r.neighbour_sm_percent = f.neighbour_sm_percent;
  r.neighbour_memory_percent = f.neighbour_memory_percent;
  return r;
}

// Why the neighbour cannot be throttled, or empty.
std::string WhyNotThrottled(const ClusterState& st, const InterferenceFinding& f, const InterferenceSample& neighbour) {
  const TaskPlacement& p = st.job(neighbour.job).placement[neighbour.task];
  if (p.share.kind != ShareKind::kMps) {
    return std::string("the neighbour has a ") + ShareKindName(p.share.kind) + " share, which has no throttle";
  }
  if (st.job(neighbour.job).spec.tenant == st.job(f.victim).spec.tenant) {
    return "the neighbour is of the victim's tenant, whose tasks share one MPS server (a throttle would slow both)";
  }
  return "";
}

// The next response after `tried` (the cheaper ones that cannot be used or did not help, said
// as "…; "), in order of cost: move the neighbour at its next checkpoint, else harden the
// victim. `skip_move`: the victim's GPU drew a noisy neighbour again after one was moved.
std::optional<InterferenceActed> Escalate(const ClusterState& st, const InterferenceFinding& f, const InterferenceSample& neighbour,
                                          std::string tried, bool skip_move, std::string* why) {
  if (!skip_move) {
    std::string no_move = WhyNotMovable(st, neighbour);
    if (no_move.empty()) {
      InterferenceResponse r = ResponseOf(f, neighbour, InterferenceAction::kMove);
      *why = tried + "move the neighbour at its next checkpoint";
      return InterferenceActed{r, *why + ": " + r.Describe()};
    }
    tried += "the neighbour cannot be moved: " + no_move + "; ";
  }
  const Job& v = st.job(f.victim);
  const int32_t group = GroupOf(v.spec, f.victim_task);
  std::string no_harden;
  if (auto h = Hardened(st, v, group, &no_harden)) {
    InterferenceResponse r = ResponseOf(f, neighbour, InterferenceAction::kHarden);
    r.victim_group = group;
    r.hardened = *h;
    const std::string model = st.resource_names().Name(v.spec.gpu_resource).substr(4);
    *why = tried + "harden the victim to " + DescribeHeld(model, *h);
    return InterferenceActed{r, *why + ": " + r.Describe()};
  }
  *why = "none: " + tried + "the victim cannot be hardened: " + no_harden;
  return std::nullopt;
}

// The response to `neighbour` for the victim, cheapest first: a throttle (an MPS neighbour of
// another tenant), else the next response that applies; an event, or nullopt and *why.
std::optional<InterferenceActed> Respond(const ClusterState& st, const InterferenceConfig& cfg, const InterferenceFinding& f,
                                         const InterferenceSample& neighbour, bool skip_move, std::string* why) {
  if (skip_move) {
    auto acted = Escalate(st, f, neighbour, "the victim's GPU drew a noisy neighbour again after one was moved; ", true, why);
    if (acted) return acted;  // else the cheaper responses still apply
  }
  if (std::string no = WhyNotThrottled(st, f, neighbour); !no.empty()) return Escalate(st, f, neighbour, no + "; ", false, why);
  const TaskPlacement& p = st.job(neighbour.job).placement[neighbour.task];
  const int32_t own = std::max<int32_t>(1, p.share.percent);
  InterferenceResponse r = ResponseOf(f, neighbour, InterferenceAction::kThrottle);
  r.percent = std::max<int32_t>(1, static_cast<int32_t>(int64_t{own} * cfg.throttle_permille / 1000));
  r.neighbour_percent = own;
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
    // Already acted on: the neighbour is being moved off the GPU, or the victim hardened away.
    if (InForce(st, node, gpu, InterferenceAction::kMove, *n) || st.HardeningOf(v->job)) continue;
    if (const InterferenceResponse* r = InForce(st, node, gpu, InterferenceAction::kThrottle, *n)) {
      // In force: the bad sample delays its lifting. Still regressed a quiet period after it,
      // the next response is due (once: a finding says what, or why none).
      if (now - r->since_ms >= cfg.quiet_ms && !t.persisting_reported) {
        t.persisting_reported = true;
        auto acted = Escalate(st, f, *n, "persists under the throttle to " + std::to_string(r->percent) + "%; ", false, &f.response);
        if (acted) out.events.emplace_back(std::move(*acted));
        out.findings.push_back(std::move(f));
      }
      continue;
    }
    t.persisting_reported = false;
    auto acted = Respond(st, cfg, f, *n, InForce(st, node, gpu, InterferenceAction::kMove, *v, /*as_victim=*/true) != nullptr, &f.response);
    if (acted) {
      out.events.emplace_back(std::move(*acted));
      t.bad_streak = 0;  // a further response needs its own onset
    }
    if (acted || t.bad_streak == cfg.onset_samples) out.findings.push_back(std::move(f));  // a finding with no response once
  }
  return any_bad;
}

bool Ended(const Job& j) { return !j.holds_resources() && j.state != JobState::kPending; }

// 2. Lifts. A throttle or a move whose victim had no bad sample for quiet_ms (counted from the
//    response when there was none since), or whose victim no longer runs there; a throttle also
//    when its neighbour no longer runs there, a move when its neighbour has ended. A hardening
//    quiet_ms after it was made, once the victim was requeued (it runs alone: there is nothing
//    to measure), or when the victim has ended.
void LiftQuiet(const ClusterState& st, InterferenceMemory& memory, const InterferenceConfig& cfg, NodeId node, int32_t gpu,
               int64_t now, InterferenceOutcome& out) {
  for (const InterferenceResponse& r : st.interference()) {
    if (r.node != node || r.gpu != gpu) continue;
    const Job& v = st.job(r.victim);
    InterferenceSample ns{r.neighbour, r.neighbour_task, r.neighbour_run, {}, {}, {}};
    InterferenceSample vs{r.victim, r.victim_task, static_cast<int32_t>(v.ended_runs.size()), {}, {}, {}};
    auto quiet_for = [&]() {
      auto it = memory.tracks.find({node.value(), gpu, r.victim.value(), r.victim_task, vs.run});
      return now - std::max(r.since_ms, it == memory.tracks.end() ? r.since_ms : it->second.last_bad_ms);
    };
    const std::string quiet_why = "the victim's p99 has stayed under " + std::to_string(cfg.regression_permille / 1000) + "." +
                                  std::to_string(cfg.regression_permille % 1000 / 100) + "x its baseline";
    std::string why;
    if (r.action == InterferenceAction::kHarden) {
      if (Ended(v)) {
        why = "the victim has ended";
      } else if (v.state == JobState::kPreempting || now - r.since_ms < cfg.quiet_ms) {
        continue;
      } else {
        why = "hardened for " + std::to_string((now - r.since_ms) / 1000) +
              " s: the victim takes its own share again at its next start";
      }
    } else if (r.action == InterferenceAction::kThrottle && !RunsThere(st, node, gpu, ns)) {
      why = "the neighbour no longer runs on this GPU";
    } else if (r.action == InterferenceAction::kMove && Ended(st.job(r.neighbour))) {
      why = "the neighbour has ended";
    } else if (!RunsThere(st, node, gpu, vs)) {
      why = "the victim no longer runs on this GPU";
    } else if (int64_t q = quiet_for(); q >= cfg.quiet_ms) {
      why = "quiet for " + std::to_string(q / 1000) + " s: " + quiet_why;
    } else {
      continue;
    }
    out.events.emplace_back(InterferenceCleared{node, gpu, r.neighbour, r.neighbour_task, why, r.action});
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
