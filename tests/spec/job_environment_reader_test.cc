// A command job's environment (image, mounts, env, shm_size) as a job spec writes it: read into
// JobSpec::environment, or refused naming the field, the value and what was expected.
#include "spec/job_environment_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "spec/scenario.h"

namespace allot {
namespace {

// A command job of research/nlp with one 8Gi task, plus `extra` (JSON members).
std::string Job(const std::string& extra) {
  return R"({"name": "tune", "tenant": "research/nlp", "command": ["python", "tune.py"],
             "tasks": {"cpu": 4, "memory": "8Gi"})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

std::string Refusal(const std::string& body) {
  auto job = ParseJob(body, "body");
  return job ? std::string("accepted") : job.error().message();
}

TEST(JobEnvironmentReader, ReadsEveryFieldResolvingTenantsAndSortingTheVariables) {
  auto job = ParseJob(Job(R"("image": "oci-archive:/srv/images/pt.tar:2.4-cuda",
      "mounts": [{"volume": "datasets", "path": "/data", "read_only": true},
                 {"volume": "research:shared-models", "path": "/models"},
                 {"volume": "research/nlp:scratch", "path": "/scratch"}],
      "env": {"PATH": "/opt/bin:/usr/bin", "HF_HOME": "/data/hf", "EMPTY": ""},
      "shm_size": "1Gi")"),
                      "body");
  ASSERT_TRUE(job.has_value()) << job.error().message();
  const JobEnvironment& e = job->spec.environment;
  EXPECT_EQ(e.image, "oci-archive:/srv/images/pt.tar:2.4-cuda") << "stored as given";
  ASSERT_EQ(e.mounts.size(), 3u);
  EXPECT_EQ(e.mounts[0], (VolumeMount{"research/nlp", "datasets", "/data", true})) << "NAME: the job's own tenant";
  EXPECT_EQ(e.mounts[1], (VolumeMount{"research", "shared-models", "/models", true})) << "an ancestor's: read-only";
  EXPECT_EQ(e.mounts[2], (VolumeMount{"research/nlp", "scratch", "/scratch", false})) << "own, named in full: read-write";
  using Var = std::pair<std::string, std::string>;
  EXPECT_EQ(e.env, (std::vector<Var>{{"EMPTY", ""}, {"HF_HOME", "/data/hf"}, {"PATH", "/opt/bin:/usr/bin"}}));
  EXPECT_EQ(e.shm_size_mib, 1024);
}

TEST(JobEnvironmentReader, AJobWithoutOneHasAnEmptyEnvironment) {
  auto job = ParseJob(Job(""), "body");
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_TRUE(job->spec.environment.empty());
}

TEST(JobEnvironmentReader, AcceptsEachImageForm) {
  for (const char* image : {"/srv/images/pytorch", "/srv/img:with-colon", "oci:/srv/layouts/pt", "oci:/srv/layouts/pt:v1.2_x",
                            "oci-archive:/srv/pt.tar"}) {
    auto job = ParseJob(Job(std::string(R"("image": ")") + image + "\""), "body");
    ASSERT_TRUE(job.has_value()) << image << ": " << job.error().message();
    EXPECT_EQ(job->spec.environment.image, image);
  }
}

struct Case {
  const char* name;
  std::string extra;
  const char* expected;  // the whole message after "body:LINE: "
};

TEST(JobEnvironmentReader, RefusesEachBadFieldNamingItTheValueAndWhatWasExpected) {
  std::string long_name = "N" + std::string(128, 'x');
  std::string long_value(70000, 'v');
  std::string many_vars, many_mounts;
  for (int i = 0; i < 129; ++i) many_vars += (i ? ", " : "") + std::string("\"V") + std::to_string(i) + "\": \"x\"";
  for (int i = 0; i < 33; ++i) {
    many_mounts += (i ? ", " : "") + std::string(R"({"volume": "v", "path": "/m)") + std::to_string(i) + "\"}";
  }
  const Case cases[] = {
      {"relative image", R"("image": "srv/images")", "job.image: 'srv/images': the path is not absolute; expected an absolute path"},
      {"image with ..", R"("image": "/srv/../etc")", "job.image: '/srv/../etc': the path has a '..' component"},
      {"image with .", R"("image": "oci:/srv/./x")", "job.image: 'oci:/srv/./x': the path has a '.' component"},
      {"image with a control character", R"("image": "/srv/a\tb")", "the path has a control character"},
      {"image too long", R"("image": "/)" + std::string(4096, 'a') + "\"", "job.image: 4097 bytes is too long; expected at most 4096"},
      {"bad tag", R"("image": "oci:/srv/pt:v1+x")", "job.image: 'oci:/srv/pt:v1+x': the tag 'v1+x' is not valid; expected 1 to 128"},
      {"empty tag", R"("image": "oci:/srv/pt:")", "the tag '' is not valid"},
      {"mounts not a list", R"("mounts": {"volume": "v"})", "job.mounts: expected a list of {volume, path, read_only}"},
      {"too many mounts", "\"mounts\": [" + many_mounts + "]", "job.mounts: 33 mounts are too many; expected at most 32"},
      {"mount without a volume", R"("mounts": [{"path": "/data"}])", "job.mounts[0].volume: required"},
      {"mount without a path", R"("mounts": [{"volume": "v"}])", "job.mounts[0].path: required"},
      {"unknown mount field", R"("mounts": [{"volume": "v", "path": "/d", "mode": "ro"}])", "job.mounts[0].mode: unknown field"},
      {"bad volume name", R"("mounts": [{"volume": "a b", "path": "/d"}])",
       "job.mounts[0].volume: 'a b': the volume name is not valid; expected NAME or TENANT:NAME"},
      {"volume named ..", R"("mounts": [{"volume": "research:..", "path": "/d"}])", "job.mounts[0].volume: 'research:..': the volume name is not valid"},
      {"volume name too long", R"("mounts": [{"volume": ")" + std::string(65, 'v') + R"(", "path": "/d"}])", "the volume name is not valid"},
      {"a child's volume", R"("mounts": [{"volume": "v", "path": "/a"}, {"volume": "research/nlp/sub:v", "path": "/d"}])",
       "job.mounts[1].volume: 'research/nlp/sub:v' is not a volume this job may mount; expected a volume of the job's own tenant "
       "(research/nlp) or of one of its ancestors"},
      {"a prefix that is no ancestor", R"("mounts": [{"volume": "res:v", "path": "/d"}])", "job.mounts[0].volume: 'res:v' is not a volume this job may mount"},
      {"an empty tenant", R"("mounts": [{"volume": ":v", "path": "/d"}])", "job.mounts[0].volume: ':v' is not a volume this job may mount"},
      {"an ancestor's volume read-write", R"("mounts": [{"volume": "research:models", "path": "/m", "read_only": false}])",
       "job.mounts[0].read_only: false: a volume of an ancestor tenant (research) is mounted read-only; expected true or no read_only"},
      {"read_only not a boolean", R"("mounts": [{"volume": "v", "path": "/m", "read_only": "yes"}])",
       "job.mounts[0].read_only: 'yes' is not valid; expected true or false"},
      {"relative mount path", R"("mounts": [{"volume": "v", "path": "data"}])", "job.mounts[0].path: 'data' is not absolute; expected an absolute, normal path"},
      {"mount path with ..", R"("mounts": [{"volume": "v", "path": "/data/../etc"}])", "job.mounts[0].path: '/data/../etc' has a '..' component"},
      {"mount path with .", R"("mounts": [{"volume": "v", "path": "/data/."}])", "job.mounts[0].path: '/data/.' has a '.' component"},
      {"mount path with //", R"("mounts": [{"volume": "v", "path": "/data//x"}])", "job.mounts[0].path: '/data//x' has an empty component ('//')"},
      {"mount path ending in /", R"("mounts": [{"volume": "v", "path": "/data/"}])", "job.mounts[0].path: '/data/' ends in '/'"},
      {"mount at the root", R"("mounts": [{"volume": "v", "path": "/"}])", "job.mounts[0].path: '/' is the root"},
      {"mount under /proc", R"("mounts": [{"volume": "v", "path": "/proc/x"}])", "job.mounts[0].path: '/proc/x' is under /proc"},
      {"mount at /dev", R"("mounts": [{"volume": "v", "path": "/dev"}])", "job.mounts[0].path: '/dev' is under /dev"},
      {"mount under /sys", R"("mounts": [{"volume": "v", "path": "/sys/fs"}])", "'/sys/fs' is under /sys"},
      {"mount under /tmp", R"("mounts": [{"volume": "v", "path": "/tmp/a"}])", "'/tmp/a' is under /tmp"},
      {"mount path too long", R"("mounts": [{"volume": "v", "path": "/)" + std::string(1024, 'p') + R"("}])", "is longer than 1024 bytes"},
      {"mount path with a control character", R"("mounts": [{"volume": "v", "path": "/a\nb"}])", "has a control character"},
      {"two mounts at one path", R"("mounts": [{"volume": "a", "path": "/d"}, {"volume": "b", "path": "/d"}])",
       "job.mounts[1].path: '/d' is mounted twice; expected one volume per path"},
      {"env not a mapping", R"("env": ["A=1"])", "job.env: expected a mapping of NAME: value"},
      {"env name with a dash", R"("env": {"MY-VAR": "1"})", "job.env.MY-VAR: 'MY-VAR' is not a variable name; expected [A-Za-z_][A-Za-z0-9_]{0,127}"},
      {"env name starting with a digit", R"("env": {"1X": "1"})", "job.env.1X: '1X' is not a variable name"},
      {"env name too long", "\"env\": {\"" + long_name + "\": \"1\"}", "is not a variable name"},
      {"ALLOT_ variable", R"("env": {"ALLOT_JOB": "x"})", "job.env.ALLOT_JOB: 'ALLOT_JOB' is set by allot for the allocation; expected another name"},
      {"CUDA_VISIBLE_DEVICES", R"("env": {"CUDA_VISIBLE_DEVICES": "0"})", "job.env.CUDA_VISIBLE_DEVICES: 'CUDA_VISIBLE_DEVICES' is set by allot"},
      {"NVIDIA_VISIBLE_DEVICES", R"("env": {"NVIDIA_VISIBLE_DEVICES": "all"})", "'NVIDIA_VISIBLE_DEVICES' is set by allot"},
      {"CUDA_MPS_ variable", R"("env": {"CUDA_MPS_PIPE_DIRECTORY": "/x"})", "'CUDA_MPS_PIPE_DIRECTORY' is set by allot"},
      {"LD_PRELOAD", R"("env": {"LD_PRELOAD": "/x.so"})", "'LD_PRELOAD' is set by allot"},
      {"env value with NUL", R"("env": {"A": "x\u0000y"})", "job.env.A: has a NUL byte; expected text without one"},
      {"env value not a scalar", R"("env": {"A": [1]})", "job.env.A: expected a scalar value"},
      {"too many variables", "\"env\": {" + many_vars + "}", "job.env: 129 variables are too many; expected at most 128"},
      {"too many bytes", "\"env\": {\"A\": \"" + long_value + "\"}", "job.env: 70003 bytes in all is too much; expected at most 65536"},
      {"shm_size zero", R"("shm_size": "0Mi")", "job.shm_size: '0Mi' is out of range; expected more than 0, at most 1Ti"},
      {"shm_size without a unit", R"("shm_size": "64")", "job.shm_size: '64' is not a valid memory quantity"},
      {"shm_size past 1Ti", R"("shm_size": "2Ti")", "job.shm_size: '2Ti' is out of range"},
      {"shm_size past the task's memory", R"("shm_size": "9Gi")",
       "job.shm_size: '9Gi' is more than the memory of a task (8Gi); expected at most that"},
  };
  for (const Case& c : cases) {
    std::string msg = Refusal(Job(c.extra));
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.name << ": got '" << msg << "'";
    EXPECT_EQ(msg.rfind("body:", 0), 0u) << c.name << ": names the source and line: " << msg;
  }
}

TEST(JobEnvironmentReader, OnlyACommandJobMayHaveOne) {
  for (const char* field : {R"("image": "/srv/img")", R"("mounts": [{"volume": "v", "path": "/d"}])", R"("env": {"A": "1"})",
                            R"("shm_size": "1Gi")"}) {
    std::string body = R"({"name": "sim", "tenant": "research/nlp", "duration": "1h", "tasks": {"gpus": 1}, )" + std::string(field) + "}";
    std::string msg = Refusal(body);
    std::string key = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
    EXPECT_NE(msg.find("job." + key + ": only a job with a command runs on a node"), std::string::npos) << msg;
  }
}

TEST(JobEnvironmentReader, AScenarioJobWithACommandMayCarryOne) {
  std::string yaml =
      "fleet:\n  - {prefix: h-, count: 1, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
      "tenants: [{path: research}, {path: research/nlp}]\n"
      "jobs:\n"
      "  - name: tune\n    tenant: research/nlp\n    duration: 1h\n    command: [python, tune.py]\n"
      "    tasks: {gpus: 1, memory: 16Gi}\n"
      "    image: oci:/srv/layouts/pt:2.4\n"
      "    mounts:\n      - {volume: research:models, path: /models}\n"
      "    env: {HF_HOME: /models/hf}\n    shm_size: 2Gi\n"
      "  - name: bad\n    tenant: research/nlp\n    duration: 1h\n    tasks: {gpus: 1}\n    shm_size: 2Gi\n";
  std::string msg = ParseScenario(yaml, "env.yaml").error().message();
  EXPECT_EQ(msg, "env.yaml:19: jobs[1].shm_size: only a job with a command runs on a node; expected a command, or no shm_size");
  auto sc = ParseScenario(yaml.substr(0, yaml.find("  - name: bad")), "env.yaml");
  ASSERT_TRUE(sc.has_value()) << sc.error().message();
  EXPECT_EQ(sc->jobs[0].spec.environment.mounts, (std::vector<VolumeMount>{{"research", "models", "/models", true}}));
  EXPECT_EQ(sc->jobs[0].spec.environment.shm_size_mib, 2048);
}

}  // namespace
}  // namespace allot
