// A bad scenario is refused before anything runs, with file, line, field path and what was
// expected.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/generate.h"
#include "spec/scenario.h"
#include "sim/simulator.h"

namespace allot {
namespace {

const char* kFleet =
    "fleet:\n"
    "  - {prefix: h-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n";

std::string Refusal(const std::string& yaml) {
  auto sc = ParseScenario(yaml, "bad.yaml");
  if (!sc) return sc.error().message();
  auto run = RunScenario(std::move(*sc), {}, std::nullopt);
  if (!run) return run.error().message();
  return "";
}

struct Case {
  const char* name;
  std::string yaml;
  std::string expected;  // substring of the message
};

TEST(ScenarioReader, RefusesBadScenariosNamingFileLineFieldAndExpectation) {
  const Case cases[] = {
      {"malformed YAML", "fleet: [\n  - {prefix: a\n", "bad.yaml:"},
      {"unknown top-level field", std::string(kFleet) + "jobz: []\n", "bad.yaml:3: jobz: unknown field; expected one of"},
      {"unknown job field", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: 1}, colour: red}\n",
       "bad.yaml:5: jobs[0].colour: unknown field"},
      {"negative quantity", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: -1}}\n",
       "bad.yaml:5: jobs[0].tasks.gpus: '-1' is not a valid GPU quantity: must not be negative"},
      {"non-numeric quantity", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {cpu: lots}}\n",
       "jobs[0].tasks.cpu: 'lots' is not a valid quantity"},
      {"memory without unit", "fleet:\n  - {prefix: h-, count: 1, cpu: 8, memory: 64}\n",
       "bad.yaml:2: fleet[0].memory: '64' is not a valid memory quantity: expected a number with unit Mi, Gi or Ti"},
      {"unknown GPU model", "fleet:\n  - {prefix: h-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: H900, count: 8}}\n",
       "fleet[0].gpus.model: unknown GPU model 'H900'"},
      {"unknown tenant", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: nobody, duration: 1h, tasks: {gpus: 1}}\n",
       "bad.yaml:5: jobs[j].tenant: unknown tenant 'nobody'"},
      {"child before parent", std::string(kFleet) + "tenants: [{path: a/b}]\n", "parent 'a' does not exist"},
      {"children's guarantees past parent's",
       std::string(kFleet) + "tenants:\n  - {path: a, guarantee: {gpu/H100-80GB: 4}}\n  - {path: a/b, guarantee: {gpu/H100-80GB: 3}}\n  - {path: a/c, guarantee: {gpu/H100-80GB: 2}}\n",
       "guarantees under 'a' would sum to 5, past its guarantee of 4"},
      {"guarantees past the fleet", std::string(kFleet) + "tenants:\n  - {path: a, guarantee: {gpu/H100-80GB: 17}}\n",
       "top-level guarantees for gpu/H100-80GB sum to 17, more than the fleet has (16)"},
      {"child max past parent's",
       std::string(kFleet) + "tenants:\n  - {path: a, max: {gpu/H100-80GB: 4}}\n  - {path: a/b, max: {gpu/H100-80GB: 8}}\n",
       "max.gpu/H100-80GB: 8 exceeds the max of parent 'a' (4)"},
      {"bad topology", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, topology: ring, tasks: {gpus: 1}}\n",
       "jobs[0].topology: 'ring' is not valid; expected none, nvlink, rack or zone"},
      {"duplicate job names", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: 1}}\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: 1}}\n",
       "bad.yaml:6: jobs[1].name: 'j' is used twice"},
      {"a job name with a slash", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: a/b, tenant: t, duration: 1h, tasks: {gpus: 1}}\n",
       "bad.yaml:5: jobs[0].name: 'a/b' has the character '/'; expected 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit"},
      {"a repeated job's names past 63 bytes", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: " + std::string(62, 'j') +
       ", tenant: t, duration: 1h, repeat: 2, tasks: {gpus: 1}}\n", "jobs[0].name (with -1 added by repeat): '" + std::string(62, 'j') + "-1' is 64 bytes long"},
      {"a tenant path with ..", std::string(kFleet) + "tenants: [{path: t}, {path: t/..}]\n",
       "bad.yaml:3: tenants[1].path: 't/..' has a segment '..' that does not start with a letter or digit"},
      {"a node prefix with an escape", "fleet:\n  - {prefix: \"h\\e[2J\", count: 1, cpu: 8, memory: 64Gi}\n",
       "fleet[0].prefix: 'h\\x1b[2J0' has the character '\\x1b'"},
      {"missing duration", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, tasks: {gpus: 1}}\n",
       "jobs[0].duration: required"},
      {"more than one GPU but not whole", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: 1.5}}\n",
       "jobs[0].tasks.gpus: '1.5' is neither whole GPUs nor a share of one; expected an integer or a fraction below 1"},
      {"two share kinds", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {gpus: 1, mig: 1g.10gb}}\n",
       "jobs[0].tasks: expected at most one of gpus, mig, mps and timeslice"},
      {"unknown MIG profile", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {mig: 3g.20gb}}\n",
       "jobs[j].tasks.mig: '3g.20gb' is not a MIG profile of H100-80GB; expected one of 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"},
      {"MPS percent out of range", std::string(kFleet) + "tenants: [{path: t}]\njobs:\n  - {name: j, tenant: t, duration: 1h, tasks: {mps: {percent: 120}}}\n",
       "jobs[0].tasks.mps.percent: '120' is not valid; expected an integer from 1 to 100"},
      {"MIG pool of a model without MIG", "fleet:\n  - {prefix: l-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: L40S-48GB, count: 4, sharing: mig}}\n",
       "fleet[0].gpus.sharing: mig: L40S-48GB has no MIG"},
      {"impossible MIG layout", "fleet:\n  - {prefix: m-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: H100-80GB, count: 4, sharing: mig, mig_layout: [4g.40gb, 4g.40gb]}}\n",
       "fleet[0].gpus.mig_layout: MIG layout [4g.40gb, 4g.40gb] does not fit one H100-80GB"},
      {"replicas on an MPS pool", "fleet:\n  - {prefix: m-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: H100-80GB, count: 4, sharing: mps, replicas: 4}}\n",
       "fleet[0].gpus.replicas: applies to sharing: timeslice only"},
      {"replicas that do not divide a GPU", "fleet:\n  - {prefix: m-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: T4-16GB, count: 4, sharing: timeslice, replicas: 9}}\n",
       "fleet[0].gpus.replicas: 9 does not divide a GPU exactly"},
      {"unknown sharing", "fleet:\n  - {prefix: m-, count: 1, cpu: 8, memory: 64Gi, gpus: {model: T4-16GB, count: 4, sharing: vgpu}}\n",
       "fleet[0].gpus.sharing: 'vgpu' is not valid; expected exclusive, mig, mps or timeslice"},
  };
  for (const Case& c : cases) {
    std::string msg = Refusal(c.yaml);
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.name << ": got '" << msg << "'";
  }
}

TEST(ScenarioReader, ParsesQuantitiesExactly) {
  auto sc = ParseScenario(std::string(kFleet) +
                              "tenants: [{path: t, guarantee: {cpu: 1.5, memory: 1.5Gi}, weight: 2.5}]\n"
                              "jobs:\n  - {name: j, tenant: t, submit: 1.5m, duration: 2h, tasks: {count: 2, gpus: 8, cpu: 0.25, memory: 512Mi}}\n",
                          "ok.yaml");
  ASSERT_TRUE(sc.has_value()) << sc.error().message();
  EXPECT_EQ(sc->nodes.size(), 2u);
  EXPECT_EQ(sc->nodes[1].name, "h-1");
  EXPECT_EQ(sc->nodes[0].memory, 1024 * 1024);
  EXPECT_EQ(sc->tenants[0].guarantee[0].amount, 1500);
  EXPECT_EQ(sc->tenants[0].guarantee[1].amount, 1536);
  EXPECT_EQ(sc->tenants[0].weight, 2500);
  const JobSpec& j = sc->jobs[0].spec;
  EXPECT_EQ(j.submit_ms, 90000);
  EXPECT_EQ(j.duration_ms, 7200000);
  EXPECT_EQ(j.groups[0].count, 2);
  EXPECT_EQ(j.groups[0].gpu, 8 * kGpuUnit);
  EXPECT_EQ(j.groups[0].cpu, 250);
  EXPECT_EQ(j.groups[0].memory, 512);
}

TEST(Generator, SameSeedGivesSameScenarioAndOtherSeedsDiffer) {
  GenerateSpec g;
  g.nodes = 16;
  g.teams = 6;
  g.orgs = 2;
  g.jobs_per_day = 200;
  Scenario a, b, c;
  Generate(g, a);
  Generate(g, b);
  g.seed = 2;
  Generate(g, c);
  ASSERT_EQ(a.jobs.size(), 200u);
  bool same_ab = true, same_ac = true;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    same_ab &= a.jobs[i].spec.submit_ms == b.jobs[i].spec.submit_ms && a.jobs[i].spec.duration_ms == b.jobs[i].spec.duration_ms &&
               a.jobs[i].tenant == b.jobs[i].tenant;
    same_ac &= a.jobs[i].spec.submit_ms == c.jobs[i].spec.submit_ms && a.jobs[i].spec.duration_ms == c.jobs[i].spec.duration_ms;
  }
  EXPECT_TRUE(same_ab);
  EXPECT_FALSE(same_ac);
  // Guarantees sum to 70% of the fleet's 128 GPUs, in whole GPUs, at most.
  int64_t orgs = 0;
  for (const ScenarioTenant& t : a.tenants) {
    if (t.path.find('/') == std::string::npos && !t.guarantee.empty()) orgs += t.guarantee[0].amount;
  }
  EXPECT_LE(orgs, 128 * kGpuUnit * 7 / 10);
  EXPECT_GE(orgs, 128 * kGpuUnit * 7 / 10 - 6 * kGpuUnit);
}

// The binary: exit code 2 and the message on stderr for a bad scenario; a report for a good one.
TEST(SimCommand, ExitsTwoOnABadScenarioAndWritesTheReportOnAGoodOne) {
  std::string bad = ::testing::TempDir() + "allot-bad.yaml";
  {
    std::ofstream(bad) << "fleet:\n  - {prefix: h-, count: 1, cpu: -8, memory: 64Gi}\n";
  }
  std::string err = ::testing::TempDir() + "allot-bad.err";
  int rc = std::system((std::string(ALLOT_BINARY) + " sim " + bad + " 2>" + err + " >/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::ifstream in(err);
  std::string msg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(msg.find("allot-bad.yaml:2: fleet[0].cpu: '-8' is not a valid quantity: must not be negative"), std::string::npos) << msg;

  std::string json = ::testing::TempDir() + "allot-report.json";
  rc = std::system((std::string(ALLOT_BINARY) + " sim " + ALLOT_SOURCE_DIR + "/scenarios/example.yaml --no-timing -q --json " + json).c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 0);
  std::ifstream rep(json);
  std::string text((std::istreambuf_iterator<char>(rep)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"wall_seconds\":null"), std::string::npos);
  EXPECT_NE(text.find("\"name\":\"pretrain\""), std::string::npos);
}

}  // namespace
}  // namespace allot
