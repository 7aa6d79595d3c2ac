#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <set>

#include "sim/generate.h"
#include "metering/budget_gate.h"
#include "scheduler/autoscaler.h"
#include "scheduler/scheduler.h"
#include "scheduler/service_reconciler.h"
#include "spec/setup.h"

namespace allot {
namespace {

// kFail: a job's run fails (scenario `fail:`); kService: a scenario service is created (index:
// its position); kIncident: a scripted incident (index: its position); kScale: an autoscaled
// service's autoscaler runs (index: its position).
enum class Kind : uint8_t { kFinish, kDeadline, kTick, kFail, kService, kIncident, kScale };
// The autoscaler runs this often on an autoscaled service (allotd: every heartbeat, 1 s).
constexpr int64_t kScaleEveryMs = 1000;

struct Timed {
  int64_t time_ms;
  uint64_t seq;  // insertion order: ties are deterministic
  Kind kind;
  uint32_t index;  // job id
  int32_t epoch;   // the job's start count when scheduled; stale events are dropped
  bool operator>(const Timed& o) const { return time_ms != o.time_ms ? time_ms > o.time_ms : seq > o.seq; }
};

}  // namespace

Simulator::Simulator(Scenario scenario, ClusterState& state, SimOptions options)
    : config_(scenario.scheduler), scenario_(std::move(scenario)), state_(state), options_(options) {}

Result<SimResult> Simulator::Run() {
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> queue;
  uint64_t seq = 0;
  std::vector<int32_t> epoch;  // per job id: placements so far
  std::vector<int64_t> held_since;
  // Per job id: runs still to fail and when after their start (scenario `fail:`).
  std::vector<std::pair<int32_t, int64_t>> fails;
  SimResult res;
  for (int r = kFirstGpu; r < state_.resource_names().size(); ++r) {
    res.fleet_gpus += state_.fleet().capacity()[static_cast<ResourceId>(r)] / kGpuUnit;
  }
  res.tenants.resize(state_.tenants().size());
  for (const Tenant& t : state_.tenants().tenants()) res.tenants[t.id.value()].path = t.path;
  for (const ScenarioReservation& x : scenario_.reservations) {
    if (!x.refused.empty()) res.refused_reservations.push_back({x.request.name, x.request.tenant, x.windows, x.refused});
  }
  // A pass at each confirmed window's start and end, and at its drain lead time when set.
  for (const CapacityReservation& r : state_.reservations()) {
    res.reservation_windows.emplace_back(r.spec.windows.size());
    for (const Window& w : r.spec.windows) {
      for (int64_t t : {w.start_ms - std::max<int64_t>(r.spec.drain_before_ms, 0), w.start_ms, w.end_ms}) {
        queue.push({t, seq++, Kind::kTick, 0, 0});
      }
    }
  }
  // Each confirmed reservation's current window (the first not ended at `t`), or nullptr.
  auto current_window = [&](const CapacityReservation& r, int64_t t, size_t& i) -> const Window* {
    if (r.state != ReservationState::kConfirmed) return nullptr;
    i = r.spec.CurrentWindow(t);
    return i == r.spec.windows.size() ? nullptr : &r.spec.windows[i];
  };
  // Lent GPU-time over [from, to), the state unchanged in between.
  auto count_lent = [&](int64_t from, int64_t to) {
    for (const CapacityReservation& r : state_.reservations()) {
      size_t i = 0;
      const Window* w = current_window(r, from, i);
      if (!w || from >= w->start_ms) continue;
      int64_t lent = state_.LentGpus(r.id, i);
      res.reservation_windows[r.id.value()][i].lent_unit_ms += static_cast<__int128>(lent) * kGpuUnit * (std::min(to, w->start_ms) - from);
    }
  };
  // Before the pass at `now`: an open window's capacity is free for its reservation once no
  // other work is left on its holds, or none of its jobs waits for it.
  auto check_free = [&](int64_t now) {
    std::set<std::pair<uint32_t, std::string>> waiting;
    bool scanned = false;
    for (const CapacityReservation& r : state_.reservations()) {
      size_t i = 0;
      const Window* w = current_window(r, now, i);
      if (!w || w->start_ms > now || res.reservation_windows[r.id.value()][i].free_at_ms >= 0) continue;
      if (!scanned) {
        for (JobId id : state_.pending()) {
          const Job& j = state_.job(id);
          if (!j.spec.reservation.empty()) waiting.insert({j.spec.tenant.value(), j.spec.reservation});
        }
        scanned = true;
      }
      if (state_.LentGpus(r.id, i) == 0 || !waiting.count({r.spec.tenant.value(), r.spec.name})) {
        res.reservation_windows[r.id.value()][i].free_at_ms = now;
      }
    }
  };

  auto account = [&](const Job& j, int64_t now) {
    int64_t held = now - held_since[j.id.value()];
    __int128 gm = static_cast<__int128>(j.demand.gpu) * held;
    res.allocated_unit_ms += gm;
    for (TenantId a = j.spec.tenant; a.valid(); a = state_.tenants().tenant(a).parent) {
      res.tenants[a.value()].gpu_unit_ms += gm;
    }
  };
  auto apply = [&](const Event& e) -> Status {
    Status s = state_.apply(e);
    if (!s.ok()) return Internal("simulator: event refused at t=" + std::to_string(e.time_ms) + "ms: " + s.message());
    if (options_.on_event) options_.on_event(e);
    if (options_.on_applied) options_.on_applied(e, state_);
    // Every new job (an arrival, or one a service added by ServiceReplicaAdded) gets its
    // bookkeeping here.
    while (epoch.size() < state_.jobs().size()) {
      epoch.push_back(0);
      held_since.push_back(-1);
      fails.emplace_back(0, 0);
      res.reasons.emplace_back();
    }
    return s;
  };
  // An event that may free running jobs (an incident, a service removing replicas): what they
  // held is counted up to now, as at a finish.
  auto apply_freeing = [&](const Event& e) -> Status {
    std::vector<JobId> held(state_.active().begin(), state_.active().end());
    if (Status s = apply(e); !s.ok()) return s;
    for (JobId id : held) {
      if (!state_.job(id).holds_resources()) account(state_.job(id), e.time_ms);
    }
    return Status::Ok();
  };
  // A node lost: its agent silent (NodeFailed down, its jobs requeued at once); a task failing:
  // JobFailed on each job of that name holding resources (none: nothing happens).
  auto incident = [&](const ScenarioIncident& in, int64_t t) -> Status {
    if (!in.node_lost.empty()) {
      return apply_freeing({t, NodeFailed{state_.fleet().Find(in.node_lost), NodeCondition::kDown, "lost (scenario incident)"}});
    }
    TenantId tenant = in.tenant.empty() ? TenantId() : state_.tenants().Find(in.tenant);
    for (JobId id : std::vector<JobId>(state_.JobsNamed(in.fail))) {
      const Job& j = state_.job(id);
      if (j.holds_resources() && (!tenant.valid() || j.spec.tenant == tenant)) {
        if (Status s = apply_freeing({t, JobFailed{id, in.reason}}); !s.ok()) return s;
      }
    }
    return Status::Ok();
  };
  std::vector<Autoscaler> scalers(scenario_.services.size());
  for (uint32_t i = 0; i < scenario_.services.size(); ++i) {
    queue.push({scenario_.services[i].submit_ms, seq++, Kind::kService, i, 0});
  }
  for (uint32_t i = 0; i < scenario_.incidents.size(); ++i) queue.push({scenario_.incidents[i].at_ms, seq++, Kind::kIncident, i, 0});
  // The autoscaler keeps running until its scripted load has been flat for long enough to settle.
  auto scale_until = [&](const ScenarioService& v) {
    const AutoscaleSpec& a = v.spec.autoscale;
    int64_t last = v.load.empty() ? v.submit_ms : std::max(v.submit_ms, v.load.back().first);
    return last + 2 * a.stable_window_ms + a.scale_down_delay_ms + 10 * kScaleEveryMs;
  };
  auto load_at = [&](const ScenarioService& v, int64_t t) {
    int64_t load = 0;
    for (const auto& [at, value] : v.load) {
      if (at <= t) load = value;
    }
    return load;
  };

  int64_t now = 0;
  int64_t watched = 0;  // lent GPU-time is counted up to here
  bool tick_scheduled = false;
  std::vector<PendingReason> last_pending;  // the last pass's, written into res.reasons at the end
  std::vector<std::string> last_reasons;
  std::deque<ScenarioJob>& arrivals = scenario_.jobs;  // in submit order
  // Every arrival's room at once: a month's job table (900,000 jobs of 712 bytes) grown as
  // they come would be moved at each doubling and held twice at the last.
  const size_t expected = state_.jobs().size() + arrivals.size();
  state_.ReserveJobs(arrivals.size());
  epoch.reserve(expected);
  held_since.reserve(expected);
  fails.reserve(expected);
  res.reasons.reserve(expected);
  while (!queue.empty() || !arrivals.empty()) {
    now = queue.empty() ? arrivals.front().spec.submit_ms : queue.top().time_ms;
    if (!arrivals.empty()) now = std::min(now, arrivals.front().spec.submit_ms);
    if (options_.until_ms >= 0 && now > options_.until_ms) {
      now = options_.until_ms;
      break;
    }
    if (!res.reservation_windows.empty()) count_lent(watched, now);
    watched = now;
    // 1. Everything that happens at `now`: arrivals first, then exits and ticks.
    while (!arrivals.empty() && arrivals.front().spec.submit_ms == now) {
      std::pair<int32_t, int64_t> fail{arrivals.front().fail_runs, arrivals.front().fail_after_ms};
      if (Status s = apply({now, JobSubmitted{std::move(arrivals.front().spec)}}); !s.ok()) return Err(s);
      arrivals.pop_front();
      fails.back() = fail;
    }
    while (!queue.empty() && queue.top().time_ms == now) {
      Timed ev = queue.top();
      queue.pop();
      if (ev.kind == Kind::kTick) {
        tick_scheduled = false;
        continue;
      }
      if (ev.kind == Kind::kService) {
        const ScenarioService& v = scenario_.services[ev.index];
        if (Status s = apply({now, ServiceCreated{v.spec}}); !s.ok()) return Err(s);
        if (v.spec.autoscaled()) queue.push({now + kScaleEveryMs, seq++, Kind::kScale, ev.index, 0});
        continue;
      }
      if (ev.kind == Kind::kIncident) {
        if (Status s = incident(scenario_.incidents[ev.index], now); !s.ok()) return Err(s);
        continue;
      }
      if (ev.kind == Kind::kScale) {
        const ScenarioService& v = scenario_.services[ev.index];
        ServiceId sid = state_.FindService(v.spec.tenant, v.spec.name);
        if (!sid.valid()) continue;
        const Service& svc = state_.service(sid);
        int32_t running = 0;
        for (const ServiceReplica& r : svc.replicas) running += state_.job(r.job).state == JobState::kRunning;
        Autoscaler& a = scalers[ev.index];
        a.Observe(now, load_at(v, now), v.spec.autoscale.stable_window_ms);
        ScaleDecision d = a.Decide(svc.spec, svc.desired, running, now);
        if (d.desired != svc.desired) {
          if (Status s = apply({now, ServiceScaled{sid, d.desired, d.why}}); !s.ok()) return Err(s);
          res.service_scales.push_back({sid, now, d.desired, d.why});
        }
        if (now < scale_until(v)) queue.push({now + kScaleEveryMs, seq++, Kind::kScale, ev.index, 0});
        continue;
      }
      const Job& j = state_.job(JobId(ev.index));
      if (!j.holds_resources() || epoch[ev.index] != ev.epoch) continue;  // stale
      account(j, now);
      if (ev.kind == Kind::kFinish) {
        if (Status s = apply({now, JobFinished{j.id}}); !s.ok()) return Err(s);
      } else if (ev.kind == Kind::kFail) {
        fails[ev.index].first -= 1;
        if (Status s = apply({now, JobFailed{j.id, "exit code 1 (simulated failure)"}}); !s.ok()) return Err(s);
      } else {
        // Work kept: up to the last periodic checkpoint before the signal.
        int64_t saved = j.saved_work_ms;
        if (j.spec.checkpoint_interval_ms > 0) {
          int64_t ran = j.last_preempted_ms - j.last_started_ms;
          saved += ran / j.spec.checkpoint_interval_ms * j.spec.checkpoint_interval_ms;
        }
        saved = std::min(saved, j.spec.duration_ms);
        if (Status s = apply({now, JobStopped{j.id, saved}}); !s.ok()) return Err(s);
      }
    }
    if (!res.reservation_windows.empty()) check_free(now);
    // 1b. Services: replicas restarted, removed and added (the same reconciler as allotd's).
    if (!state_.services().empty()) {
      ServiceActions acts = ReconcileServices(state_, now);
      for (EventBody& b : acts.events) {
        if (Status s = apply_freeing({now, std::move(b)}); !s.ok()) return Err(s);
      }
      if (acts.wake_ms > now) queue.push({acts.wake_ms, seq++, Kind::kTick, 0, 0});
    }
    // 2. One scheduling pass, then its decisions.
    auto t0 = std::chrono::steady_clock::now();
    Plan plan = options_.remember_failed_attempts ? PlanPass(state_, now, config_, &failed_attempts_)
                                                  : PlanPass(state_, now, config_);
    res.wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.passes += 1;
    res.decisions += static_cast<int64_t>(plan.decisions());
    for (const Event& e : plan.ToEvents()) {
      if (Status s = apply(e); !s.ok()) return Err(s);
    }

    for (const PlannedPlacement& p : plan.placements) {
      const Job& j = state_.job(p.job);
      int32_t ep = ++epoch[p.job.value()];
      held_since[p.job.value()] = now;
      res.reasons[p.job.value()].clear();
      const auto& [fail_runs, fail_after] = fails[p.job.value()];
      if (fail_runs > 0) {
        int64_t at = fail_after > 0 ? std::min(fail_after, j.remaining_work_ms()) : j.remaining_work_ms();
        queue.push({now + at, seq++, Kind::kFail, p.job.value(), ep});
      } else if (j.spec.duration_ms > 0) {  // a service's replica has no duration: it runs until removed
        queue.push({now + j.remaining_work_ms(), seq++, Kind::kFinish, p.job.value(), ep});
      }
    }
    for (const PlannedPreemption& p : plan.preemptions) {
      queue.push({p.deadline_ms, seq++, Kind::kDeadline, p.victim.value(), epoch[p.victim.value()]});
    }
    // Jobs failed for a dependency never met may be dependencies too: another pass now.
    if (!plan.failures.empty()) queue.push({now, seq++, Kind::kTick, 0, 0});
    // A re-laid-out MIG GPU becomes usable later: run a pass then.
    for (const MigRelayout& r : plan.relayouts) queue.push({r.ready_ms, seq++, Kind::kTick, 0, 0});
    res.reserved = plan.reservation ? plan.reservation->job : JobId();
    res.reserved_start_ms = plan.reservation ? plan.reservation->start_ms : -1;
    for (const PlannedRejection& r : plan.rejections) res.reasons[r.job.value()] = r.reason;
    for (const PlannedRejection& f : plan.failures) res.reasons[f.job.value()] = f.reason;
    // A pending job's reason is shown only while it is pending, and every pending job gets one
    // in every pass: the last pass's are kept and written at the end, not copied every pass
    // (a month of overload holds ~100,000 waiting jobs through a million passes).
    last_pending = std::move(plan.pending);
    last_reasons = std::move(plan.reasons);
    // 3. While jobs wait and the world still moves, tick so that protections expire.
    if (!tick_scheduled && !state_.pending().empty() && (!queue.empty() || !arrivals.empty())) {
      queue.push({now + config_.pass_interval_ms, seq++, Kind::kTick, 0, 0});
      tick_scheduled = true;
    }
    if (options_.verify) {
      if (Status s = state_.VerifyInvariants(); !s.ok()) return Err(Internal("after pass at t=" + std::to_string(now) + "ms: " + s.message()));
    }
  }
  for (const PendingReason& r : last_pending) {
    if (state_.job(r.job).state == JobState::kPending) res.reasons[r.job.value()] = last_reasons[r.why];
  }
  // 3. Close the books on what still holds resources.
  for (JobId id : state_.active()) account(state_.job(id), now);
  for (JobId id = JobId(0); id.value() < state_.jobs().size(); id = JobId(id.value() + 1)) {
    const Job& j = state_.job(id);
    if (j.first_started_ms < 0) continue;
    int64_t wait = j.first_started_ms - j.spec.submit_ms;
    for (TenantId a = j.spec.tenant; a.valid(); a = state_.tenants().tenant(a).parent) {
      res.tenants[a.value()].waits.push_back(wait);
    }
  }
  res.end_ms = now;
  return res;
}

namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// RunScenario, with the load timed from `t0`.
Result<SimRun> RunFrom(Scenario sc, const SimOptions& options, std::optional<uint64_t> seed,
                       std::chrono::steady_clock::time_point t0) {
  if (!sc.budgets.empty() && !options.billing) {
    return Err(InvalidArgument(sc.file + ":" + std::to_string(sc.budgets.front().line) +
                               ": budgets need --rates: a budget caps spend priced by a rate card; expected allot sim " +
                               sc.file + " --rates RATES.yaml"));
  }
  // The gate allotd installs with --rates: the same held jobs, reasons and warnings.
  if (options.billing) sc.scheduler.gate = std::make_shared<BudgetGateFactory>(options.billing);
  if (!options.jobs_file.empty()) {
    sc.jobs_file = options.jobs_file;
    sc.jobs_file_read = false;
  }
  if (Status s = ReadScenarioJobsFile(sc); !s.ok()) return Err(s);
  if (sc.generate) {
    GenerateSpec g = *sc.generate;
    if (seed) g.seed = *seed;
    Generate(g, sc);
  }
  // A trace is usually written in submit order: checked before anything is moved.
  auto by_submit = [](const ScenarioJob& a, const ScenarioJob& b) { return a.spec.submit_ms < b.spec.submit_ms; };
  if (!std::is_sorted(sc.jobs.begin(), sc.jobs.end(), by_submit)) OrderBySubmit(sc.jobs);
  SimRun run;
  if (Status s = BuildInitialState(sc, run.state, options.on_event); !s.ok()) return Err(s);
  const int64_t jobs = static_cast<int64_t>(sc.jobs.size());
  const double load_seconds = Since(t0);
  if (!options.load_only) {
    Simulator sim(std::move(sc), run.state, options);
    auto r = sim.Run();
    if (!r) return Err(r.error());
    run.result = std::move(*r);
  }
  run.result.load_seconds = load_seconds;
  run.result.jobs_loaded = jobs;
  return run;
}

}  // namespace

Result<SimRun> RunScenario(Scenario sc, const SimOptions& options, std::optional<uint64_t> seed) {
  return RunFrom(std::move(sc), options, seed, std::chrono::steady_clock::now());
}

Result<SimRun> RunScenarioFile(const std::string& path, const SimOptions& options, std::optional<uint64_t> seed) {
  const auto t0 = std::chrono::steady_clock::now();
  auto sc = LoadScenario(path);
  if (!sc) return Err(sc.error());
  return RunFrom(std::move(*sc), options, seed, t0);
}

}  // namespace allot
