// The daemon's one writer.
//
// API threads hand commands (events without a time) to Execute(). One writer thread takes
// every queued command at once, applies each to the state at the current time (a refused one
// changes nothing and is answered with its error), lets the simulated fleet finish what is due,
// runs a scheduling pass when anything changed or the tick is due, appends the whole batch's
// events to the journal as one durable group (group commit: one fsync for many requests), and
// only then answers the callers. Readers take a shared lock and see the state between batches.
//
// Start() restores the journal's newest snapshot, if any, and replays the events after it (all
// of them without one), so a restart resumes exactly where the last acknowledged batch left
// off. With snapshot_every set, the writer saves a snapshot after each batch that crosses the
// next multiple of that many events.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "daemon/metering_sink.h"
#include "metrics/histogram.h"
#include "scheduler/config.h"
#include "scheduler/failed_attempts.h"
#include "state/cluster_state.h"
#include "state/event_nodes.h"
#include "store/journal.h"

namespace allot {

// Who made a mutating request, for its audit record.
struct AuditContext {
  std::string actor;
  Role role = Role::kViewer;
  std::string tenant;
  std::string action;
  std::string target;
  std::string request_id;
};

struct ControllerOptions {
  SchedulerConfig scheduler;
  // Hex hash of an audit record's canonical bytes (BLAKE2b in allotd). Without it, audit
  // contexts are not recorded.
  std::function<std::string(const std::string&)> audit_hash;
  // Simulated fleet: jobs "run" for their declared duration; a preempted job exits at its
  // grace deadline keeping the work up to its last checkpoint (as the simulator does). A job
  // with no command placed on agent-managed nodes is simulated so either way: agents run only
  // commands.
  bool simulate_runs = false;
  // Under load, a pass runs at most this often (wall time): commands are durable and answered
  // at once, and placed by the next pass. While passes are cheap (a short queue) the gap is
  // only kPassGapFactor times what the last pass took, so a submit or an exit is placed at once
  // (the passes then take at most ~1/kPassGapFactor of the writer's time). 0: a pass after
  // every batch that changed anything.
  int64_t min_pass_gap_ms = 0;
  static constexpr int kPassGapFactor = 10;
  // Events between state snapshots (0: never take one; Start() restores one either way). Each
  // holds up the writer (not readers) while the whole state is encoded and saved, after the
  // batch's callers are answered: ~0.5 s for 333,000 jobs (38 MB; bench/load/journal_restart.cc).
  uint64_t snapshot_every = 0;
  // Metering with a rate card: closes billing periods into the ledger (daemon/metering_sink.h).
  // The budget gate goes in scheduler.gate. Unset: no ledger.
  std::shared_ptr<MeteringSink> metering;
  // Where operational lines go (a snapshot taken or refused at start-up); stderr when unset.
  std::function<void(const std::string&)> log;
  // Where the writer records how long each scheduling pass and each journal commit took (steady
  // clock, measured here around the calls: the scheduler reads no clock) and the preemptions it
  // started, by reason. Unset: not measured.
  std::shared_ptr<DaemonMetrics> metrics;
};

class Controller {
 public:
  using Clock = std::function<int64_t()>;  // milliseconds

  Controller(std::unique_ptr<Journal> journal, Clock clock, ControllerOptions options);
  ~Controller();

  // Replays the journal, then starts the writer. Fails naming the event that does not apply.
  Status Start();
  // Answers what is queued, stops the writer. Idempotent.
  void Stop();

  // Applies one command durably. Returns its journal sequence number, or why it was refused
  // (nothing changed), or Unavailable when the controller is stopped or the journal failed.
  Result<uint64_t> Execute(EventBody command);
  // The same, with an audit record of the outcome in the same durable group.
  Result<uint64_t> Execute(EventBody command, AuditContext audit);
  // Several commands applied in order in one batch, no pass between them (an array's elements,
  // a pipeline's jobs, a heartbeat's exits), the audit record (if any) after the last: each
  // one's sequence number or error.
  std::vector<Result<uint64_t>> ExecuteAll(std::vector<EventBody> commands, std::optional<AuditContext> audit = std::nullopt);
  // Records a request refused before it became a command (bad input, scope, role), durably;
  // returns `refusal`, or Unavailable when it could not be recorded.
  Status Audit(AuditContext audit, const Status& refusal);
  // Runs a batch (a pass included) even with nothing queued, and waits for it: for tests and
  // for drivers that want a pass now.
  Status Sync();

  // Calls fn(state) under the shared lock.
  template <class F>
  auto Read(F&& fn) const {
    std::shared_lock lock(state_mu_);
    return fn(static_cast<const ClusterState&>(state_));
  }
  // fn(state) under the shared lock if it is free now; nullopt while the writer holds it (a
  // batch, a pass): for a caller that must not wait, the I/O thread, which hands the work on.
  template <class F>
  auto TryRead(F&& fn) const -> std::optional<decltype(fn(std::declval<const ClusterState&>()))> {
    std::shared_lock lock(state_mu_, std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    return fn(static_cast<const ClusterState&>(state_));
  }
  // The state and why each pending job waits (from the last pass), under the shared lock.
  struct View {
    const ClusterState& state;
    const std::vector<std::string>& reasons;  // by job id; may be shorter than the job list
    int64_t now_ms;
    const std::string& ReasonOf(JobId id) const {
      static const std::string kNone;
      return id.value() < reasons.size() ? reasons[id.value()] : kNone;
    }
  };
  template <class F>
  auto ReadView(F&& fn) const {
    std::shared_lock lock(state_mu_);
    return fn(View{state_, reasons_, clock_()});
  }
  int64_t now_ms() const { return clock_(); }

  // The most recent journaled events (at most `kRecentEvents`), for the watch stream: those with
  // a sequence number > `since`, waiting up to `wait` for one to arrive. `oldest` is set to the
  // first sequence number still kept (a caller further behind must resync).
  static constexpr size_t kRecentEvents = 100000;
  std::vector<std::pair<uint64_t, Event>> EventsSince(uint64_t since, std::chrono::milliseconds wait, uint64_t* oldest);
  // Waits up to `wait` for an event with a sequence number > `since`; returns the newest one
  // journaled (a node agent's long poll: it only needs to know that something happened).
  uint64_t WaitForEvents(uint64_t since, std::chrono::milliseconds wait);
  // The nodes whose agent view (state/event_nodes.h) the events after `since` up to `upto`
  // touched, sorted; nullopt when any node may be touched (an event that cannot say, or `since`
  // older than the batches remembered).
  std::optional<std::vector<NodeId>> NodesTouchedSince(uint64_t since, uint64_t upto) const;
  // Events with a sequence number > `since` read back from the journal, at most `limit`: for a
  // watcher further behind than the events kept in memory (or from before a restart).
  Result<std::vector<std::pair<uint64_t, Event>>> JournalEvents(uint64_t since, size_t limit);

  // The metering (rate card, ledger key), or nullptr without a rate card.
  const MeteringSink* metering() const { return options_.metering.get(); }

  // Whether the writer runs and the journal is healthy (readiness).
  bool healthy() const;
  uint64_t last_seq() const;
  // Batches run and events journaled so far (metrics, tests).
  uint64_t batches() const;

 private:
  struct Command {
    std::optional<EventBody> body;  // nullopt: Sync, or an audit of an early refusal
    std::optional<AuditContext> audit;
    Status refusal;                 // for an early refusal
    std::promise<Result<uint64_t>> done;
  };
  std::future<Result<uint64_t>> Enqueue(Command c, Status& unavailable);
  void Run();
  void RunBatch(std::deque<Command>& batch);
  // state_.apply, noting the nodes the event touched in batch_touched_ when it applies.
  // REQUIRES: the writer thread, state_mu_ held exclusively.
  Status Apply(const Event& e);
  void SimulatedExits(int64_t now, std::vector<Event>& out);
  // Appends (applied) the ledger events of the billing periods that have ended.
  void CloseDuePeriods(int64_t now, std::vector<Event>& events);
  // Start(): the newest snapshot restored into state_; returns the seq to replay after (0 when
  // there is none or it does not restore, said in the log).
  uint64_t RestoreNewestSnapshot();
  // After a batch: a snapshot once the journal has crossed next_snapshot_seq_.
  void MaybeSnapshot();
  void Log(const std::string& line) const;

  std::unique_ptr<Journal> journal_;
  // Serializes use of the journal between the writer (Append) and readers catching up
  // (JournalEvents). Taken after queue_mu_ where both are held, never the other way round.
  mutable std::mutex journal_mu_;
  Clock clock_;
  ControllerOptions options_;

  mutable std::shared_mutex state_mu_;
  ClusterState state_;
  FailedAttempts failed_attempts_;  // the passes' memo over state_ (scheduler thread only)
  std::vector<std::string> reasons_;  // by job id: the last pass's pending or rejection reason

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Command> queue_;
  bool stopping_ = false;
  bool running_ = false;
  bool failed_ = false;
  uint64_t batches_ = 0;
  int64_t next_pass_ms_ = 0;
  bool dirty_ = false;  // changed since the last pass
  std::chrono::steady_clock::time_point last_pass_{};
  std::chrono::steady_clock::duration last_pass_took_{};  // writer thread only
  // The gap the next pass waits for after the last one (ControllerOptions::min_pass_gap_ms).
  std::chrono::microseconds PassGap() const;
  std::thread writer_;
  uint64_t next_snapshot_seq_ = 0;  // writer thread only
  std::string metering_error_;      // writer thread only: the last close failure logged
  std::condition_variable events_cv_;                // under queue_mu_
  std::deque<std::pair<uint64_t, Event>> recent_;  // under queue_mu_
  NodesTouched batch_touched_;                       // writer thread only: the batch being run
  // By batch, the last seq it journaled and the nodes it touched (normalized), as far back as
  // recent_ reaches. Under queue_mu_.
  std::deque<std::pair<uint64_t, NodesTouched>> touched_;
};

}  // namespace allot
