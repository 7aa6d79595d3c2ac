// End to end, a job's own environment on the node: an image (a busybox root filesystem
// directory, and the same image as an OCI layout unpacked by umoci) run with the host driver's
// (fake) library files bound in at their host paths; the tenant's volumes from --storage-root
// (its own read-write, an ancestor's read-only); env: and shm_size:. Real allotd and agents.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/agent_e2e_fixture.h"
#include "testing/fake_image.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using testing::AgentE2eTest;

constexpr const char* kTenants = "tenants:\n  - {path: research}\n  - {path: research/nlp}\n";

class AgentEnvironmentTest : public AgentE2eTest {
 protected:
  void SetUp() override {
    AgentE2eTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: image roots are overlays the agent mounts as root";
    image_ = (dir_ / "image").string();
    ASSERT_TRUE(testing::MakeBusyboxImage(image_));
    // The host driver's libraries, as a fake linker cache lists them.
    driver_ = std::make_unique<testing::FakeDriverFiles>(std::vector<std::string>{"libcuda.so.1", "libnvidia-ml.so.1"});
    libs_ = driver_->dir();
    ldconfig_ = (dir_ / "ldconfig").string();
    std::ofstream(ldconfig_) << "#!/bin/sh\necho '2 libs found in cache'\n"
                             << "printf '\\tlibcuda.so.1 (libc6,x86-64) => " << libs_ << "/libcuda.so.1\\n'\n"
                             << "printf '\\tlibnvidia-ml.so.1 (libc6,x86-64) => " << libs_ << "/libnvidia-ml.so.1\\n'\n";
    fs::permissions(ldconfig_, fs::perms(0755));
    storage_ = (dir_ / "storage").string();
    fs::create_directories(storage_ + "/research/models");
    std::ofstream(storage_ + "/research/models/README") << "shared by research\n";
  }
  std::unique_ptr<testing::FakeDriverFiles> driver_;
  std::string image_, libs_, ldconfig_, storage_;
};

TEST_F(AgentEnvironmentTest, AnImageJobRunsInItsBusyboxRootWithTheDriverLibrariesAndItsGpuNodes) {
  StartAllotd(kTenants);
  StartAgent("gpu-img", "", {"--ldconfig", ldconfig_});
  WaitReady("gpu-img");
  Submit("img", "research/nlp",
         "cat /etc/allot-image; cat " + libs_ + "/libcuda.so.1; readlink " + libs_ +
             "/libcuda.so; cat /etc/ld.so.conf.d/000-allot-nvidia.conf; test -e /etc/debian_version && echo HOST-ROOT; "
             "echo nodes: $(cd /dev && echo nvidia*); echo LD=$LD_LIBRARY_PATH; echo CUDA=$CUDA_VISIBLE_DEVICES",
         R"({"gpus": 1})", R"("image": ")" + image_ + R"(/rootfs")");
  WaitState("img", "finished");
  std::string log = WaitLog("img", "CUDA=");
  EXPECT_NE(log.find("allot busybox test image"), std::string::npos) << log;
  EXPECT_NE(log.find("fake libcuda.so.1"), std::string::npos) << "the driver's file at its host path:\n" << log;
  EXPECT_NE(log.find("libcuda.so.1\n" + libs_ + "\n"), std::string::npos) << "the libcuda.so link and ld.so.conf.d:\n" << log;
  EXPECT_EQ(log.find("HOST-ROOT"), std::string::npos) << log;
  EXPECT_NE(log.find("nodes: nvidia-uvm nvidia-uvm-tools nvidia"), std::string::npos) << log;
  EXPECT_EQ(EnvLines(log)["CUDA"].rfind("GPU-", 0), 0u) << log;
  EXPECT_EQ(EnvLines(log)["LD"], libs_) << "ld.so reads no ld.so.conf.d: the driver's directory is searched by name\n" << log;
}

TEST_F(AgentEnvironmentTest, AnOciLayoutIsUnpackedOnTheNodeAndItsImageEnvironmentComesWithIt) {
  if (!fs::exists(image_ + "/layout/index.json")) GTEST_SKIP() << "SKIPPED LOUDLY: umoci missing, no OCI layout";
  StartAllotd(kTenants);
  StartAgent("gpu-oci", "", {"--ldconfig", ldconfig_});
  WaitReady("gpu-oci");
  Submit("oci", "research/nlp", "echo IMAGE=$IMAGE_NAME; echo ALLOT=$ALLOT_JOB_NAME; cat /etc/allot-image", R"({"gpus": 0, "cpu": 1})",
         R"("image": "oci:)" + image_ + R"(/layout:v1")");
  WaitState("oci", "finished");
  std::string log = WaitLog("oci", "allot busybox test image");
  auto env = EnvLines(log);
  EXPECT_EQ(env["IMAGE"], "busybox-test") << log;
  EXPECT_EQ(env["ALLOT"], "oci") << log;
  // Unpacked once, by the manifest's digest.
  bool found = false;
  for (const auto& e : fs::directory_iterator(dir_ / "gpu-oci" / "work" / "images" / "oci"))
    found |= e.path().filename().string().rfind("sha256-", 0) == 0;
  EXPECT_TRUE(found);
}

TEST_F(AgentEnvironmentTest, AnImageThatTakesLongerThanTheLeaseToUnpackDoesNotCostTheNodeItsLease) {
  if (!fs::exists(image_ + "/layout/index.json")) GTEST_SKIP() << "SKIPPED LOUDLY: umoci missing, no OCI layout";
  // umoci taking 5 s, past the agent's 2 s lease (3 s node timeout): an agent that waited for it
  // in its loop would stop heartbeating, be declared lost and its job requeued.
  const std::string slow = (dir_ / "slow-umoci").string();
  std::ofstream(slow) << "#!/bin/sh\nsleep 5\nexec umoci \"$@\"\n";
  fs::permissions(slow, fs::perms(0755));
  StartAllotd(kTenants, {"--node-timeout", "3s"});
  StartAgent("gpu-slow", "", {"--umoci", slow});
  WaitReady("gpu-slow");
  Submit("big-image", "research/nlp", "cat /etc/allot-image", R"({"gpus": 0, "cpu": 1})",
         R"("image": "oci:)" + image_ + R"(/layout:v1")");
  WaitState("big-image", "finished", 40);
  EXPECT_EQ(Job("big-image").value("requeues", 0), 0) << Job("big-image").dump();  // shown when not 0
  EXPECT_EQ(Condition("gpu-slow"), "ready");
  EXPECT_NE(ReadFile(dir_ / "gpu-slow" / "agent.log").find("unpacking its image"), std::string::npos);
  EXPECT_EQ(ReadFile(dir_ / "gpu-slow" / "agent.log").find("fenced"), std::string::npos);
}

TEST_F(AgentEnvironmentTest, VolumesEnvAndShmSizeReachTheTaskAndAnAncestorsVolumeIsReadOnly) {
  StartAllotd(kTenants);
  StartAgent("gpu-vol", "", {"--storage-root", storage_});
  WaitReady("gpu-vol");
  Submit("vol", "research/nlp",
         "echo made > /data/out && echo wrote-own; cat /models/README; touch /models/x 2>/dev/null || echo models-read-only; "
         "echo FOO=$FOO; df -k /dev/shm | tail -1 | awk '{print \"shm=\" $2}'",
         R"({"gpus": 0, "cpu": 1, "memory": "256Mi"})",
         R"("mounts": [{"volume": "datasets", "path": "/data"}, {"volume": "research:models", "path": "/models"}],
            "env": {"FOO": "bar"}, "shm_size": "64Mi")");
  WaitState("vol", "finished");
  std::string log = WaitLog("vol", "shm=");
  EXPECT_NE(log.find("wrote-own"), std::string::npos) << log;
  EXPECT_NE(log.find("shared by research"), std::string::npos) << log;
  EXPECT_NE(log.find("models-read-only"), std::string::npos) << log;
  auto env = EnvLines(log);
  EXPECT_EQ(env["FOO"], "bar") << log;
  EXPECT_EQ(env["shm"], "65536") << log;
  // The tenant's own volume was made under the storage root and holds what the task wrote.
  const fs::path out = fs::path(storage_) / "research%2Fnlp" / "datasets" / "out";
  EXPECT_EQ(ReadFile(out), "made\n");
  EXPECT_FALSE(fs::exists(fs::path(storage_) / "research" / "models" / "x"));
}

TEST_F(AgentEnvironmentTest, AVolumeOfAnotherTenantIsRefusedAtSubmitNamingTheField) {
  StartAllotd("tenants:\n  - {path: research}\n  - {path: prod}\n");
  auto [code, body] = Call("POST", "/v1/jobs",
                           R"({"name": "steal", "tenant": "research", "command": ["/bin/true"], "tasks": {"gpus": 0, "cpu": 1},
                               "mounts": [{"volume": "prod:secrets", "path": "/s"}]})");
  EXPECT_EQ(code, 400) << body.dump();
  EXPECT_NE(body.dump().find("mounts[0].volume"), std::string::npos) << body.dump();
  EXPECT_EQ(Get("/v1/jobs/steal").value("state", ""), "") << "nothing was created";
}

}  // namespace
}  // namespace allot
