// What every Journal promises, checked against each implementation (SQLite and PostgreSQL):
// groups are all or nothing, sequence numbers start at 1 and have no gaps (across reopening
// too), every event type round-trips, replay works from any point and over journals longer
// than one read batch, and what the journal cannot trust (another format, a damaged record, a
// missing one, a record whose checksum does not match) is refused naming it. A journal written
// before checksums opens and gets them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <optional>

#include "state/event_codec.h"
#include "store/pg_journal.h"
#include "store/record_checksum.h"
#include "store/sqlite_journal.h"
#include "testing/private_postgres.h"
#include "testing/sample_events.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

std::string Hex(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// A backend: where a fresh journal lives for one test, how to open it, and how to change its
// storage behind the journal's back.
class SqliteBackend {
 public:
  static void SetUpTestSuite() {}
  static void TearDownTestSuite() {}
  static Status Ready() { return Status::Ok(); }

  Result<std::unique_ptr<Journal>> Open() {
    auto j = SqliteJournal::Open(path_);
    if (!j) return Err(j.error());
    return std::unique_ptr<Journal>(std::move(*j));
  }
  Status Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    Status out = Status::Ok();
    char* err = nullptr;
    if (sqlite3_open(path_.c_str(), &db) != SQLITE_OK || sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      out = Internal(sql + ": " + (err ? err : sqlite3_errmsg(db)));
    }
    sqlite3_free(err);
    sqlite3_close(db);
    return out;
  }
  Status SetRecord(uint64_t seq, const std::string& hex) {
    return Sql("UPDATE events SET body = x'" + hex + "' WHERE seq = " + std::to_string(seq));
  }
  Status PlantRecord(uint64_t seq) {
    return Sql("INSERT INTO events (seq, body, checksum) VALUES (" + std::to_string(seq) + ", x'00', 0)");
  }
  // The layout of a journal written before checksums (journal format 1), holding `events`.
  Status CreateOldJournal(const std::vector<Event>& events) {
    std::string sql =
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE events (seq INTEGER PRIMARY KEY, body BLOB NOT NULL);"
        "CREATE TABLE snapshots (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);"
        "INSERT INTO meta (key, value) VALUES ('event_format', '" + std::to_string(kEventFormat) + "');";
    sql += "INSERT INTO events (seq, body) VALUES ";
    for (size_t i = 0; i < events.size(); ++i) {
      sql += (i ? ",(" : "(") + std::to_string(i + 1) + ", x'" + Hex(EncodeEvent(events[i])) + "')";
    }
    return Sql(sql);
  }
  // What an allotd older than checksums does to append.
  Status AppendWithoutChecksum(uint64_t seq, const Event& e) {
    return Sql("INSERT INTO events (seq, body) VALUES (" + std::to_string(seq) + ", x'" + Hex(EncodeEvent(e)) + "')");
  }
  Status SetJournalFormat(const std::string& v) {
    return Sql("UPDATE meta SET value = '" + v + "' WHERE key = 'journal_format'");
  }
  Status DeleteRecord(uint64_t seq) { return Sql("DELETE FROM events WHERE seq = " + std::to_string(seq)); }
  Status SetFormat(const std::string& v) { return Sql("UPDATE meta SET value = '" + v + "' WHERE key = 'event_format'"); }

 private:
  testing::ScratchDir dir_{"conformance"};
  std::string path_ = (dir_ / "journal.db").string();
};

// One server for the suite (started once, ~1 s), a fresh database for each test.
class PgBackend {
 public:
  static void SetUpTestSuite() { testing::SuitePostgres::Start(); }
  static void TearDownTestSuite() { testing::SuitePostgres::Stop(); }
  static Status Ready() { return testing::SuitePostgres::Ready(); }

  PgBackend() {
    auto db = testing::SuitePostgres::NewDatabase("journal_");
    EXPECT_TRUE(db.has_value()) << db.error().ToString();
    if (db) db_ = *db;
  }

  Result<std::unique_ptr<Journal>> Open() {
    auto j = PgJournal::Open(testing::SuitePostgres::server().Conninfo(db_));
    if (!j) return Err(j.error());
    return std::unique_ptr<Journal>(std::move(*j));
  }
  Status Sql(const std::string& sql) { return testing::SuitePostgres::server().Exec(db_, sql); }
  Status SetRecord(uint64_t seq, const std::string& hex) {
    return Sql("UPDATE allot_journal SET record = '\\x" + hex + "' WHERE seq = " + std::to_string(seq));
  }
  Status PlantRecord(uint64_t seq) {
    return Sql("INSERT INTO allot_journal (seq, record, checksum) VALUES (" + std::to_string(seq) + ", '\\x00', 0)");
  }
  Status CreateOldJournal(const std::vector<Event>& events) {
    std::string sql =
        "CREATE TABLE allot_meta (key text PRIMARY KEY, value text NOT NULL);"
        "CREATE TABLE allot_journal (seq bigint PRIMARY KEY, record bytea NOT NULL);"
        "CREATE TABLE allot_snapshots (seq bigint PRIMARY KEY, bytes bytea NOT NULL);"
        "INSERT INTO allot_meta (key, value) VALUES ('event_format', '" + std::to_string(kEventFormat) + "');";
    sql += "INSERT INTO allot_journal (seq, record) VALUES ";
    for (size_t i = 0; i < events.size(); ++i) {
      sql += (i ? ",(" : "(") + std::to_string(i + 1) + ", '\\x" + Hex(EncodeEvent(events[i])) + "')";
    }
    return Sql(sql);
  }
  Status AppendWithoutChecksum(uint64_t seq, const Event& e) {
    return Sql("INSERT INTO allot_journal (seq, record) VALUES (" + std::to_string(seq) + ", '\\x" + Hex(EncodeEvent(e)) + "')");
  }
  Status SetJournalFormat(const std::string& v) {
    return Sql("UPDATE allot_meta SET value = '" + v + "' WHERE key = 'journal_format'");
  }
  Status DeleteRecord(uint64_t seq) { return Sql("DELETE FROM allot_journal WHERE seq = " + std::to_string(seq)); }
  Status SetFormat(const std::string& v) { return Sql("UPDATE allot_meta SET value = '" + v + "' WHERE key = 'event_format'"); }

 private:
  std::string db_;
};

template <class Backend>
class JournalConformanceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { Backend::SetUpTestSuite(); }
  static void TearDownTestSuite() { Backend::TearDownTestSuite(); }
  void SetUp() override {
    Status ready = Backend::Ready();
    ASSERT_TRUE(ready.ok()) << ready.message();
    backend_.emplace();
  }

  std::unique_ptr<Journal> Open() {
    auto j = backend_->Open();
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
  static Status ReplayStatus(Journal& j, uint64_t after = 0) {
    return j.Replay(after, [](uint64_t, const Event&) { return Status::Ok(); });
  }

  std::optional<Backend> backend_;
};

using Backends = ::testing::Types<SqliteBackend, PgBackend>;
class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, SqliteBackend> ? "Sqlite" : "Postgres";
  }
};
TYPED_TEST_SUITE(JournalConformanceTest, Backends, BackendNames);

Event Finished(uint32_t job, int64_t t) { return {t, JobFinished{JobId(job)}}; }

// `n` events numbered from `first`, each telling its own number (job id and time).
std::vector<Event> Numbered(uint32_t first, uint32_t n) {
  std::vector<Event> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(Finished(first + i, first + i));
  return out;
}

TYPED_TEST(JournalConformanceTest, AppendsInGroupsAndReplaysFromTheStartOrFromTheMiddle) {
  auto j = this->Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->last_seq(), 0u);
  EXPECT_EQ(j->Append(Numbered(1, 2)).value(), 2u);
  EXPECT_EQ(j->Append({}).value(), 2u) << "an empty group appends nothing";
  EXPECT_EQ(j->Append(Numbered(3, 3)).value(), 5u);
  EXPECT_EQ(j->last_seq(), 5u);
  auto all = this->All(*j);
  ASSERT_EQ(all.size(), 5u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].first, i + 1);
    EXPECT_TRUE(all[i].second == Finished(static_cast<uint32_t>(i + 1), static_cast<int64_t>(i + 1))) << i;
  }
  auto tail = this->All(*j, 3);
  ASSERT_EQ(tail.size(), 2u) << "replay after a snapshot at 3";
  EXPECT_EQ(tail[0].first, 4u);
  EXPECT_TRUE(tail[0].second == Finished(4, 4));
  EXPECT_TRUE(this->All(*j, 5).empty()) << "nothing after the last event";
}

TYPED_TEST(JournalConformanceTest, ReopeningContinuesTheNumberingWithoutGaps) {
  {
    auto j = this->Open();
    ASSERT_TRUE(j);
    ASSERT_EQ(j->Append(Numbered(1, 3)).value(), 3u);
  }
  {
    auto j = this->Open();
    ASSERT_TRUE(j);
    EXPECT_EQ(j->last_seq(), 3u);
    EXPECT_EQ(j->Append(Numbered(4, 2)).value(), 5u) << "numbering continues after reopening";
  }
  auto j = this->Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->last_seq(), 5u);
  auto all = this->All(*j);
  ASSERT_EQ(all.size(), 5u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].first, i + 1);
    EXPECT_TRUE(all[i].second == Finished(static_cast<uint32_t>(i + 1), static_cast<int64_t>(i + 1))) << i;
  }
}

TYPED_TEST(JournalConformanceTest, EveryEventTypeRoundTripsFieldForField) {
  std::vector<Event> events = testing::OneOfEach();
  ASSERT_EQ(events.size(), std::variant_size_v<EventBody>);
  {
    auto j = this->Open();
    ASSERT_TRUE(j);
    ASSERT_EQ(j->Append(events).value(), events.size());
  }
  auto j = this->Open();
  ASSERT_TRUE(j);
  auto all = this->All(*j);
  ASSERT_EQ(all.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) EXPECT_TRUE(all[i].second == events[i]) << EventTypeName(events[i]);
}

// 24,000 events: groups of several INSERT statements (PgJournal::kRowsPerInsert) and a replay
// of several read batches (kReplayBatch) plus a partial one.
TYPED_TEST(JournalConformanceTest, LongJournalsReplayInOrderAcrossReadBatches) {
  auto j = this->Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append(Numbered(1, 12000)).value(), 12000u);
  ASSERT_EQ(j->Append(Numbered(12001, 12000)).value(), 24000u);
  for (uint64_t after : {0u, 10005u, 23999u}) {
    uint64_t next = after + 1;
    Status s = j->Replay(after, [&](uint64_t seq, const Event& e) {
      if (seq != next || !(e == Finished(static_cast<uint32_t>(seq), static_cast<int64_t>(seq)))) {
        return Internal("event " + std::to_string(seq) + " where " + std::to_string(next) + " was due");
      }
      ++next;
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << "after " << after << ": " << s.ToString();
    EXPECT_EQ(next, 24001u) << "after " << after;
  }
}

// A group that fails part-way (here: a record already at seq 2,403, planted behind the
// journal's back, makes the insert conflict) leaves nothing behind, and last_seq unchanged.
TYPED_TEST(JournalConformanceTest, AGroupThatFailsPartWayLeavesNothingBehind) {
  auto j = this->Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append(Numbered(1, 3)).value(), 3u);
  ASSERT_TRUE(this->backend_->PlantRecord(2403).ok());
  auto failed = j->Append(Numbered(4, 2500));
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find("journal "), std::string::npos) << failed.error().message();
  EXPECT_EQ(j->last_seq(), 3u);
  Status gap = this->ReplayStatus(*j);
  EXPECT_NE(gap.message().find("event 4 is missing (next is 2403)"), std::string::npos)
      << "nothing of the failed group was kept: " << gap.ToString();
  ASSERT_TRUE(this->backend_->DeleteRecord(2403).ok());
  EXPECT_EQ(j->Append(Numbered(4, 2500)).value(), 2503u) << "the same group goes through once the conflict is gone";
  EXPECT_EQ(this->All(*j).size(), 2503u);
}

TYPED_TEST(JournalConformanceTest, AMissingEventIsNamedOnReplay) {
  auto j = this->Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append(Numbered(1, 5)).value(), 5u);
  ASSERT_TRUE(this->backend_->DeleteRecord(3).ok());
  int seen = 0;
  Status s = j->Replay(0, [&](uint64_t, const Event&) {
    ++seen;
    return Status::Ok();
  });
  EXPECT_EQ(seen, 2) << "events before the gap are delivered";
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("event 3 is missing (next is 4)"), std::string::npos) << s.ToString();
  EXPECT_EQ(this->All(*j, 3).size(), 2u) << "a replay that starts past the gap does not need it";
}

TYPED_TEST(JournalConformanceTest, ReplayStopsAtTheFirstErrorAndNamesADamagedRecord) {
  auto j = this->Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append(Numbered(1, 3)).value(), 3u);
  int seen = 0;
  Status s = j->Replay(0, [&](uint64_t seq, const Event&) {
    ++seen;
    return seq == 2 ? InvalidArgument("refused") : Status::Ok();
  });
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(s.message(), "refused");
  ASSERT_TRUE(this->backend_->SetRecord(2, "0108").ok());  // a JobFinished cut short
  s = this->ReplayStatus(*j);
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("event 2 (event record (JobFinished): truncated at byte 0): checksum "), std::string::npos) << s.ToString();
}

// One byte of a stored record changed behind the journal's back (here a job's name, "train" to
// "trail"): the record still decodes, but its checksum gives it away, and the replay stops
// there naming the event's number and type rather than deliver a renamed job.
TYPED_TEST(JournalConformanceTest, AChangedByteInAStoredEventStopsTheReplayNamingItsNumberAndType) {
  std::vector<Event> events = testing::OneOfEach();
  uint64_t at = 0;
  for (size_t i = 0; i < events.size() && at == 0; ++i) {
    if (std::holds_alternative<JobSubmitted>(events[i].body)) at = i + 1;
  }
  ASSERT_GT(at, 1u);
  Event renamed = events[at - 1];
  ASSERT_EQ(std::get<JobSubmitted>(renamed.body).spec.name, "train");
  std::get<JobSubmitted>(renamed.body).spec.name = "trail";
  ASSERT_EQ(EncodeEvent(renamed).size(), EncodeEvent(events[at - 1]).size()) << "one byte differs, no more";
  auto j = this->Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append(events).value(), events.size());
  ASSERT_TRUE(this->backend_->SetRecord(at, Hex(EncodeEvent(renamed))).ok());
  j.reset();  // a restart
  j = this->Open();
  ASSERT_TRUE(j);
  uint64_t delivered = 0;
  Status s = j->Replay(0, [&](uint64_t seq, const Event& e) {
    delivered = seq;
    if (auto* sub = std::get_if<JobSubmitted>(&e.body)) {
      EXPECT_NE(sub->spec.name, "trail");
    }
    return Status::Ok();
  });
  EXPECT_EQ(s.code(), Code::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("event " + std::to_string(at) + " (JobSubmitted): checksum "), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("the record changed after it was written"), std::string::npos) << s.ToString();
  EXPECT_EQ(delivered, at - 1) << "the events before it, not it";
}

// A journal written before checksums (journal format 1: no checksum column) opens: each event
// gets the checksum of what it holds, and says so once; the events replay as they were, a later
// change is caught, and an allotd older than checksums can no longer append to it. 12,000
// events: PostgreSQL fills the column in batches of kReplayBatch.
TYPED_TEST(JournalConformanceTest, AJournalWrittenBeforeChecksumsOpensAndGetsThem) {
  std::vector<Event> events = Numbered(1, 12000);
  ASSERT_TRUE(this->backend_->CreateOldJournal(events).ok());
  {
    auto j = this->Open();
    ASSERT_TRUE(j);
    EXPECT_NE(j->opened_note().find("upgraded to journal format 2: checksums added to its 12000 events"), std::string::npos)
        << j->opened_note();
    EXPECT_EQ(j->last_seq(), 12000u);
    auto all = this->All(*j);
    ASSERT_EQ(all.size(), 12000u);
    for (size_t i = 0; i < all.size(); ++i) ASSERT_TRUE(all[i].second == events[i]) << i;
    EXPECT_EQ(j->Append(Numbered(12001, 1)).value(), 12001u);
  }
  auto j = this->Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->opened_note(), "") << "upgraded once";
  EXPECT_EQ(this->All(*j).size(), 12001u);
  EXPECT_FALSE(this->backend_->AppendWithoutChecksum(12002, Finished(12002, 12002)).ok()) << "the column is NOT NULL";
  ASSERT_TRUE(this->backend_->SetRecord(2, Hex(EncodeEvent(Finished(9, 2)))).ok());
  Status s = this->ReplayStatus(*j);
  EXPECT_NE(s.message().find("event 2 (JobFinished): checksum "), std::string::npos) << s.ToString();
}

TYPED_TEST(JournalConformanceTest, RefusesAJournalOfANewerLayout) {
  { ASSERT_TRUE(this->Open()); }
  ASSERT_TRUE(this->backend_->SetJournalFormat("3").ok());
  auto j = this->backend_->Open();
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().code(), Code::kFailedPrecondition);
  EXPECT_NE(j.error().message().find("written in journal format 3; this build reads formats 1 to 2 (a newer allotd wrote it)"),
            std::string::npos)
      << j.error().message();
}

TYPED_TEST(JournalConformanceTest, RefusesAJournalOfAnotherFormat) {
  { ASSERT_TRUE(this->Open()); }
  ASSERT_TRUE(this->backend_->SetFormat("9").ok());
  auto j = this->backend_->Open();
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().code(), Code::kFailedPrecondition);
  EXPECT_NE(j.error().message().find("written in event format 9; this build reads formats 1 to 8 (a newer allotd wrote it)"), std::string::npos)
      << j.error().message();
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

TYPED_TEST(JournalConformanceTest, SnapshotsAreKeptDurablyAndTheNewestLoads) {
  {
    auto j = this->Open();
    ASSERT_TRUE(j);
    auto none = j->LoadSnapshot();
    ASSERT_TRUE(none.has_value()) << none.error().message();
    EXPECT_FALSE(none->has_value()) << "no snapshot yet";
    ASSERT_TRUE(j->Append(Numbered(1, 4)).has_value());
    EXPECT_TRUE(j->SaveSnapshot(1, "one").ok());
    EXPECT_TRUE(j->SaveSnapshot(2, "two").ok());
    Status s = j->SaveSnapshot(3, std::string("snap\0shot", 9));  // bytes, not text
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = j->SaveSnapshot(5, "five");
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("snapshot at event 5: expected 1 to the last event, 4"), std::string::npos) << s.ToString();
  }
  auto j = this->Open();
  ASSERT_TRUE(j);
  auto newest = j->LoadSnapshot();
  ASSERT_TRUE(newest.has_value()) << newest.error().message();
  ASSERT_TRUE(newest->has_value());
  EXPECT_EQ((*newest)->first, 3u);
  EXPECT_EQ((*newest)->second, std::string("snap\0shot", 9));
  EXPECT_EQ(this->All(*j, (*newest)->first).size(), 1u) << "the tail after it";
}

}  // namespace
}  // namespace allot
