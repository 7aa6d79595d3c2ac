// Whether a tenant's uid can reach the agent's directories: the first directory on the way that it
// may not search, by the owner's, the group's or the others' bits, and the message that names it.
#include "agent/run/reachable.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kTenant = 200000;

class ReachableTest : public ::testing::Test {
 protected:
  // <scratch>/locked/agent/tenants, with `locked` of `mode`.
  fs::path Locked(fs::perms mode) {
    fs::create_directories(dir_ / "locked" / "agent" / "tenants");
    fs::permissions(dir_ / "locked", mode);
    return dir_ / "locked" / "agent" / "tenants";
  }
  testing::ScratchDir dir_{"reachable"};
};

TEST_F(ReachableTest, ADirectoryClosedToOthersStopsAUidThatNeitherOwnsItNorIsInItsGroup) {
  fs::path tenants = Locked(fs::perms::owner_all);
  auto blocked = FirstUnsearchable(tenants.string(), kTenant, kTenant);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->dir, (dir_ / "locked").string());
  EXPECT_EQ(blocked->mode, 0700u);
  EXPECT_EQ(blocked->owner, ::geteuid());

  Status s = CheckTaskUidReaches("--work-dir", "/shown/agent", tenants.string(), kTenant);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "--work-dir /shown/agent: tasks run as uid 200000, which cannot enter " +
                             (dir_ / "locked").string() + " (mode 0700, owner " + std::to_string(::geteuid()) + ")");
}

TEST_F(ReachableTest, TheOthersSearchBitAloneLetsAnyUidThrough) {
  fs::path tenants = Locked(fs::perms::owner_all | fs::perms::others_exec);
  EXPECT_FALSE(FirstUnsearchable(tenants.string(), kTenant, kTenant).has_value());
  EXPECT_TRUE(CheckTaskUidReaches("--work-dir", "x", tenants.string(), kTenant).ok());
}

TEST_F(ReachableTest, TheOwnersAndTheGroupsBitsCountForTheirOwnUidAndGroupOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to another uid needs root";
  fs::path tenants = Locked(fs::perms::owner_all | fs::perms::group_exec);
  ASSERT_EQ(::chown((dir_ / "locked").c_str(), 0, kTenant), 0);
  EXPECT_FALSE(FirstUnsearchable(tenants.string(), kTenant, kTenant).has_value()) << "its group may search it";
  EXPECT_TRUE(FirstUnsearchable(tenants.string(), kTenant + 1, kTenant + 1).has_value()) << "others may not";

  fs::permissions(dir_ / "locked", fs::perms::owner_all);
  ASSERT_EQ(::chown((dir_ / "locked").c_str(), kTenant, 0), 0);
  EXPECT_FALSE(FirstUnsearchable(tenants.string(), kTenant, kTenant).has_value()) << "its owner may search it";
  fs::permissions(dir_ / "locked", fs::perms::group_exec | fs::perms::others_exec);
  EXPECT_TRUE(FirstUnsearchable(tenants.string(), kTenant, kTenant).has_value())
      << "the owner's own bits decide for the owner, not the group's or the others'";
}

TEST_F(ReachableTest, ASymlinkIsFollowedToTheDirectoryItNames) {
  fs::path tenants = Locked(fs::perms::owner_all);
  fs::create_symlink(dir_ / "locked" / "agent", dir_ / "link");
  auto blocked = FirstUnsearchable((dir_ / "link" / "tenants").string(), kTenant, kTenant);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->dir, (dir_ / "locked").string());
}

}  // namespace
}  // namespace allot
