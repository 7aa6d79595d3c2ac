// allotd's data directory as an operator meets it: a journal lost from a used directory stops
// the start (saying what is missing and what was found) instead of minting a new admin token
// over an empty state, on SQLite and on PostgreSQL, until --init-fresh says so; and the
// directory and the journal's files are private, a looser directory tightened at start.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/free_port.h"
#include "testing/allotd_process.h"
#include "testing/private_postgres.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

mode_t Mode(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class AllotdDataDirTest : public ::testing::Test {
 protected:
  void SetUp() override { port_ = testing::FreeListenPort(); }
  void TearDown() override { testing::StopProcess(pid_, SIGKILL); }

  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    std::vector<std::string> args = {"--listen", "127.0.0.1:" + std::to_string(port_), "--data", data_.string(),
                                     "--tenants", example, "--simulated-fleet", example};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // Starts allotd and waits until it serves.
  void Launch(std::vector<std::string> extra = {}) {
    pid_ = testing::LaunchAllotd(Args(std::move(extra)), dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
  }
  void Stop() { testing::StopProcess(pid_, SIGTERM); }
  // Runs allotd expecting it to refuse to start: its exit code (124 when it served instead and
  // was stopped after 30 s) and what it said.
  std::pair<int, std::string> Refused(std::vector<std::string> extra = {}) {
    std::string cmd = "timeout 30 " + std::string(ALLOTD_BINARY);
    for (const std::string& a : Args(std::move(extra))) cmd += " '" + a + "'";
    fs::path log = dir_ / "refused.log";
    cmd += " 2>" + log.string();
    int rc = std::system(cmd.c_str());
    return {WEXITSTATUS(rc), ReadAll(log)};
  }

  testing::ScratchDir dir_{"allotd-data"};
  fs::path data_ = dir_ / "data";
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(AllotdDataDirTest, AMissingOrEmptyJournalInAUsedDirectoryIsRefusedAndTheAdminTokenKeptUntilInitFresh) {
  Launch();
  Stop();
  std::string token = ReadAll(data_ / "admin-token");
  ASSERT_FALSE(token.empty());
  for (const char* f : {"journal.db", "journal.db-wal", "journal.db-shm"}) fs::remove(data_ / f);

  auto [rc, why] = Refused();
  EXPECT_EQ(rc, 2) << why;
  EXPECT_NE(why.find("the journal " + (data_ / "journal.db").string() + " is missing, but the data directory " +
                     data_.string() + " has been used before (found admin-token, cluster-key)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("--init-fresh"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(data_ / "journal.db")) << "the directory is left as it was found";
  EXPECT_EQ(ReadAll(data_ / "admin-token"), token);

  std::ofstream(data_ / "journal.db").flush();  // truncated to nothing
  auto [rc2, why2] = Refused();
  EXPECT_EQ(rc2, 2) << why2;
  EXPECT_NE(why2.find("journal.db holds no events, but the data directory"), std::string::npos) << why2;
  EXPECT_EQ(ReadAll(data_ / "admin-token"), token);

  Launch({"--init-fresh"});
  Stop();
  EXPECT_NE(ReadAll(dir_ / "allotd.log").find("--init-fresh: starting an empty journal in a used data directory"),
            std::string::npos);
  EXPECT_NE(ReadAll(data_ / "admin-token"), token) << "a new cluster, a new token";

  auto [rc3, why3] = Refused({"--init-fresh"});
  EXPECT_EQ(rc3, 2) << why3;
  EXPECT_NE(why3.find("--init-fresh: the journal " + (data_ / "journal.db").string() + " holds "), std::string::npos)
      << why3;
}

TEST_F(AllotdDataDirTest, AnEmptyPostgresqlJournalBesideAUsedDataDirectoryIsRefused) {
  auto pg = testing::PrivatePostgres::Start();
  ASSERT_TRUE(pg.has_value()) << pg.error().message();
  ASSERT_TRUE((*pg)->Exec("postgres", "CREATE DATABASE allot").ok());
  ASSERT_TRUE((*pg)->Exec("postgres", "CREATE DATABASE other").ok());
  Launch({"--store", (*pg)->Conninfo("allot")});
  Stop();
  std::string token = ReadAll(data_ / "admin-token");
  auto [rc, why] = Refused({"--store", (*pg)->Conninfo("other")});
  EXPECT_EQ(rc, 2) << why;
  EXPECT_NE(why.find("holds no events, but the data directory " + data_.string() + " has been used before (found admin-token, cluster-key)"),
            std::string::npos)
      << why;
  EXPECT_EQ(ReadAll(data_ / "admin-token"), token);
}

TEST_F(AllotdDataDirTest, TheDataDirectoryAndTheJournalAreOwnerOnlyAndALooserDirectoryIsTightenedAtStart) {
  fs::create_directories(data_);
  ASSERT_EQ(::chmod(data_.c_str(), 0755), 0);
  Launch();
  EXPECT_EQ(Mode(data_), 0700u);
  for (const char* f : {"journal.db", "journal.db-wal", "journal.db-shm", "admin-token", "cluster-key"}) {
    EXPECT_EQ(Mode(data_ / f), 0600u) << f;
  }
  Stop();
  // As an older allotd, or a restore, left them.
  ASSERT_EQ(::chmod(data_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((data_ / "journal.db").c_str(), 0644), 0);
  fs::create_directories(data_ / "logs" / "train" / "run-0");
  std::ofstream(data_ / "logs" / "train" / "run-0" / "task-0.log") << "out\n";
  ASSERT_EQ(::chmod((data_ / "logs" / "train" / "run-0" / "task-0.log").c_str(), 0644), 0);
  Launch();
  EXPECT_EQ(Mode(data_), 0700u);
  EXPECT_EQ(Mode(data_ / "journal.db"), 0600u);
  EXPECT_EQ(Mode(data_ / "logs" / "train" / "run-0" / "task-0.log"), 0600u);
  std::string log = ReadAll(dir_ / "allotd.log");
  EXPECT_NE(log.find("made private: " + data_.string() + ": mode 0755 -> 0700"), std::string::npos) << log;
  EXPECT_NE(log.find("made private: " + (data_ / "journal.db").string() + ": mode 0644 -> 0600"), std::string::npos) << log;
}

}  // namespace
}  // namespace allot
