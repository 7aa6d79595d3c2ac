// A command job's environment end to end on the control plane: submitted through the API (or
// refused naming the field, with nothing created), shown in the job's view, and handed to the
// node agents with each task's assignment in the form they parse.
#include <gtest/gtest.h>

#include "server/agent_wire.h"
#include "testing/api_fixture.h"
#include "testing/builders.h"

namespace allot {
namespace {

using testing::Cluster;
using testing::JobBuilder;

class JobEnvironmentApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("research");
    AddTenant("research/nlp");
    AddTenant("research/vision");
  }
  // A command job of research/nlp with `extra` (JSON members).
  static std::string Body(const std::string& name, const std::string& extra) {
    return R"({"name": ")" + name + R"(", "tenant": "research/nlp", "command": ["python", "tune.py"],
               "tasks": {"gpus": 1, "memory": "16Gi"}, )" + extra + "}";
  }
  std::string Refusal(const std::string& extra) {
    auto [code, body] = Post("/v1/jobs", Body("refused", extra));
    EXPECT_EQ(code, 400) << body.dump();
    EXPECT_EQ(body["error"]["code"], "invalid_argument") << body.dump();
    return body["error"]["message"].is_string() ? body["error"]["message"].get<std::string>() : body.dump();
  }
  size_t JobCount() { return Get("/v1/jobs").second["jobs"].size(); }
};

TEST_F(JobEnvironmentApiTest, ASubmittedEnvironmentIsKeptAndShownInTheJobsView) {
  auto [code, reply] = Post("/v1/jobs", Body("tune", R"("image": "oci:/srv/layouts/pt:2.4",
      "mounts": [{"volume": "datasets", "path": "/data"}, {"volume": "research:shared-models", "path": "/models"}],
      "env": {"HF_HOME": "/data/hf", "A_FIRST": "1"}, "shm_size": "1Gi")"));
  ASSERT_EQ(code, 201) << reply.dump();
  EXPECT_EQ(reply["environment"]["image"], "oci:/srv/layouts/pt:2.4");
  auto [c2, job] = Get("/v1/jobs/tune");
  ASSERT_EQ(c2, 200) << job.dump();
  const Json& e = job["environment"];
  EXPECT_EQ(e["image"], "oci:/srv/layouts/pt:2.4");
  EXPECT_EQ(e["mounts"], Json::parse(R"([
      {"tenant": "research/nlp", "volume": "datasets", "path": "/data", "read_only": false},
      {"tenant": "research", "volume": "shared-models", "path": "/models", "read_only": true}])"));
  EXPECT_EQ(e["env"], Json::parse(R"({"A_FIRST": "1", "HF_HOME": "/data/hf"})"));
  EXPECT_EQ(e["shm_size"], "1Gi");
  // A job without one has no environment in its view.
  ASSERT_EQ(Post("/v1/jobs", Body("plain", R"("kind": "batch")")).first, 201);
  EXPECT_FALSE(Get("/v1/jobs/plain").second.contains("environment"));
}

TEST_F(JobEnvironmentApiTest, EachBadFieldIsRefusedNamingItAndNothingIsSubmitted) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("image": "images/pt")", "job.image: 'images/pt': the path is not absolute"},
      {R"("mounts": [{"volume": "d", "path": "/data"}, {"volume": "d2", "path": "/proc/self"}])", "job.mounts[1].path: '/proc/self' is under /proc"},
      {R"("mounts": [{"volume": "research:m", "path": "/m", "read_only": false}])", "job.mounts[0].read_only: false"},
      {R"("env": {"CUDA_VISIBLE_DEVICES": "0,1"})", "job.env.CUDA_VISIBLE_DEVICES: 'CUDA_VISIBLE_DEVICES' is set by allot"},
      {R"("shm_size": "32Gi")", "job.shm_size: '32Gi' is more than the memory of a task (16Gi)"},
  };
  for (const auto& [extra, expected] : cases) {
    std::string msg = Refusal(extra);
    EXPECT_NE(msg.find(expected), std::string::npos) << extra << ": got '" << msg << "'";
  }
  auto [code, body] = Post("/v1/jobs", R"({"name": "sim", "tenant": "research/nlp", "duration": "1h", "tasks": {"gpus": 1},
                                          "image": "/srv/img"})");
  EXPECT_EQ(code, 400);
  EXPECT_NE(body.dump().find("job.image: only a job with a command runs on a node"), std::string::npos) << body.dump();
  EXPECT_EQ(JobCount(), 0u) << "nothing created";
}

// A sibling's volume is refused, and the answer reads the same whether the tenant named exists
// (research/vision) or not (research/ghost): a caller learns nothing about other tenants.
TEST_F(JobEnvironmentApiTest, AVolumeOfASiblingTenantIsRefusedWithoutSayingWhetherItExists) {
  std::string sibling = Refusal(R"("mounts": [{"volume": "research/vision:models", "path": "/m"}])");
  std::string ghost = Refusal(R"("mounts": [{"volume": "research/ghost:models", "path": "/m"}])");
  EXPECT_NE(sibling.find("job.mounts[0].volume: 'research/vision:models' is not a volume this job may mount; expected a volume "
                         "of the job's own tenant (research/nlp) or of one of its ancestors"),
            std::string::npos)
      << sibling;
  std::string as_ghost = sibling;
  as_ghost.replace(as_ghost.find("research/vision"), std::string("research/vision").size(), "research/ghost");
  EXPECT_EQ(as_ghost, ghost) << "the same words for a tenant that exists and one that does not";
  for (const std::string& m : {sibling, ghost}) {
    EXPECT_EQ(m.find("exist"), std::string::npos) << m;
    EXPECT_EQ(m.find("unknown"), std::string::npos) << m;
  }
  EXPECT_EQ(JobCount(), 0u);
}

// What allotd writes for a node's agent (DesiredTasks) parses back (ParseAssignments) with the
// environment whole; a job without one adds no key, so an agent that predates them is unaffected.
TEST(JobEnvironmentWireTest, DesiredTasksCarryTheEnvironmentAndParseBackWhole) {
  Cluster c;
  c.AddNodes("h-", 1, "z", "r", 64, 512, testing::kH100, 8);
  c.Tenant("research");
  c.Tenant("research/nlp");
  JobEnvironment env{"oci-archive:/srv/pt.tar:2.4",
                     {{"research/nlp", "datasets", "/data", false}, {"research", "models", "/models", true}},
                     {{"HF_HOME", "/data/hf"}, {"OMP_NUM_THREADS", "8"}},
                     2048};
  c.Submit(JobBuilder("tune").Tenant("research/nlp").Gpus(1).Command({"python", "tune.py"}).Environment(env));
  c.Submit(JobBuilder("plain").Tenant("research/nlp").Gpus(1).Command({"true"}));
  c.RunPass(1000);
  AgentRegistry agents;
  Json desired = DesiredTasks(c.state, c.state.fleet().Find("h-0"), agents);
  ASSERT_EQ(desired["tasks"].size(), 2u) << desired.dump();
  EXPECT_EQ(desired["tasks"][0]["shm_size_mib"], 2048);
  EXPECT_EQ(desired["tasks"][0]["env"], Json::parse(R"({"HF_HOME": "/data/hf", "OMP_NUM_THREADS": "8"})"));
  for (const char* key : {"image", "mounts", "env", "shm_size_mib"}) {
    EXPECT_FALSE(desired["tasks"][1].contains(key)) << key << " left out: " << desired["tasks"][1].dump();
  }
  auto parsed = ParseAssignments(Json::parse(desired.dump()));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  ASSERT_EQ(parsed->size(), 2u);
  const Assignment& a = (*parsed)[0];
  EXPECT_EQ(a.job, "tune");
  EXPECT_EQ(a.image, "oci-archive:/srv/pt.tar:2.4");
  EXPECT_EQ(a.mounts, (std::vector<Assignment::Mount>{{"research/nlp", "datasets", "/data", false},
                                                       {"research", "models", "/models", true}}));
  EXPECT_EQ(a.env, env.env);
  EXPECT_EQ(a.shm_size_mib, 2048);
  const Assignment& b = (*parsed)[1];
  EXPECT_TRUE(b.image.empty() && b.mounts.empty() && b.env.empty());
  EXPECT_EQ(b.shm_size_mib, 0);
}

TEST(JobEnvironmentWireTest, AMalformedEnvironmentInAnAssignmentNamesTheField) {
  auto message = [](const char* task_extra) {
    Json body = Json::parse(std::string(R"({"tasks": [{"job": "j", "tenant": "t", "command": ["x"], )") + task_extra + "}]}");
    auto r = ParseAssignments(body);
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_EQ(message(R"("mounts": [{"tenant": "t", "volume": "v"}])"), "assignments.tasks[0].mounts[0].path: missing");
  EXPECT_EQ(message(R"("mounts": [{"tenant": "t", "volume": "v", "path": "/d", "read_only": "yes"}])"),
            "assignments.tasks[0].mounts[0].read_only: expected true or false");
  EXPECT_EQ(message(R"("env": {"A": 1})"), "assignments.tasks[0].env: A: expected a string");
  EXPECT_EQ(message(R"("env": ["A=1"])"), "assignments.tasks[0].env: expected an object of NAME: value");
  EXPECT_EQ(message(R"("shm_size_mib": -1)"), "assignments.tasks[0].shm_size_mib: -1 is out of range 0 to 9223372036854775807");
  EXPECT_EQ(message(R"("image": 7)"), "assignments.tasks[0].image: expected a string");
}

// An assignment's share is the enum the server wrote, not a string the agent compares: every
// kind round-trips, an absent one is whole (a server before shares), any other is refused.
TEST(AssignmentWireTest, TheShareIsAKindAndAnUnknownOneIsRefusedNamingIt) {
  auto parse = [](const std::string& extra) {
    return ParseAssignments(Json::parse(R"({"tasks": [{"job": "j", "job_id": 7, "task": 1, "run": 2, "tenant": "t", "command": ["x"])" +
                                        extra + "}]}"));
  };
  for (ShareKind k : {ShareKind::kWhole, ShareKind::kMig, ShareKind::kMps, ShareKind::kTimeslice}) {
    auto a = parse(std::string(R"(, "share": ")") + ShareKindName(k) + "\"");
    ASSERT_TRUE(a.has_value()) << a.error().message();
    EXPECT_EQ((*a)[0].share, k);
  }
  auto absent = parse("");
  ASSERT_TRUE(absent.has_value());
  EXPECT_EQ((*absent)[0].share, ShareKind::kWhole);
  EXPECT_EQ((*absent)[0].key(), "j7.1.r2") << "one key per task run, by job id";
  auto bad = parse(R"(, "share": "MIG")");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "assignments.tasks[0].share: 'MIG' is not a share kind; expected whole, mig, mps or timeslice");
}

}  // namespace
}  // namespace allot
