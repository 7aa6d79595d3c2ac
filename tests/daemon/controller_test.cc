// The one-writer controller: commands are applied in order and answered only once durable,
// refused commands change nothing, concurrent submitters each get exactly one acknowledged job,
// the simulated fleet runs jobs to completion, and a restart replays to the same state.
#include "daemon/controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <filesystem>
#include <set>
#include <thread>

#include "state/event_codec.h"
#include "store/sqlite_journal.h"
#include "testing/builders.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

class ControllerTest : public ::testing::Test {
 protected:
  void TearDown() override { ctl_.reset(); }
  void StartController(bool simulate = true, int64_t min_pass_gap_ms = 0, std::function<std::string(const std::string&)> audit_hash = {}) {
    auto j = SqliteJournal::Open((dir_ / "allot.db").string());
    ASSERT_TRUE(j.has_value()) << j.error().message();
    ControllerOptions o;
    o.simulate_runs = simulate;
    o.min_pass_gap_ms = min_pass_gap_ms;
    o.audit_hash = std::move(audit_hash);
    ctl_ = std::make_unique<Controller>(std::move(*j), [this] { return now_.load(); }, o);
    Status s = ctl_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Bootstrap() {
    for (int i = 0; i < 2; ++i) {
      NodeSpec n{"n" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
      ASSERT_TRUE(ctl_->Execute(NodeAdded{n}).has_value());
    }
    TenantSpec t;
    t.path = "team";
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{t}).has_value());
  }
  JobSpec Job(const std::string& name, int gpus, int64_t duration_ms) {
    JobSpec s;
    s.name = name;
    s.tenant = ctl_->Read([](const ClusterState& st) { return st.tenants().Find("team"); });
    s.gpu_resource = ctl_->Read([](const ClusterState& st) { return st.resource_names().Find("gpu/H100-80GB"); });
    s.duration_ms = duration_ms;
    s.groups = {TaskGroup{1, gpus * kGpuUnit, 1000, 1024}};
    return s;
  }
  JobState StateOf(const std::string& name) {
    return ctl_->Read([&](const ClusterState& st) { return st.job(allot::testing::OnlyJobNamed(st, name)).state; });
  }
  // Every job's name, state and placement, as one string.
  std::string Digest() {
    return ctl_->Read([](const ClusterState& st) {
      std::string out;
      for (const allot::Job& j : st.jobs()) {
        out += j.spec.name + ":" + JobStateName(j.state) + ":";
        for (const TaskPlacement& p : j.placement) out += std::to_string(p.node.value()) + "/" + std::to_string(p.gpu_mask) + ",";
        out += "\n";
      }
      return out;
    });
  }

  testing::ScratchDir dir_{"ctl"};
  std::atomic<int64_t> now_{1000};
  std::unique_ptr<Controller> ctl_;
};

TEST_F(ControllerTest, ASubmittedJobIsPlacedInTheSameBatchAndFinishesOnTheSimulatedFleet) {
  StartController();
  Bootstrap();
  auto seq = ctl_->Execute(JobSubmitted{Job("a", 8, 60000)});
  ASSERT_TRUE(seq.has_value()) << seq.error().message();
  EXPECT_EQ(StateOf("a"), JobState::kRunning) << "the batch's pass placed it before the answer";
  now_ += 60000;
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(StateOf("a"), JobState::kFinished);
}

// The pass gap under load is a cap, not a fixed wait: while passes are cheap (a short queue) a
// submit right after a pass is placed at once, not a whole min_pass_gap later (here 10 minutes).
TEST_F(ControllerTest, WithCheapPassesASubmitIsPlacedWithoutWaitingTheWholePassGap) {
  StartController(/*simulate=*/true, /*min_pass_gap_ms=*/600000);
  Bootstrap();
  ASSERT_TRUE(ctl_->Execute(JobSubmitted{Job("a", 1, 60000)}).has_value());
  ASSERT_TRUE(ctl_->Execute(JobSubmitted{Job("b", 1, 60000)}).has_value());
  for (int i = 0; i < 500 && StateOf("b") != JobState::kRunning; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(StateOf("a"), JobState::kRunning);
  EXPECT_EQ(StateOf("b"), JobState::kRunning) << "placed by a pass soon after its submit, the clock not moved";
}

// The agent channel re-runs only the parked polls of the nodes a batch touched: the batch that
// places a job names its node (the pass's events are counted with the command's), a batch of
// tenants' paperwork names none, and one older than the events kept cannot say (nullopt: all).
TEST_F(ControllerTest, EachBatchRemembersTheNodesItTouched) {
  StartController();
  Bootstrap();
  uint64_t before = ctl_->last_seq();
  ASSERT_TRUE(ctl_->Execute(JobSubmitted{Job("a", 8, 600000)}).has_value());
  ASSERT_EQ(StateOf("a"), JobState::kRunning);
  uint64_t placed = ctl_->last_seq();
  NodeId on = ctl_->Read([](const ClusterState& st) { return st.job(allot::testing::OnlyJobNamed(st, "a")).placement[0].node; });
  auto touched = ctl_->NodesTouchedSince(before, placed);
  ASSERT_TRUE(touched.has_value()) << "a submission and its placement can say which nodes";
  EXPECT_EQ(*touched, std::vector<NodeId>{on});

  TenantSpec other;
  other.path = "other";
  ASSERT_TRUE(ctl_->Execute(TenantUpserted{other}).has_value());
  auto paperwork = ctl_->NodesTouchedSince(placed, ctl_->last_seq());
  ASSERT_TRUE(paperwork.has_value());
  EXPECT_TRUE(paperwork->empty()) << "a new tenant touches no node's tasks";

  now_ += 600000;
  ASSERT_TRUE(ctl_->Sync().ok());
  ASSERT_EQ(StateOf("a"), JobState::kFinished);
  auto finished = ctl_->NodesTouchedSince(placed, ctl_->last_seq());
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(*finished, std::vector<NodeId>{on}) << "its end touches the node it held";
  uint64_t ended = ctl_->last_seq();
  ASSERT_TRUE(ctl_->Execute(TenantMoved{"team", "crew"}).has_value());
  EXPECT_EQ(ctl_->NodesTouchedSince(ended, ctl_->last_seq()), std::nullopt) << "a tenant's new path is in every task's answer";
  auto all = ctl_->NodesTouchedSince(0, ended);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 2u) << "both nodes' additions";
}

TEST_F(ControllerTest, ARefusedCommandChangesNothingAndSaysWhy) {
  StartController();
  Bootstrap();
  ASSERT_TRUE(ctl_->Execute(JobSubmitted{Job("a", 1, 1000)}).has_value());
  uint64_t before = ctl_->last_seq();
  std::string digest = Digest();
  auto dup = ctl_->Execute(JobSubmitted{Job("a", 1, 1000)});
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code(), Code::kConflict);
  EXPECT_EQ(dup.error().message(), "job 'a' already exists in tenant 'team'");
  EXPECT_EQ(ctl_->last_seq(), before) << "nothing journaled";
  EXPECT_EQ(Digest(), digest);
}

TEST_F(ControllerTest, ConcurrentSubmissionsAreEachAcknowledgedOnceAndSurviveARestart) {
  StartController(/*simulate=*/false);
  Bootstrap();
  constexpr int kThreads = 8, kPerThread = 100;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> seqs(kThreads);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = ctl_->Execute(JobSubmitted{Job("j" + std::to_string(t) + "-" + std::to_string(i), 1, 3600000)});
        if (r) seqs[t].push_back(*r);
        else ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<uint64_t> distinct;
  for (const auto& v : seqs) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), size_t{kThreads * kPerThread}) << "one journal entry per acknowledged command";
  EXPECT_LT(ctl_->batches(), uint64_t{kThreads * kPerThread}) << "group commit: fewer batches than commands";
  std::string digest = Digest();
  uint64_t last = ctl_->last_seq();
  ctl_->Stop();
  ctl_.reset();
  StartController(/*simulate=*/false);
  EXPECT_EQ(ctl_->last_seq(), last);
  EXPECT_EQ(Digest(), digest) << "a restart replays to the same state";
  EXPECT_EQ(ctl_->Read([](const ClusterState& st) { return st.jobs().size(); }), size_t{kThreads * kPerThread});
  // After a restart nothing is in memory for watchers; the journal serves them, in pages.
  uint64_t oldest = 0;
  EXPECT_TRUE(ctl_->EventsSince(0, std::chrono::milliseconds(0), &oldest).empty());
  EXPECT_EQ(oldest, last + 1);
  auto page = ctl_->JournalEvents(0, 10);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  ASSERT_EQ(page->size(), 10u);
  EXPECT_EQ(page->front().first, 1u);
  EXPECT_EQ(page->back().first, 10u);
  auto tail = ctl_->JournalEvents(last - 3, 1000);
  ASSERT_TRUE(tail.has_value());
  ASSERT_EQ(tail->size(), 3u) << "a short last page";
  EXPECT_EQ(tail->back().first, last);
  EXPECT_TRUE(ctl_->JournalEvents(last, 1000)->empty());
}

// TryRead (the I/O thread's look at the state) reads when the lock is free, also beside another
// reader, and gives nothing, without waiting, while the writer holds it: here a batch held in
// its audit record's hashing, which runs under the writer's lock.
TEST_F(ControllerTest, TryReadGivesNothingWhileTheWriterHoldsTheStateAndReadsOtherwise) {
  std::mutex mu;
  std::condition_variable cv;
  bool hold = false, held = false, release = false;
  StartController(/*simulate=*/true, 0, [&](const std::string&) {
    std::unique_lock lock(mu);
    if (hold) {
      held = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    }
    return std::string("00");
  });
  Bootstrap();
  auto nodes = [](const ClusterState& st) { return st.fleet().size(); };
  EXPECT_EQ(ctl_->TryRead(nodes), std::optional<size_t>(2));
  EXPECT_EQ(ctl_->Read([&](const ClusterState&) { return ctl_->TryRead(nodes); }), std::optional<size_t>(2))
      << "beside another reader";
  {
    std::lock_guard lock(mu);
    hold = true;
  }
  std::thread writer([&] { (void)ctl_->Execute(JobSubmitted{Job("a", 1, 60000)}, AuditContext{"alice", Role::kOrgAdmin, "team", "job.submit", "a", "r1"}); });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return held; });
  }
  EXPECT_EQ(ctl_->TryRead(nodes), std::nullopt) << "the writer holds the state";
  {
    std::lock_guard lock(mu);
    hold = false;
    release = true;
  }
  cv.notify_all();
  writer.join();
  EXPECT_EQ(ctl_->TryRead(nodes), std::optional<size_t>(2));
}

TEST_F(ControllerTest, AStoppedControllerRefusesWrites) {
  StartController();
  ctl_->Stop();
  auto r = ctl_->Execute(JobCancelled{JobId(0)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
  EXPECT_FALSE(ctl_->healthy());
}

}  // namespace
}  // namespace allot
