#include "daemon/controller.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "scheduler/scheduler.h"
#include "scheduler/service_reconciler.h"
#include "state/snapshot.h"

namespace allot {

Controller::Controller(std::unique_ptr<Journal> journal, Clock clock, ControllerOptions options)
    : journal_(std::move(journal)), clock_(std::move(clock)), options_(options) {}

Controller::~Controller() { Stop(); }

Status Controller::Start() {
  {
    std::unique_lock lock(state_mu_);
    auto replay = [&](uint64_t after) {
      return journal_->Replay(after, [&](uint64_t seq, const Event& e) {
        Status a = state_.apply(e);
        if (!a.ok()) return Internal("journal event " + std::to_string(seq) + " does not apply: " + a.message());
        return Status::Ok();
      });
    };
    uint64_t after = RestoreNewestSnapshot();
    Status s = replay(after);
    if (!s.ok() && after > 0) {
      // The tail may refuse a wrong snapshot rather than be wrong itself: the whole journal
      // decides (and is refused in turn only if it is damaged).
      Log("the events after the snapshot at event " + std::to_string(after) + " do not apply (" + s.message() +
          "); replaying the whole journal");
      state_ = ClusterState();
      s = replay(0);
    }
    if (!s.ok()) return s;
  }
  uint64_t every = options_.snapshot_every;
  if (every > 0) next_snapshot_seq_ = (journal_->last_seq() / every + 1) * every;
  std::lock_guard lock(queue_mu_);
  running_ = true;
  stopping_ = false;
  next_pass_ms_ = clock_();
  writer_ = std::thread([this] { Run(); });
  return Status::Ok();
}

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

}  // namespace

void Controller::Log(const std::string& line) const {
  if (options_.log) return options_.log(line);
  std::cerr << "allotd: " << line << "\n";
}

// REQUIRES: state_mu_ held, state_ fresh.
uint64_t Controller::RestoreNewestSnapshot() {
  auto t0 = std::chrono::steady_clock::now();
  auto loaded = journal_->LoadSnapshot();
  if (!loaded) {
    Log("no snapshot could be read (" + loaded.error().message() + "); replaying the whole journal");
    return 0;
  }
  if (!*loaded) return 0;
  const auto& [seq, bytes] = **loaded;
  if (Status s = RestoreSnapshot(bytes, state_); !s.ok()) {
    Log("the snapshot at event " + std::to_string(seq) + " does not restore (" + s.message() +
        "); replaying the whole journal");
    return 0;
  }
  Log("restored the snapshot at event " + std::to_string(seq) + " (" + std::to_string(bytes.size()) + " bytes) in " +
      Ms(MsSince(t0)) + "; replaying the " + std::to_string(journal_->last_seq() - seq) + " events after it");
  return seq;
}

void Controller::MaybeSnapshot() {
  uint64_t every = options_.snapshot_every, seq = journal_->last_seq();  // the writer is the one appender
  if (every == 0 || seq < next_snapshot_seq_) return;
  {
    std::lock_guard lock(queue_mu_);
    if (failed_) return;  // the state is ahead of the journal
  }
  next_snapshot_seq_ = (seq / every + 1) * every;
  auto t0 = std::chrono::steady_clock::now();
  std::string bytes;
  {
    // Readers may go on meanwhile; only this thread writes the state.
    std::shared_lock lock(state_mu_);
    bytes = EncodeSnapshot(state_);
  }
  double encode_ms = MsSince(t0);
  t0 = std::chrono::steady_clock::now();
  // A snapshot that is not saved costs only restart time: say so and keep serving.
  if (Status s = journal_->SaveSnapshot(seq, bytes); !s.ok()) {
    Log("the snapshot at event " + std::to_string(seq) + " was not saved: " + s.message());
    return;
  }
  Log("snapshot at event " + std::to_string(seq) + ": " + std::to_string(bytes.size()) + " bytes, encoded in " +
      Ms(encode_ms) + ", saved in " + Ms(MsSince(t0)));
}

void Controller::Stop() {
  {
    std::lock_guard lock(queue_mu_);
    if (!running_) return;
    stopping_ = true;
  }
  queue_cv_.notify_all();
  events_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  std::lock_guard lock(queue_mu_);
  running_ = false;
}

std::vector<std::pair<uint64_t, Event>> Controller::EventsSince(uint64_t since, std::chrono::milliseconds wait,
                                                               uint64_t* oldest) {
  std::unique_lock lock(queue_mu_);
  events_cv_.wait_for(lock, wait, [&] { return stopping_ || (!recent_.empty() && recent_.back().first > since); });
  if (recent_.empty()) {
    std::lock_guard journal_lock(journal_mu_);
    *oldest = journal_->last_seq() + 1;
  } else {
    *oldest = recent_.front().first;
  }
  std::vector<std::pair<uint64_t, Event>> out;
  for (auto it = recent_.rbegin(); it != recent_.rend() && it->first > since; ++it) out.push_back(*it);
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<std::vector<NodeId>> Controller::NodesTouchedSince(uint64_t since, uint64_t upto) const {
  std::lock_guard lock(queue_mu_);
  // Batches before the first remembered one are forgotten: any node may have been touched.
  uint64_t remembered_from = recent_.empty() ? UINT64_MAX : recent_.front().first;
  if (since + 1 < remembered_from && since < upto) return std::nullopt;
  NodesTouched out;
  // Batches journal consecutive seqs: one begins after the one before it ends. A batch begun
  // after `upto` is left for the next ask; one straddling it is counted.
  for (size_t i = touched_.size(); i-- > 0 && touched_[i].first > since;) {
    if (i > 0 && touched_[i - 1].first >= upto) continue;
    out.Merge(touched_[i].second);
    if (out.all) return std::nullopt;
  }
  out.Normalize();
  return out.nodes;
}

uint64_t Controller::WaitForEvents(uint64_t since, std::chrono::milliseconds wait) {
  std::unique_lock lock(queue_mu_);
  events_cv_.wait_for(lock, wait, [&] { return stopping_ || (!recent_.empty() && recent_.back().first > since); });
  return recent_.empty() ? since : std::max(since, recent_.back().first);
}

Result<std::vector<std::pair<uint64_t, Event>>> Controller::JournalEvents(uint64_t since, size_t limit) {
  std::vector<std::pair<uint64_t, Event>> out;
  if (limit == 0) return out;
  bool enough = false;
  std::lock_guard lock(journal_mu_);
  Status s = journal_->Replay(since, [&](uint64_t seq, const Event& e) {
    out.emplace_back(seq, e);
    enough = out.size() >= limit;
    return enough ? Status(Code::kResourceExhausted, "page full") : Status::Ok();  // stops the replay
  });
  if (!s.ok() && !enough) return Err(s);
  return out;
}

bool Controller::healthy() const {
  std::lock_guard lock(queue_mu_);
  return running_ && !stopping_ && !failed_;
}

uint64_t Controller::last_seq() const {
  std::lock_guard lock(journal_mu_);
  return journal_->last_seq();
}

uint64_t Controller::batches() const {
  std::lock_guard lock(queue_mu_);
  return batches_;
}

std::future<Result<uint64_t>> Controller::Enqueue(Command c, Status& unavailable) {
  std::future<Result<uint64_t>> f;
  {
    std::lock_guard lock(queue_mu_);
    if (!running_ || stopping_ || failed_) {
      unavailable = Unavailable("the controller is not running");
      return f;
    }
    queue_.push_back(std::move(c));
    f = queue_.back().done.get_future();
  }
  queue_cv_.notify_one();
  return f;
}

std::vector<Result<uint64_t>> Controller::ExecuteAll(std::vector<EventBody> commands, std::optional<AuditContext> audit) {
  std::vector<std::future<Result<uint64_t>>> futures;
  std::vector<Result<uint64_t>> out;
  {
    std::lock_guard lock(queue_mu_);
    if (!running_ || stopping_ || failed_) {
      out.assign(commands.size(), Err(Unavailable("the controller is not running")));
      return out;
    }
    for (size_t i = 0; i < commands.size(); ++i) {
      std::optional<AuditContext> a;
      if (i + 1 == commands.size()) a = std::move(audit);
      queue_.push_back(Command{std::move(commands[i]), std::move(a), {}, {}});
      futures.push_back(queue_.back().done.get_future());
    }
  }
  queue_cv_.notify_one();
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

Result<uint64_t> Controller::Execute(EventBody command) {
  Status unavailable;
  auto f = Enqueue(Command{std::move(command), std::nullopt, {}, {}}, unavailable);
  if (!unavailable.ok()) return Err(unavailable);
  return f.get();
}

Result<uint64_t> Controller::Execute(EventBody command, AuditContext audit) {
  Status unavailable;
  auto f = Enqueue(Command{std::move(command), std::move(audit), {}, {}}, unavailable);
  if (!unavailable.ok()) return Err(unavailable);
  return f.get();
}

Status Controller::Audit(AuditContext audit, const Status& refusal) {
  Status unavailable;
  auto f = Enqueue(Command{std::nullopt, std::move(audit), refusal, {}}, unavailable);
  if (!unavailable.ok()) return unavailable;
  auto r = f.get();
  return r ? refusal : r.error();
}

Status Controller::Sync() {
  Status unavailable;
  auto f = Enqueue(Command{std::nullopt, std::nullopt, {}, {}}, unavailable);
  if (!unavailable.ok()) return unavailable;
  auto r = f.get();
  return r ? Status::Ok() : r.error();
}

std::chrono::microseconds Controller::PassGap() const {
  auto cap = std::chrono::microseconds(options_.min_pass_gap_ms * 1000);
  auto scaled = std::chrono::duration_cast<std::chrono::microseconds>(last_pass_took_ * ControllerOptions::kPassGapFactor);
  return std::min(cap, scaled);
}

void Controller::Run() {
  for (;;) {
    std::deque<Command> batch;
    {
      std::unique_lock lock(queue_mu_);
      // Wake for commands, to stop, when a pass held back by the gap is due, or every 50 ms to
      // see whether the tick or a simulated exit is due (the clock may be a test's).
      auto wait = dirty_ ? std::max(std::chrono::microseconds(100), PassGap() - std::chrono::duration_cast<std::chrono::microseconds>(
                                                                              std::chrono::steady_clock::now() - last_pass_))
                         : std::chrono::microseconds(50000);
      queue_cv_.wait_for(lock, wait, [&] { return stopping_ || !queue_.empty(); });
      batch.swap(queue_);
      if (stopping_ && batch.empty()) return;
    }
    RunBatch(batch);
    MaybeSnapshot();  // after the batch's callers have their answers
  }
}

void Controller::SimulatedExits(int64_t now, std::vector<Event>& out) {
  for (JobId id : state_.active()) {
    const Job& j = state_.job(id);
    if (!options_.simulate_runs && (!j.spec.command.empty() || !state_.agent_managed(j.placement[0].node))) continue;
    // A job with only a command (no duration) runs until its agent reports its exit.
    if (j.state == JobState::kRunning && j.spec.duration_ms > 0 && now >= j.last_started_ms + j.remaining_work_ms()) {
      out.push_back({now, JobFinished{id}});
    } else if (j.state == JobState::kPreempting && now >= j.preempt_deadline_ms) {
      int64_t saved = j.saved_work_ms;
      if (j.spec.checkpoint_interval_ms > 0) {
        int64_t ran = j.last_preempted_ms - j.last_started_ms;
        saved += ran / j.spec.checkpoint_interval_ms * j.spec.checkpoint_interval_ms;
      }
      out.push_back({now, JobStopped{id, std::min(saved, j.spec.duration_ms)}});
    }
  }
}

// REQUIRES: the writer thread, state_mu_ held exclusively.
void Controller::CloseDuePeriods(int64_t now, std::vector<Event>& events) {
  auto due = options_.metering->Due(state_, now);
  if (!due) {
    // Said once per distinct failure; every batch tries again (a fixed rate card needs a restart).
    if (due.error().message() != metering_error_) {
      metering_error_ = due.error().message();
      Log("a billing period could not be closed: " + metering_error_);
    }
    return;
  }
  for (LedgerAppended& body : *due) {
    Event e{now, std::move(body)};
    if (Status s = Apply(e); !s.ok()) {
      Log("a billing period close does not apply: " + s.message());
      return;
    }
    Log("closed billing period " + std::get<LedgerAppended>(e.body).closes + ": " +
        std::to_string(std::get<LedgerAppended>(e.body).entries.size()) + " ledger entries");
    events.push_back(std::move(e));
  }
}

Status Controller::Apply(const Event& e) {
  NodesTouched touched;
  AddNodesTouched(state_, e.body, touched);
  Status s = state_.apply(e);
  if (!s.ok()) return s;
  AddNodesTouched(state_, e.body, touched);
  batch_touched_.Merge(touched);
  return s;
}

void Controller::RunBatch(std::deque<Command>& batch) {
  batch_touched_ = {};
  int64_t now = clock_();
  std::vector<Event> events;
  std::vector<Result<uint64_t>> results(batch.size());
  std::vector<int64_t> index(batch.size(), -1);  // the command's event in `events`
  bool changed = false;
  {
    std::unique_lock lock(state_mu_);
    for (size_t i = 0; i < batch.size(); ++i) {
      Command& cmd = batch[i];
      Status outcome = cmd.refusal;
      if (cmd.body) {
        Event e{now, std::move(*cmd.body)};
        outcome = Apply(e);
        if (outcome.ok() && options_.metrics) {
          // A noisy-neighbour move or hardening starts a preemption of its own (state/interference.h).
          if (const auto* a = std::get_if<InterferenceActed>(&e.body); a && a->response.action != InterferenceAction::kThrottle) {
            options_.metrics->preemptions.Add({PreemptKindName(PreemptKind::kInterference)});
          }
        }
        if (outcome.ok()) {
          index[i] = static_cast<int64_t>(events.size());
          events.push_back(std::move(e));
          changed = true;
        } else {
          results[i] = Err(outcome);
        }
      }
      if (cmd.audit && options_.audit_hash) {
        const AuditContext& a = *cmd.audit;
        AuditRecord r{now, a.actor, a.role, a.tenant, a.action, a.target,
                      outcome.ok() ? "ok" : std::string(CodeName(outcome.code())) + ": " + outcome.message(),
                      a.request_id, state_.last_audit_hash(), ""};
        r.hash = options_.audit_hash(Canonical(r));
        Event e{now, AuditRecorded{std::move(r)}};
        if (Apply(e).ok()) events.push_back(std::move(e));
      }
    }
    if (options_.simulate_runs || state_.agents_registered()) {
      std::vector<Event> exits;
      SimulatedExits(now, exits);
      for (Event& e : exits) {
        if (Apply(e).ok()) {
          events.push_back(std::move(e));
          changed = true;
        }
      }
    }
    // Services: replicas restarted, removed and added before the pass, so it places them now
    // (the same reconciler as the simulator's; a back-off's end is seen by the batch after it).
    if (!state_.services().empty()) {
      for (EventBody& b : ReconcileServices(state_, now).events) {
        Event e{now, std::move(b)};
        if (Apply(e).ok()) {
          events.push_back(std::move(e));
          changed = true;
        }
      }
    }
    bool sync = false;
    for (const Command& c : batch) sync |= !c.body.has_value() && !c.audit.has_value();
    dirty_ |= changed;
    auto wall = std::chrono::steady_clock::now();
    bool gap_ok = wall - last_pass_ >= PassGap();
    if ((dirty_ && gap_ok) || sync || now >= next_pass_ms_) {
      dirty_ = false;
      last_pass_ = wall;
      auto pass_start = std::chrono::steady_clock::now();
      Plan plan = PlanPass(state_, now, options_.scheduler, &failed_attempts_);
      last_pass_took_ = std::chrono::steady_clock::now() - pass_start;
      if (options_.metrics) options_.metrics->scheduler_pass.Observe({}, std::chrono::duration<double>(last_pass_took_).count());
      reasons_.resize(state_.jobs().size());
      for (const PlannedPlacement& p : plan.placements) reasons_[p.job.value()].clear();
      for (const PendingReason& r : plan.pending) reasons_[r.job.value()] = plan.Why(r);
      for (const PlannedRejection& r : plan.rejections) reasons_[r.job.value()] = r.reason;
      for (const PlannedRejection& f : plan.failures) reasons_[f.job.value()] = f.reason;
      for (Event& e : plan.ToEvents()) {
        Status s = Apply(e);
        if (!s.ok()) {
          // A plan the state refuses is a scheduler bug; keep serving, skip the decision.
          continue;
        }
        if (options_.metrics) {
          if (const auto* p = std::get_if<JobPreemptionStarted>(&e.body)) options_.metrics->preemptions.Add({PreemptKindName(p->kind)});
        }
        events.push_back(std::move(e));
      }
      next_pass_ms_ = now + options_.scheduler.pass_interval_ms;
      // Jobs failed for a dependency never met may be dependencies too: another pass soon.
      if (!plan.failures.empty()) dirty_ = true;
    }
    if (options_.metering) CloseDuePeriods(now, events);
  }
  // Durable before anyone hears back.
  Result<uint64_t> appended = Err(Status());
  {
    std::lock_guard journal_lock(journal_mu_);
    auto commit_start = std::chrono::steady_clock::now();
    appended = journal_->Append(events);
    if (options_.metrics) {
      options_.metrics->journal_commit.Observe(
          {}, std::chrono::duration<double>(std::chrono::steady_clock::now() - commit_start).count());
    }
  }
  std::lock_guard lock(queue_mu_);
  ++batches_;
  if (!appended) {
    failed_ = true;  // the state is ahead of the journal: stop taking writes
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(Err(appended.error()));
    return;
  }
  uint64_t first = *appended - events.size() + 1;
  for (size_t k = 0; k < events.size(); ++k) recent_.emplace_back(first + k, std::move(events[k]));
  while (recent_.size() > kRecentEvents) recent_.pop_front();
  if (!events.empty()) {
    batch_touched_.Normalize();
    touched_.emplace_back(*appended, std::move(batch_touched_));
    while (!touched_.empty() && !recent_.empty() && touched_.front().first < recent_.front().first) touched_.pop_front();
  }
  if (!events.empty()) events_cv_.notify_all();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (index[i] >= 0) {
      results[i] = first + static_cast<uint64_t>(index[i]);
    } else if (!batch[i].body) {
      results[i] = *appended;  // a Sync, or an early refusal now recorded
    }
    batch[i].done.set_value(std::move(results[i]));
  }
}

}  // namespace allot
