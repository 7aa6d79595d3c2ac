// The agent's side of a job's environment: volumes resolved under --storage-root and checked
// again (a node does not trust the control plane alone with another tenant's data), variables
// ordered so the platform's win, the driver's files bound into an image root.
#include "agent/node/job_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Assignment Job(const std::string& tenant) {
  Assignment a;
  a.job = "j";
  a.tenant = tenant;
  return a;
}

TEST(JobEnvironmentTest, OwnVolumesAreWritableAndMadeAnAncestorsAreReadOnlyAndAnotherTenantsAreRefused) {
  testing::ScratchDir dir("jobenv");
  const std::string root = dir.path().string();
  fs::create_directories(root + "/research/models");
  JobEnvironmentContext ctx{nullptr, root, nullptr};
  Assignment a = Job("research/nlp");
  a.mounts = {{"research/nlp", "data", "/data", false}, {"research", "models", "/models", false}};
  TaskLaunch l;
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, l).ok());
  EXPECT_THAT(l.writable_binds, ElementsAre(Pair(root + "/research%2Fnlp/data", "/data")));
  EXPECT_THAT(l.read_only_binds, ElementsAre(Pair(root + "/research/models", "/models")));  // asked rw: still ro
  EXPECT_TRUE(fs::is_directory(root + "/research%2Fnlp/data"));

  Assignment foreign = Job("research/nlp");
  foreign.mounts = {{"prod", "secrets", "/s", true}};
  TaskLaunch l2;
  Status s = ApplyJobEnvironment(foreign, ctx, l2);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("mounts[0].volume 'prod:secrets'"));
  EXPECT_TRUE(l2.read_only_binds.empty());

  Assignment sibling_prefix = Job("research-x");  // "research-x" is not below "research"
  sibling_prefix.mounts = {{"research", "models", "/m", true}};
  TaskLaunch l3;
  EXPECT_EQ(ApplyJobEnvironment(sibling_prefix, ctx, l3).code(), Code::kPermissionDenied);

  Assignment escape = Job("research");
  escape.mounts = {{"research", "..", "/m", true}};
  EXPECT_EQ(ApplyJobEnvironment(escape, ctx, l3).code(), Code::kInvalidArgument);
  JobEnvironmentContext none{nullptr, "", nullptr};
  EXPECT_THAT(ApplyJobEnvironment(a, none, l3).message(), HasSubstr("no --storage-root"));
}

// Seen on an H100 VM: the driver's libraries live in /usr/local/nvidia/lib64, which ld.so searches
// only when told (it never reads ld.so.conf.d at run time). An image task gets that directory
// after its own search path; a loader default is left out.
TEST(JobEnvironmentTest, AnImageTaskSearchesTheDriversOwnDirectoriesAfterItsOwnPath) {
  testing::ScratchDir dir("jobenv");
  fs::create_directories(dir.path() / "rootfs");
  ImageCache images((dir.path() / "images").string(), "umoci");
  DriverFiles driver;
  driver.libraries = {"/usr/local/nvidia/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                      "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1"};
  JobEnvironmentContext ctx{.driver = &driver, .images = &images};
  Assignment a = Job("research");
  a.image = (dir.path() / "rootfs").string();
  a.env = {{"LD_LIBRARY_PATH", "/opt/app/lib"}};
  TaskLaunch l;
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, l).ok());
  EXPECT_THAT(l.env, ElementsAre(Pair("LD_LIBRARY_PATH", "/opt/app/lib"),
                                 Pair("LD_LIBRARY_PATH", "/opt/app/lib:/usr/local/nvidia/lib64")));
  EXPECT_THAT(l.image_files, ElementsAre(Pair("/etc/ld.so.conf.d/000-allot-nvidia.conf",
                                              "/usr/lib/x86_64-linux-gnu\n/usr/local/nvidia/lib64\n")));

  a.env.clear();  // none of its own: the driver's alone
  TaskLaunch own_none;
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, own_none).ok());
  EXPECT_THAT(own_none.env, ElementsAre(Pair("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64")));

  driver.libraries = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1"};  // a default directory: nothing to add
  TaskLaunch in_default;
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, in_default).ok());
  EXPECT_TRUE(in_default.env.empty());

  a.image.clear();  // the host's root: its own ld.so.cache already knows the driver
  TaskLaunch host;
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, host).ok());
  EXPECT_TRUE(host.env.empty());
}

TEST(JobEnvironmentTest, TheJobsVariablesComeBeforeThePlatformsSoThePlatformWins) {
  JobEnvironmentContext ctx;
  Assignment a = Job("research");
  a.env = {{"CUDA_VISIBLE_DEVICES", "all"}, {"HF_HOME", "/data/hf"}};  // allotd refuses the first; the node still wins
  a.shm_size_mib = 512;
  TaskLaunch l;
  l.env = {{"CUDA_VISIBLE_DEVICES", "GPU-1"}};
  ASSERT_TRUE(ApplyJobEnvironment(a, ctx, l).ok());
  EXPECT_THAT(l.env, ElementsAre(Pair("CUDA_VISIBLE_DEVICES", "all"), Pair("HF_HOME", "/data/hf"),
                                 Pair("CUDA_VISIBLE_DEVICES", "GPU-1")));  // the runner keeps the last of a name
  EXPECT_EQ(l.shm_size_mib, 512);
  EXPECT_TRUE(TenantWithin("research/nlp", "research"));
  EXPECT_FALSE(TenantWithin("research", "research/nlp"));
}

}  // namespace
}  // namespace allot
