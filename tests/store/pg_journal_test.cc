// What only the PostgreSQL journal does: one writer per database (the advisory lock that makes
// active/passive HA safe), a clean failure when the server goes away, and errors about a bad
// conninfo that say what is wrong without repeating its password. The Journal contract itself
// is checked in journal_conformance_test.cc.
#include "store/pg_journal.h"

#include <gtest/gtest.h>

#include "testing/private_postgres.h"

namespace allot {
namespace {

class PgJournalTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::SuitePostgres::Start(); }
  static void TearDownTestSuite() { testing::SuitePostgres::Stop(); }
  void SetUp() override {
    ASSERT_TRUE(testing::SuitePostgres::Ready().ok()) << testing::SuitePostgres::Ready().message();
    server_ = &testing::SuitePostgres::server();
    auto db = testing::SuitePostgres::NewDatabase("pg_journal_");
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    db_ = *db;
  }

  std::unique_ptr<PgJournal> Open() {
    auto j = PgJournal::Open(server_->Conninfo(db_));
    EXPECT_TRUE(j.has_value()) << j.error().message();
    return j ? std::move(*j) : nullptr;
  }

  testing::PrivatePostgres* server_ = nullptr;
  std::string db_;
};

Event Finished(uint32_t job) { return {job, JobFinished{JobId(job)}}; }

TEST_F(PgJournalTest, ASecondWriterIsRefusedWhileTheFirstHoldsTheLock) {
  auto first = Open();
  ASSERT_TRUE(first);
  auto second = PgJournal::Open(server_->Conninfo(db_));
  ASSERT_FALSE(second.has_value()) << "two writers on one journal";
  EXPECT_EQ(second.error().code(), Code::kUnavailable) << "a standby retries";
  std::string where = "postgresql (host=127.0.0.1 port=" + std::to_string(server_->port()) + " dbname=" + db_ + " user=postgres)";
  EXPECT_NE(second.error().message().find("another allotd holds the journal lock on " + where), std::string::npos)
      << second.error().message();
  ASSERT_EQ(first->Append({Finished(1)}).value(), 1u) << "the holder keeps writing";
  first.reset();
  auto third = Open();
  ASSERT_TRUE(third) << "the lock goes with the first writer's session";
  EXPECT_EQ(third->last_seq(), 1u);
}

// A restarted allotd opens the journal the moment the old one has closed it. The server drops
// a session's locks only when its backend exits, after the client has gone, so the journal
// unlocks before it disconnects; without that, a reopen at once sometimes found the lock held.
TEST_F(PgJournalTest, AClosedJournalCanBeReopenedAtOnce) {
  for (int i = 0; i < 40; ++i) {
    auto j = PgJournal::Open(server_->Conninfo(db_));
    ASSERT_TRUE(j.has_value()) << "reopen " << i << ": " << j.error().message();
  }
}

TEST_F(PgJournalTest, ASnapshotNewerThanTheLastEventIsRefusedOnOpenAndOnlyTheNewestTwoAreKept) {
  {
    auto j = Open();
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->Append({Finished(1), Finished(2), Finished(3)}).has_value());
    for (uint64_t seq : {1, 2, 3}) ASSERT_TRUE(j->SaveSnapshot(seq, "s" + std::to_string(seq)).ok());
  }
  // The journal loses its last event behind our back: the snapshot saw more than it has.
  ASSERT_TRUE(server_->Exec(db_, "DO $$ BEGIN IF (SELECT count(*) FROM allot_snapshots) <> 2 THEN "
                                 "RAISE EXCEPTION 'expected the newest two snapshots'; END IF; END $$").ok());
  ASSERT_TRUE(server_->Exec(db_, "DELETE FROM allot_journal WHERE seq = 3").ok());
  auto j = PgJournal::Open(server_->Conninfo(db_));
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("a snapshot at event 3 is newer than the last event, 2; events are missing"),
            std::string::npos) << j.error().message();
}

TEST_F(PgJournalTest, TheLockIsPerDatabase) {
  auto first = Open();
  ASSERT_TRUE(first);
  std::string other = db_ + "_other";
  ASSERT_TRUE(server_->Exec("postgres", "CREATE DATABASE " + other).ok());
  auto second = PgJournal::Open(server_->Conninfo(other));
  EXPECT_TRUE(second.has_value()) << "two deployments, two databases: " << second.error().message();
}

TEST_F(PgJournalTest, AnAppendAgainstAStoppedServerFailsAndLeavesLastSeqUnchanged) {
  auto j = Open();
  ASSERT_TRUE(j);
  ASSERT_EQ(j->Append({Finished(1), Finished(2)}).value(), 2u);
  Status stopped = server_->Stop();
  ASSERT_TRUE(stopped.ok()) << stopped.ToString();
  auto r = j->Append({Finished(3)});
  Status replay = j->Replay(0, [](uint64_t, const Event&) { return Status::Ok(); });
  Status restarted = server_->StartServer();  // before any ASSERT: later tests share the server
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  ASSERT_FALSE(r.has_value()) << "appended to a stopped server";
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
  EXPECT_NE(r.error().message().find("appending events 3 to 3"), std::string::npos) << r.error().message();
  EXPECT_EQ(j->last_seq(), 2u);
  EXPECT_FALSE(replay.ok()) << "replay from a stopped server";
  // No reconnection: the lock went with the session (see pg_journal.h).
  EXPECT_FALSE(j->Append({Finished(3)}).has_value()) << "a journal that lost its session stays failed";
  j.reset();
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->last_seq(), 2u) << "nothing of the failed group reached the database";
  EXPECT_EQ(reopened->Append({Finished(3)}).value(), 3u);
}

TEST_F(PgJournalTest, AnUnreachableServerIsNamedWithoutThePassword) {
  // Port 1 on loopback: refused at once.
  for (std::string conninfo : {"postgresql://allot:s3cretpw@127.0.0.1:1/allot",
                               "host=127.0.0.1 port=1 dbname=allot user=allot password=s3cretpw",
                               "host=127.0.0.1 port=1 dbname=allot user=allot password='s3cretpw'"}) {
    auto j = PgJournal::Open(conninfo);
    ASSERT_FALSE(j.has_value()) << conninfo;
    const std::string& m = j.error().message();
    EXPECT_EQ(j.error().code(), Code::kUnavailable);
    EXPECT_NE(m.find("journal postgresql (host=127.0.0.1 port=1 dbname=allot user=allot): cannot connect: "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("Connection refused"), std::string::npos) << "PostgreSQL's reason: " << m;
    EXPECT_EQ(m.find("s3cretpw"), std::string::npos) << m;
  }
}

TEST_F(PgJournalTest, AnUnparseableConninfoGivesLibpqsReasonWithoutThePassword) {
  // libpq quotes the offending token, here the password itself.
  auto j = PgJournal::Open("postgresql://allot:s3cret%zzpw@127.0.0.1/allot");
  ASSERT_FALSE(j.has_value());
  const std::string& m = j.error().message();
  EXPECT_NE(m.find("journal postgresql (an unparseable conninfo): cannot connect: invalid percent-encoded token"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;

  j = PgJournal::Open("host=127.0.0.1 nosuchoption=1");
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("invalid connection option \"nosuchoption\""), std::string::npos)
      << j.error().message();
}

TEST_F(PgJournalTest, AWrongDatabaseNameIsNamed) {
  auto j = PgJournal::Open(server_->Conninfo("no_such_db"));
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message().find("dbname=no_such_db"), std::string::npos) << j.error().message();
  EXPECT_NE(j.error().message().find("database \"no_such_db\" does not exist"), std::string::npos)
      << j.error().message();
}

}  // namespace
}  // namespace allot
