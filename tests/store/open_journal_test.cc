// One --store value picks the journal: SQLite under the data directory by default, PostgreSQL
// for a libpq URL or key=value conninfo, a clear refusal for anything else.
#include "store/open_journal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/private_postgres.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

class OpenJournalTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::SuitePostgres::Start(); }
  static void TearDownTestSuite() { testing::SuitePostgres::Stop(); }

  testing::ScratchDir dir_{"open-journal"};
};

Event Finished(uint32_t job) { return {job, JobFinished{JobId(job)}}; }

TEST_F(OpenJournalTest, TheDefaultIsSqliteInTheDataDirectory) {
  std::string data = (dir_ / "data").string();  // created if absent
  for (std::string store : {"", "sqlite"}) {
    auto j = OpenJournal(store, data);
    ASSERT_TRUE(j.has_value()) << "'" << store << "': " << j.error().message();
    ASSERT_TRUE((*j)->Append({Finished(1)}).has_value());
    EXPECT_TRUE(std::filesystem::exists(dir_ / "data" / "journal.db")) << "where allotd has always kept it";
    EXPECT_EQ(DescribeStore(store, data), (dir_ / "data" / "journal.db").string());
  }
  auto j = OpenJournal("sqlite", data);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)->last_seq(), 2u) << "both spellings name the same journal";
}

TEST_F(OpenJournalTest, APostgresUrlOrKeyValueConninfoOpensPostgres) {
  ASSERT_TRUE(testing::SuitePostgres::Ready().ok()) << testing::SuitePostgres::Ready().message();
  testing::PrivatePostgres& server = testing::SuitePostgres::server();
  std::string port = std::to_string(server.port());
  std::string data = (dir_ / "data").string();
  for (std::string store : {"postgresql://postgres@127.0.0.1:" + port + "/postgres",
                            "postgres://postgres@127.0.0.1:" + port + "/postgres", server.Conninfo("postgres"),
                            "dbname=postgres user=postgres host=127.0.0.1 port=" + port}) {
    auto j = OpenJournal(store, data);
    ASSERT_TRUE(j.has_value()) << store << ": " << j.error().message();
    ASSERT_TRUE((*j)->Append({Finished(1)}).has_value());
    EXPECT_EQ(DescribeStore(store, data).rfind("postgresql (host=127.0.0.1 port=" + port, 0), 0u) << DescribeStore(store, data);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "data")) << "PostgreSQL leaves the data directory alone";
  auto j = OpenJournal(server.Conninfo("postgres"), data);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)->last_seq(), 4u) << "all four spellings name the same journal";
}

TEST_F(OpenJournalTest, AnythingElseIsRefusedNamingTheValueAndTheFormsExpected) {
  auto j = OpenJournal("mysql", (dir_ / "data").string());
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().code(), Code::kInvalidArgument);
  EXPECT_EQ(j.error().message(),
            "store: 'mysql' is not known; expected sqlite (the default), a PostgreSQL URL such as "
            "postgresql://allot@db1/allot, or libpq key=value pairs such as 'host=db1 dbname=allot'");
  j = OpenJournal("postgresq://allot:hunter2@db1/allot", (dir_ / "data").string());
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().message().find("hunter2"), std::string::npos) << "a mistyped URL keeps its password: "
                                                                    << j.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "data")) << "a refused store creates nothing";
}

}  // namespace
}  // namespace allot
