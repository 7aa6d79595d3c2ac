// The SQLite journal: groups are durable and atomic, sequence numbers have no gaps, a reopened
// journal replays exactly what was appended, a simulated run replayed from it rebuilds the
// same state, and it keeps the newest two snapshots (never one newer than its last event).
#include "store/sqlite_journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>

#include "sim/report.h"
#include "sim/simulator.h"
#include "state/event_codec.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

class SqliteJournalTest : public ::testing::Test {
 protected:

  std::unique_ptr<SqliteJournal> Open() {
    auto j = SqliteJournal::Open(path_);
    EXPECT_TRUE(j.has_value()) << j.error().message();
    return j ? std::move(*j) : nullptr;
  }
  static std::vector<std::pair<uint64_t, Event>> All(Journal& j, uint64_t after = 0) {
    std::vector<std::pair<uint64_t, Event>> out;
    Status s = j.Replay(after, [&](uint64_t seq, const Event& e) {
      out.push_back({seq, e});
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  testing::ScratchDir dir_{"journal"};
  std::string path_ = (dir_ / "allot.db").string();
};

Event Finished(uint32_t job, int64_t t) { return {t, JobFinished{JobId(job)}}; }

TEST_F(SqliteJournalTest, AppendsInGroupsAndReplaysAfterReopening) {
  {
    auto j = Open();
    ASSERT_TRUE(j);
    EXPECT_EQ(j->last_seq(), 0u);
    EXPECT_EQ(j->Append({Finished(1, 10), Finished(2, 20)}).value(), 2u);
    EXPECT_EQ(j->Append({}).value(), 2u) << "an empty group appends nothing";
    EXPECT_EQ(j->Append({Finished(3, 30)}).value(), 3u);
  }
  auto j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->last_seq(), 3u);
  auto all = All(*j);
  ASSERT_EQ(all.size(), 3u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].first, i + 1);
    EXPECT_TRUE(all[i].second == Finished(static_cast<uint32_t>(i + 1), 10 * static_cast<int64_t>(i + 1)));
  }
  EXPECT_EQ(All(*j, 2).size(), 1u) << "replay from a sequence number (after a snapshot)";
  EXPECT_EQ(j->Append({Finished(4, 40)}).value(), 4u) << "numbering continues after reopening";
}

TEST_F(SqliteJournalTest, ReplayStopsAtTheFirstErrorAndNamesACorruptRecord) {
  auto j = Open();
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->Append({Finished(1, 1), Finished(2, 2), Finished(3, 3)}).has_value());
  int seen = 0;
  Status s = j->Replay(0, [&](uint64_t seq, const Event&) {
    ++seen;
    return seq == 2 ? InvalidArgument("refused") : Status::Ok();
  });
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(s.message(), "refused");
  // Damage record 2 behind the journal's back.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE events SET body = x'0108' WHERE seq = 2", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  s = j->Replay(0, [](uint64_t, const Event&) { return Status::Ok(); });
  EXPECT_NE(s.message().find("event 2 (event record (JobFinished): truncated at byte 0): checksum"), std::string::npos) << s.ToString();
}

TEST_F(SqliteJournalTest, RefusesAJournalOfAnotherFormat) {
  { ASSERT_TRUE(Open()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '9' WHERE key = 'event_format'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto j = SqliteJournal::Open(path_);
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("written in event format 9; this build reads formats 1 to 8 (a newer allotd wrote it)"), std::string::npos);
}

// A journal written by an allotd of event format 1 opens, replays, and is marked as holding
// format 2 once opened (new records are written in format 2; an older allotd then refuses it).
TEST_F(SqliteJournalTest, AJournalOfAnOlderFormatIsReadAndUpgraded) {
  {
    auto j = Open();
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->Append({Event{5, JobFinished{JobId(7)}}}).has_value());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  // The record as format 1 wrote it (JobFinished has the same fields in both) and the meta row;
  // an allotd of event format 1 also predates checksums (journal format 1).
  ASSERT_EQ(sqlite3_exec(db, "UPDATE events SET body = X'01' || substr(body, 2); "
                             "UPDATE meta SET value = '1' WHERE key = 'event_format'; "
                             "DELETE FROM meta WHERE key = 'journal_format'; ALTER TABLE events DROP COLUMN checksum",
                         nullptr, nullptr, nullptr), SQLITE_OK);
  auto j = SqliteJournal::Open(path_);
  ASSERT_TRUE(j.has_value()) << j.error().message();
  std::vector<Event> seen;
  ASSERT_TRUE((*j)->Replay(0, [&](uint64_t, const Event& e) { seen.push_back(e); return Status::Ok(); }).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(std::get<JobFinished>(seen[0].body).job, JobId(7));
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'event_format'", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), std::to_string(kEventFormat));
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(SqliteJournalTest, ASimulatedRunReplayedFromTheJournalRebuildsTheSameState) {
  auto j = Open();
  ASSERT_TRUE(j);
  SimOptions options;
  Status journaled = Status::Ok();
  options.on_event = [&](const Event& e) {
    auto r = j->Append({e});
    if (!r && journaled.ok()) journaled = r.error();
  };
  auto run = RunScenarioFile(std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml", options, std::nullopt);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_TRUE(journaled.ok()) << journaled.ToString();
  j.reset();
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  SimRun replayed;
  replayed.result = run->result;
  Status s = reopened->Replay(0, [&](uint64_t, const Event& e) { return replayed.state.apply(e); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReportJson(replayed, {.timing = false}), ReportJson(*run, {.timing = false}));
}

TEST_F(SqliteJournalTest, OpeningAPathThatCannotBeADatabaseNamesIt) {
  auto j = SqliteJournal::Open((dir_ / "no-such-dir" / "x.db").string());
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("no-such-dir/x.db: cannot open"), std::string::npos) << j.error().message();
}

TEST_F(SqliteJournalTest, SnapshotsAreSavedDurablyTheNewestTwoKeptAndTheNewestLoaded) {
  {
    auto j = Open();
    ASSERT_TRUE(j);
    auto none = j->LoadSnapshot();
    ASSERT_TRUE(none.has_value()) << none.error().message();
    EXPECT_FALSE(none->has_value()) << "no snapshot yet";
    ASSERT_TRUE(j->Append({Finished(1, 1), Finished(2, 2), Finished(3, 3), Finished(4, 4)}).has_value());
    std::string binary("snap\0shot", 9);  // blobs, not text
    EXPECT_TRUE(j->SaveSnapshot(1, "one").ok());
    EXPECT_TRUE(j->SaveSnapshot(2, "two").ok());
    Status s = j->SaveSnapshot(3, binary);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = j->SaveSnapshot(5, "five");
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("snapshot at event 5: expected 1 to the last event, 4"), std::string::npos) << s.ToString();
  }
  auto j = Open();
  ASSERT_TRUE(j);
  auto newest = j->LoadSnapshot();
  ASSERT_TRUE(newest.has_value()) << newest.error().message();
  ASSERT_TRUE(newest->has_value());
  EXPECT_EQ((*newest)->first, 3u);
  EXPECT_EQ((*newest)->second, std::string("snap\0shot", 9));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT group_concat(seq) FROM (SELECT seq FROM snapshots ORDER BY seq)", -1, &st,
                               nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "2,3") << "only the newest two are kept";
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(SqliteJournalTest, ASnapshotNewerThanTheLastEventIsRefusedOnOpen) {
  {
    auto j = Open();
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->Append({Finished(1, 1), Finished(2, 2), Finished(3, 3)}).has_value());
    ASSERT_TRUE(j->SaveSnapshot(3, "three").ok());
  }
  // The journal loses its last event behind our back: the snapshot saw more than it has.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM events WHERE seq = 3", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto j = SqliteJournal::Open(path_);
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("a snapshot at event 3 is newer than the last event, 2; events are missing"),
            std::string::npos) << j.error().message();
}

// A journal that keeps no snapshots still compiles and says so.
class EventsOnly : public Journal {
 public:
  Result<uint64_t> Append(const std::vector<Event>&) override { return 0; }
  Status Replay(uint64_t, const std::function<Status(uint64_t, const Event&)>&) override { return Status::Ok(); }
  uint64_t last_seq() const override { return 0; }
};

TEST(JournalTest, AJournalWithoutSnapshotsRefusesToSaveOneAndLoadsNone) {
  EventsOnly j;
  EXPECT_EQ(j.SaveSnapshot(1, "x").message(), "this journal does not keep snapshots");
  auto loaded = j.LoadSnapshot();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_FALSE(loaded->has_value());
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

// The journal holds every tenant's jobs, commands, audit log and ledger: whatever the process's
// umask (here the common 022), the file and its -wal and -shm are created owner-only.
TEST(SqliteJournalFiles, TheJournalAndItsWalAndShmAreCreatedReadableByTheirOwnerOnly) {
  testing::ScratchDir dir{"journal-modes"};
  std::string path = (dir / "journal.db").string();
  mode_t old = ::umask(022);
  auto j = SqliteJournal::Open(path);
  ::umask(old);
  ASSERT_TRUE(j.has_value()) << j.error().message();
  ASSERT_TRUE((*j)->Append({Event{1, JobFinished{JobId(1)}}}).has_value());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st;
    ASSERT_EQ(::stat((path + suffix).c_str(), &st), 0) << path << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << path << suffix;
  }
}

// SQLite's in-memory database is not a file: opening it creates none (in the working directory
// or anywhere).
TEST(SqliteJournalFiles, AnInMemoryJournalLeavesNoFileBehind) {
  ASSERT_FALSE(fs::exists(":memory:")) << "left in " << fs::current_path() << " by an earlier run";
  auto j = SqliteJournal::Open(":memory:");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_TRUE((*j)->Append({Event{1, JobFinished{JobId(1)}}}).has_value());
  EXPECT_FALSE(fs::exists(":memory:"));
}

}  // namespace
}  // namespace allot
