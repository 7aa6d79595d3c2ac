// A job's own root filesystem: image names, OCI layouts unpacked once into the cache by their
// manifest digest, and a task run by the real runner (bubblewrap, the tenant's uid) in a busybox
// root made by scripts/busybox-image, with fake driver library files bound in at their host
// paths. Mounting a task's overlay root needs root; without it those tests skip and say so.
#include "agent/run/image_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/run/driver_files.h"
#include "agent/runner_fixture.h"
#include "testing/fake_image.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using testing::RunnerTest;

TEST(ImageRefTest, ADirectoryALayoutWithATagAndAnArchiveAreTheThreeForms) {
  auto dir = ParseImageRef("/srv/images/py");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->kind, ImageRef::Kind::kDirectory);
  auto layout = ParseImageRef("oci:/srv/layouts/py:2.3-cuda12");
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->kind, ImageRef::Kind::kOciLayout);
  EXPECT_EQ(layout->path, "/srv/layouts/py");
  EXPECT_EQ(layout->tag, "2.3-cuda12");
  auto archive = ParseImageRef("oci-archive:/srv/py.tar");
  ASSERT_TRUE(archive);
  EXPECT_EQ(archive->tag, "latest");
  for (const char* bad : {"images/py", "/srv/../etc", "oci:/srv/py:bad tag", "/srv/a,b", ""}) {
    auto r = ParseImageRef(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_THAT(r.error().message(), HasSubstr("image '" + std::string(bad) + "'"));
    }
  }
}

TEST(ImageRefTest, TheManifestDigestIsFoundByTagAndAMissingTagNamesThoseThere) {
  const std::string index = R"({"schemaVersion":2,"manifests":[
    {"digest":"sha256:aaa","annotations":{"org.opencontainers.image.ref.name":"v1"}},
    {"digest":"sha256:bbb","annotations":{"org.opencontainers.image.ref.name":"v2"}}]})";
  EXPECT_EQ(*ManifestDigestFor(index, "v2"), "sha256:bbb");
  auto missing = ManifestDigestFor(index, "v3");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("it has v1, v2"));
  EXPECT_THAT(ImageEnv(R"({"process":{"env":["PATH=/opt/bin:/bin","A=b=c"]}})"),
              ElementsAre(Pair("PATH", "/opt/bin:/bin"), Pair("A", "b=c")));
}

TEST(DriverFilesTest, TheDriversSixtyFourBitLibrariesAreTakenFromTheLinkerCache) {
  const std::string ldconfig =
      "3 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n"
      "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n"
      "\tlibnvidia-encode.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-encode.so.1\n"
      "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n";
  // Not the CUDA runtime (the image brings its own), not 32-bit, not other libraries.
  EXPECT_THAT(DriverLibrariesIn(ldconfig),
              ElementsAre("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-encode.so.1",
                          "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"));
}

class ImageTaskTest : public RunnerTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: mounting a task's overlay root needs root";
    if (!testing::BwrapAvailable()) GTEST_SKIP() << "SKIPPED LOUDLY: no bwrap";
    image_ = (dir_ / "image").string();
    ASSERT_TRUE(testing::MakeBusyboxImage(image_));
    files_ = std::make_unique<testing::FakeDriverFiles>(std::vector<std::string>{"libcuda.so.1"});
    driver_ = files_->dir();
  }
  std::unique_ptr<testing::FakeDriverFiles> files_;
  std::string image_, driver_;
};

TEST_F(ImageTaskTest, ATaskRunsInItsImageWithTheDriverFilesBoundInAndTheImageCacheStaysAsItWas) {
  for (SandboxMode mode : {SandboxMode::kBwrap, SandboxMode::kNative}) {
  SCOPED_TRACE(mode == SandboxMode::kBwrap ? "bwrap" : "allot's own sandbox");
  if (std::string why = testing::SandboxMissing(mode); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    continue;
  }
  auto runner = Make(mode);
  ASSERT_TRUE(runner);
  const std::string lib = driver_ + "/libcuda.so.1";
  TaskLaunch l = Sh(Launch("img", {}),
                    "cat /etc/allot-image; cat " + lib + "; ls " + fs::path(lib).parent_path().string() +
                        " | grep -cx libcuda.so.1 | sed 's/^/libs:/'; test -e /etc/debian_version && echo HOST-ROOT; "
                        "cat /etc/ld.so.conf.d/000-allot-nvidia.conf; readlink " +
                        fs::path(lib).parent_path().string() + "/libcuda.so; touch /new 2>/dev/null || echo read-only; "
                        "echo work=$(pwd)");
  l.image_rootfs = image_ + "/rootfs";
  l.read_only_binds = {{lib, lib}};
  l.image_links = {{fs::path(lib).parent_path().string() + "/libcuda.so", "libcuda.so.1"}};
  l.image_files = {{"/etc/ld.so.conf.d/000-allot-nvidia.conf", fs::path(lib).parent_path().string() + "\n"}};
  ASSERT_TRUE(runner->Start(l));
  auto e = WaitFor(*runner, "img");
  ASSERT_TRUE(e);
  const std::string log = *ReadText(l.log_path);
  EXPECT_EQ(e->exit_code, 0) << log;
  EXPECT_THAT(log, HasSubstr("allot busybox test image"));  // the image's file
  EXPECT_THAT(log, HasSubstr("fake libcuda"));               // the host's driver file, at its host path
  EXPECT_THAT(log, HasSubstr("libs:1"));
  EXPECT_THAT(log, Not(HasSubstr("HOST-ROOT")));              // not the host's root
  EXPECT_THAT(log, HasSubstr(fs::path(lib).parent_path().string() + "\nlibcuda.so.1\n"));
  EXPECT_THAT(log, HasSubstr("read-only"));
  EXPECT_THAT(log, HasSubstr("work=" + l.work_dir));
  // Nothing of the task is left in the image or mounted.
  EXPECT_FALSE(fs::exists(image_ + "/rootfs/etc/ld.so.conf.d"));
  EXPECT_FALSE(fs::exists(image_ + "/rootfs" + lib));
  EXPECT_FALSE(fs::exists(fs::path(root()).parent_path() / "roots" / "img"));
  }
}

TEST_F(ImageTaskTest, ACommandTheImageLacksIsRefusedNamingTheImagesPath) {
  auto runner = Make(SandboxMode::kBwrap);
  ASSERT_TRUE(runner);
  TaskLaunch l = Launch("nopython", {"python3", "-c", "print(1)"});
  l.image_rootfs = image_ + "/rootfs";
  auto pid = runner->Start(l);
  ASSERT_FALSE(pid);
  EXPECT_THAT(pid.error().message(), HasSubstr("'python3' not found in the image's PATH="));
}

TEST_F(ImageTaskTest, AnOciLayoutIsUnpackedOnceByItsDigestAndItsEnvironmentComesWithIt) {
  if (!fs::exists(image_ + "/layout/index.json")) GTEST_SKIP() << "SKIPPED LOUDLY: umoci missing, no OCI layout";
  ImageCache cache((dir_ / "cache").string());
  auto first = cache.Get("oci:" + image_ + "/layout:v1");
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first->id.rfind("sha256:", 0), 0u);
  EXPECT_EQ(first->rootfs, (dir_ / "cache" / "oci").string() + "/sha256-" + first->id.substr(7) + "/rootfs");
  EXPECT_TRUE(fs::exists(first->rootfs + "/bin/busybox"));
  EXPECT_THAT(first->env, ::testing::Contains(Pair("IMAGE_NAME", "busybox-test")));
  // A second cache (an agent restart) finds it unpacked: same root, no second unpack.
  const auto made = fs::last_write_time(first->rootfs);
  ImageCache again((dir_ / "cache").string(), "/nonexistent/umoci");
  auto second = again.Get("oci:" + image_ + "/layout:v1");
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(second->rootfs, first->rootfs);
  EXPECT_EQ(fs::last_write_time(second->rootfs), made);
  // The archive form reaches the same content-addressed root.
  auto archive = cache.Get("oci-archive:" + image_ + "/image.tar:v1");
  ASSERT_TRUE(archive) << archive.error().ToString();
  EXPECT_EQ(archive->rootfs, first->rootfs);
  auto missing = cache.Get("oci:" + image_ + "/layout:v9");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("tag 'v9' is not in the layout (it has v1)"));
}

}  // namespace
}  // namespace allot
