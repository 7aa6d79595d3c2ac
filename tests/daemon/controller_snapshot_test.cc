// Snapshots in the controller: the writer saves them as the journal crosses each multiple of
// snapshot_every, a restart restores the newest and replays the tail to the same state as a
// replay of everything, and a snapshot that is damaged, or that the tail does not fit, costs
// only a full replay, never the start.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <mutex>

#include "daemon/controller.h"
#include "state/snapshot.h"
#include "store/sqlite_journal.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

class ControllerSnapshotTest : public ::testing::Test {
 protected:
  std::unique_ptr<Controller> Start(const fs::path& db, uint64_t snapshot_every) {
    auto j = SqliteJournal::Open(db.string());
    EXPECT_TRUE(j.has_value()) << j.error().message();
    if (!j) return nullptr;
    ControllerOptions o;
    o.snapshot_every = snapshot_every;
    o.log = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      log_ += line + "\n";
    };
    auto c = std::make_unique<Controller>(std::move(*j), [this] { return now_.load(); }, o);
    Status s = c->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }
  std::string Log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  static std::string Encoded(const Controller& c) {
    return c.Read([](const ClusterState& st) { return EncodeSnapshot(st); });
  }
  // The journal at `db` replayed from its first event.
  static std::string FullReplay(const fs::path& db) {
    auto j = SqliteJournal::Open(db.string());
    EXPECT_TRUE(j.has_value());
    ClusterState state;
    Status s = (*j)->Replay(0, [&](uint64_t, const Event& e) { return state.apply(e); });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return EncodeSnapshot(state);
  }
  static void Sql(const fs::path& db, const std::string& sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
    sqlite3_close(h);
  }
  // Two nodes of 8 GPUs, a tenant, 32 one-GPU jobs (16 run, the rest wait), some cancelled and
  // some finished: about 70 events.
  void Work(Controller& c) {
    for (int i = 0; i < 2; ++i) {
      NodeSpec n{"n" + std::to_string(i), "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
      ASSERT_TRUE(c.Execute(NodeAdded{n}).has_value());
    }
    TenantSpec t;
    t.path = "team";
    ASSERT_TRUE(c.Execute(TenantUpserted{t}).has_value());
    for (int i = 0; i < 32; ++i) {
      JobSpec s;
      s.name = "j" + std::to_string(i);
      s.tenant = TenantId(1);
      s.gpu_resource = kFirstGpu;
      s.duration_ms = 3600000;
      s.groups = {TaskGroup{1, kGpuUnit, 1000, 1024}};
      ASSERT_TRUE(c.Execute(JobSubmitted{s}).has_value());
      if (i % 5 == 4) {
        ASSERT_TRUE(c.Execute(JobCancelled{JobId(static_cast<uint32_t>(i - 1))}).has_value());
      }
      JobId done(static_cast<uint32_t>(i - 6));
      bool running = i % 7 == 6 && c.Read([&](const ClusterState& st) { return st.job(done).state == JobState::kRunning; });
      if (running) {
        ASSERT_TRUE(c.Execute(JobFinished{done}).has_value());
      }
    }
    ASSERT_TRUE(c.Sync().ok());
  }

  testing::ScratchDir dir_{"ctl-snap"};
  std::atomic<int64_t> now_{1000};
  std::mutex mu_;
  std::string log_;
};

TEST_F(ControllerSnapshotTest, ARestartFromASnapshotServesTheSameStateAsReplayingEverything) {
  const fs::path db = dir_ / "allot.db", copy = dir_ / "copy.db";
  {
    auto a = Start(db, 10);
    ASSERT_TRUE(a);
    Work(*a);
    ASSERT_GT(a->last_seq(), 50u);
  }
  EXPECT_NE(Log().find("snapshot at event "), std::string::npos) << Log();
  {
    // An event after the newest snapshot, so the restart has a tail to replay.
    auto j = SqliteJournal::Open(db.string());
    ASSERT_TRUE(j.has_value());
    auto snap = (*j)->LoadSnapshot();
    ASSERT_TRUE(snap.has_value() && snap->has_value()) << "a snapshot was saved";
    EXPECT_GE((*snap)->first, 40u);
    ASSERT_TRUE((*j)->Append({{2000, JobCancelled{JobId(31)}}}).has_value());
  }
  fs::copy_file(db, copy);
  Sql(copy, "DELETE FROM snapshots");

  auto restored = Start(db, 0);
  auto replayed = Start(copy, 0);
  ASSERT_TRUE(restored && replayed);
  EXPECT_NE(Log().find("restored the snapshot at event "), std::string::npos) << Log();
  // One pass on each, at the same time, over what should be the same state.
  ASSERT_TRUE(restored->Sync().ok());
  ASSERT_TRUE(replayed->Sync().ok());
  restored->Stop();
  replayed->Stop();
  EXPECT_EQ(restored->last_seq(), replayed->last_seq());
  EXPECT_EQ(Encoded(*restored), Encoded(*replayed));
  EXPECT_EQ(restored->Read([](const ClusterState& s) { return s.job(JobId(31)).state; }), JobState::kCancelled)
      << "the tail was replayed";
  restored.reset();
  EXPECT_EQ(FullReplay(db), Encoded(*replayed));
}

TEST_F(ControllerSnapshotTest, ADamagedSnapshotFallsBackToAFullReplay) {
  const fs::path db = dir_ / "allot.db";
  {
    auto a = Start(db, 10);
    ASSERT_TRUE(a);
    Work(*a);
  }
  Sql(db, "UPDATE snapshots SET bytes = substr(bytes, 1, length(bytes) - 3)");
  auto b = Start(db, 0);
  ASSERT_TRUE(b);
  b->Stop();
  EXPECT_NE(Log().find("does not restore (snapshot: truncated: the body is"), std::string::npos) << Log();
  EXPECT_NE(Log().find("replaying the whole journal"), std::string::npos);
  EXPECT_EQ(Encoded(*b), FullReplay(db));
}

TEST_F(ControllerSnapshotTest, ASnapshotTheTailDoesNotFitFallsBackToAFullReplay) {
  const fs::path db = dir_ / "allot.db";
  {
    auto a = Start(db, 0);
    ASSERT_TRUE(a);
    Work(*a);
  }
  {
    // A snapshot that decodes but is wrong: an empty state labelled as the one before the last
    // event, which names a job the empty state does not have.
    auto j = SqliteJournal::Open(db.string());
    ASSERT_TRUE(j.has_value());
    ASSERT_TRUE((*j)->Append({{2000, JobCancelled{JobId(30)}}}).has_value());
    ASSERT_TRUE((*j)->SaveSnapshot((*j)->last_seq() - 1, EncodeSnapshot(ClusterState())).ok());
  }
  auto b = Start(db, 0);
  ASSERT_TRUE(b);
  b->Stop();
  EXPECT_NE(Log().find("do not apply"), std::string::npos) << Log();
  EXPECT_EQ(Encoded(*b), FullReplay(db));
  EXPECT_EQ(b->Read([](const ClusterState& s) { return s.jobs().size(); }), 32u);
}

}  // namespace
}  // namespace allot
