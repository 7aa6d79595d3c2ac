// allotd's data directory: made private (0700, everything in it owner-only) with a line for
// each thing tightened, links not followed; what shows it was used before; and when an empty
// journal may start (a new directory, or --init-fresh) and when it is refused.
#include "allotd/data_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

mode_t Mode(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

void Touch(const fs::path& p, mode_t mode) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
  ASSERT_EQ(::chmod(p.c_str(), mode), 0);
}

TEST(DataDirTest, ALooserDirectoryAndEverythingInItAreMadeOwnerOnlyWithALineForEach) {
  testing::ScratchDir scratch{"data-dir"};
  fs::path data = scratch / "data", outside = scratch / "outside";
  fs::create_directories(data);
  ASSERT_EQ(::chmod(data.c_str(), 0755), 0);
  Touch(data / "journal.db", 0644);
  Touch(data / "admin-token", 0600);  // already right: no line
  Touch(data / "logs" / "train" / "run-0" / "task-0.log", 0644);
  Touch(outside, 0644);
  fs::create_symlink(outside, data / "link");

  auto lines = MakeDataDirPrivate(data.string());
  ASSERT_TRUE(lines.has_value()) << lines.error().message();
  EXPECT_EQ(Mode(data), 0700u);
  EXPECT_EQ(Mode(data / "journal.db"), 0600u);
  EXPECT_EQ(Mode(data / "admin-token"), 0600u);
  EXPECT_EQ(Mode(data / "logs"), 0700u);
  EXPECT_EQ(Mode(data / "logs" / "train" / "run-0"), 0700u);
  EXPECT_EQ(Mode(data / "logs" / "train" / "run-0" / "task-0.log"), 0600u);
  EXPECT_EQ(Mode(outside), 0644u) << "a link is not followed";
  std::string all;
  for (const std::string& l : *lines) all += l + "\n";
  EXPECT_THAT(all, HasSubstr(data.string() + ": mode 0755 -> 0700\n"));
  EXPECT_THAT(all, HasSubstr(data.string() + "/journal.db: mode 0644 -> 0600\n"));
  EXPECT_THAT(all, HasSubstr(data.string() + "/logs: mode 0755 -> 0700\n"));
  EXPECT_THAT(all, HasSubstr("3 more entries below " + data.string() + " made owner-only\n"));
  EXPECT_THAT(all, Not(HasSubstr("admin-token")));

  auto again = MakeDataDirPrivate(data.string());
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->empty()) << "nothing left to change";
}

TEST(DataDirTest, ANewDirectoryIsCreatedPrivate) {
  testing::ScratchDir scratch{"data-dir-new"};
  mode_t old = ::umask(022);
  auto lines = MakeDataDirPrivate((scratch / "a" / "data").string());
  ::umask(old);
  ASSERT_TRUE(lines.has_value()) << lines.error().message();
  EXPECT_EQ(Mode(scratch / "a" / "data"), 0700u);
}

TEST(DataDirTest, TheAdminTokenTheLedgerKeyAndTaskLogsShowADirectoryWasUsed) {
  testing::ScratchDir scratch{"data-dir-signs"};
  fs::path data = scratch.path();
  EXPECT_TRUE(SignsOfUse(data.string()).empty());
  fs::create_directories(data / "logs");
  EXPECT_TRUE(SignsOfUse(data.string()).empty()) << "an empty logs directory says nothing";
  Touch(data / "admin-token", 0600);
  Touch(data / "ledger-key", 0600);
  Touch(data / "cluster-key", 0600);
  Touch(data / "logs" / "j" / "run-0" / "task-0.log", 0600);
  EXPECT_THAT(SignsOfUse(data.string()), ElementsAre("admin-token", "ledger-key", "cluster-key", "logs/"));
}

TEST(DataDirTest, TheClusterKeyIsMadeOwnerOnlyOnFirstUseKeptAcrossStartsAndABadOneRefused) {
  testing::ScratchDir scratch{"data-dir-cluster-key"};
  fs::path data = scratch.path();
  auto first = LoadOrCreateClusterKey(data.string());
  ASSERT_TRUE(first.has_value()) << first.error().message();
  EXPECT_EQ(first->size(), 32u);
  EXPECT_EQ(Mode(data / "cluster-key"), 0600u);
  auto again = LoadOrCreateClusterKey(data.string());
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(*again, *first) << "the same secret after a restart";
  testing::ScratchDir other{"data-dir-cluster-key-2"};
  EXPECT_NE(*LoadOrCreateClusterKey(other.path().string()), *first) << "another allotd, another secret";

  std::ofstream(data / "cluster-key") << "0123\n";
  auto bad = LoadOrCreateClusterKey(data.string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Code::kFailedPrecondition);
  EXPECT_THAT(bad.error().message(), HasSubstr((data / "cluster-key").string() + ": not 64 hex digits"));
}

TEST(DataDirTest, AnEmptyJournalStartsInANewDirectoryOrWithInitFreshOnly) {
  FreshStart f{"/var/lib/allot", "/var/lib/allot/journal.db"};
  EXPECT_TRUE(CheckFreshStart(f).ok()) << "a new directory, an empty journal: a first start";

  f.signs = {"admin-token", "logs/"};
  f.journal_missing = true;
  Status missing = CheckFreshStart(f);
  EXPECT_EQ(missing.code(), Code::kFailedPrecondition);
  EXPECT_THAT(missing.message(), HasSubstr("the journal /var/lib/allot/journal.db is missing, but the data directory "
                                           "/var/lib/allot has been used before (found admin-token, logs/)"));
  EXPECT_THAT(missing.message(), HasSubstr("replace admin-token"));
  EXPECT_THAT(missing.message(), HasSubstr("pass --init-fresh"));

  f.journal_missing = false;
  EXPECT_THAT(CheckFreshStart(f).message(), HasSubstr("journal.db holds no events, but"));

  f.init_fresh = true;
  EXPECT_TRUE(CheckFreshStart(f).ok()) << "on purpose";

  f.events = 12;
  Status refused = CheckFreshStart(f);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("--init-fresh: the journal /var/lib/allot/journal.db holds 12 events"));
  f.init_fresh = false;
  EXPECT_TRUE(CheckFreshStart(f).ok()) << "a restart";
}

}  // namespace
}  // namespace allot
