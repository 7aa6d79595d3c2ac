// The openb replay: strict readers, determinism, and faithfulness to the published study.
#include "sim/openb.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/openb_compare.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(ALLOT_SOURCE_DIR) + "/tests/data/openb";

std::string Write(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("allot-openb-" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string PodError(const std::string& text) {
  auto r = ReadOpenbPods(Write("pods.csv", text));
  return r ? "(accepted)" : r.error().message();
}

std::string NodeError(const std::string& text) {
  auto r = ReadOpenbNodes(Write("nodes.csv", text));
  return r ? "(accepted)" : r.error().message();
}

TEST(OpenbReaderTest, RefusesMalformedRowsNamingFileLineColumnAndExpectation) {
  const std::string header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
  const std::string ok = "p0,1000,1024,1,500,\n";
  struct Case {
    std::string rows;
    std::string want;
  };
  const Case cases[] = {
      {ok + "p1,1000,1024,1,half,\n", ":3: gpu_milli: 'half'; expected an integer from 0"},
      {ok + "p1,-5,1024,1,500,\n", ":3: cpu_milli: '-5'; expected an integer from 0"},
      {ok + "p1,1000,lots,1,500,\n", ":3: memory_mib: 'lots'; expected an integer"},
      {ok + "p1,1000,1024,1\n", ":3: 4 fields; expected 6 as in the header"},
      {",1000,1024,1,500,\n", ":2: name: empty; expected a pod name"},
  };
  for (const Case& c : cases) {
    std::string e = PodError(header + c.rows);
    EXPECT_NE(e.find("allot-openb-pods.csv" + c.want), std::string::npos) << e;
  }
  EXPECT_NE(PodError("name,cpu_milli,memory_mib,num_gpu\n").find(":1: header: missing column 'gpu_milli'"),
            std::string::npos);
  EXPECT_NE(NodeError("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,1024,2,\n")
                .find(":2: model: empty; expected the GPU model of a node with GPUs"),
            std::string::npos);
}

TEST(OpenbReaderTest, AcceptsTheFiveColumnPodListWithoutModelConstraints) {
  auto pods = ReadOpenbPods(Write("five.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,1,460\n"));
  ASSERT_TRUE(pods.has_value()) << pods.error().message();
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0].gpu_milli, 460);
  EXPECT_EQ((*pods)[0].gpu_spec, "");
}

TEST(OpenbExperimentTest, FourHalfGpuPodsFillATwoGpuNodeAndTheCurveCountsMilliGpus) {
  // One node with 2 GPUs; four 0.5-GPU pods fill it exactly (100%); tuned to 1.0 × capacity.
  auto nodes = ReadOpenbNodes(Write("n2.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,65536,2,T4\n"));
  auto pods = ReadOpenbPods(Write("p4.csv",
                                  "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                                  "a,1000,1024,1,500\nb,1000,1024,1,500\nc,1000,1024,1,500\nd,1000,1024,1,500\n"));
  ASSERT_TRUE(nodes && pods);
  for (const char* policy : {"bestfit", "fgd", "random"}) {
    auto r = RunOpenb(*nodes, *pods, {.policy = policy, .seed = 7, .inflate = 1.0});
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(r->placed, 4) << policy;
    EXPECT_DOUBLE_EQ(r->AllocAt(100), 100.0) << policy;
    EXPECT_DOUBLE_EQ(r->AllocAt(50), 50.0) << policy;
  }
  auto bad = RunOpenb(*nodes, *pods, {.policy = "tetris"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("--policy 'tetris' is not registered; expected one of random"), std::string::npos);
}

TEST(OpenbExperimentTest, SameSeedSameCurveOtherSeedOtherShuffle) {
  auto nodes = ReadOpenbNodes(kData + "/openb_node_list_gpu_node.csv");
  auto pods = ReadOpenbPods(kData + "/openb_pod_list_default.csv");
  ASSERT_TRUE(nodes && pods);
  EXPECT_EQ(nodes->size(), 1213u);
  EXPECT_EQ(pods->size(), 8152u);
  auto a = RunOpenb(*nodes, *pods, {.policy = "fgd", .seed = 42});
  auto b = RunOpenb(*nodes, *pods, {.policy = "fgd", .seed = 42});
  auto c = RunOpenb(*nodes, *pods, {.policy = "fgd", .seed = 43});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->curve, b->curve);
  EXPECT_NE(a->curve, c->curve);
  EXPECT_EQ(a->curve.size(), 131u);
  EXPECT_EQ(a->total_gpus, 6212);
}

// The published means at 130% arrived demand on `default` (FGD.md §3; the study's
// analysis_allo_discrete.csv): a faithful reproduction lands within 0.5 point for BestFit and
// FGD over the same ten seeds (our RNG is not Go's, so single seeds differ).
TEST(OpenbExperimentTest, BestFitAndFgdReproduceThePublishedMeansOnDefault) {
  OpenbCompareOptions o;
  o.dir = kData;
  o.workload = "default";
  o.policies = {"bestfit", "fgd"};
  for (uint64_t s = 42; s <= 51; ++s) o.seeds.push_back(s);
  auto c = RunOpenbCompare(o);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->means.size(), 2u);
  EXPECT_NEAR(c->means[0].second[130], 93.08, 0.5) << "bestfit";
  EXPECT_NEAR(c->means[1].second[130], 95.39, 0.5) << "fgd";
  EXPECT_NEAR(c->means[0].second[100], 92.86, 0.5) << "bestfit";
  EXPECT_NEAR(c->means[1].second[100], 95.23, 0.5) << "fgd";
  EXPECT_GT(c->means[1].second[130], c->means[0].second[130] + 1.5) << "FGD beats BestFit by ~2.3 points";
}

// allot's own policy (allot.cc) must beat FGD on `default` by at least 0.2 point at 130%
// (measured: 95.70 vs 95.41 over seeds 42–51).
TEST(OpenbExperimentTest, AllotBeatsFgdOnDefault) {
  OpenbCompareOptions o;
  o.dir = kData;
  o.workload = "default";
  o.policies = {"fgd", "allot"};
  for (uint64_t s = 42; s <= 51; ++s) o.seeds.push_back(s);
  auto c = RunOpenbCompare(o);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->means.size(), 2u);
  EXPECT_GE(c->means[1].second[130], c->means[0].second[130] + 0.2);
  EXPECT_GE(c->means[1].second[100], c->means[0].second[100]);
}

TEST(OpenbCompareTest, ParsesSeedRangesAndLists) {
  EXPECT_EQ(ParseSeeds("42-45").value(), (std::vector<uint64_t>{42, 43, 44, 45}));
  EXPECT_EQ(ParseSeeds("1,7").value(), (std::vector<uint64_t>{1, 7}));
  EXPECT_FALSE(ParseSeeds("9-3").has_value());
  EXPECT_FALSE(ParseSeeds("x").has_value());
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int RunSim(const std::string& args) {
  int rc = std::system((std::string(ALLOT_BINARY) + " sim " + args).c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The command: --compare writes the JSON report, the mean curves as CSV and an SVG plot; a bad
// policy or seed list exits 2 with the reason.
TEST(OpenbCommandTest, CompareWritesJsonCsvAndPlotAndRefusesBadInput) {
  std::string dir = ::testing::TempDir();
  std::string json = dir + "openb.json", csv = dir + "openb.csv", svg = dir + "openb.svg", err = dir + "openb.err";
  ASSERT_EQ(RunSim("--openb " + kData + " --compare bestfit,fgd --seeds 42-43 -q --json " + json + " --csv " + csv +
                " --plot " + svg),
            0);
  auto j = nlohmann::json::parse(Slurp(json));
  EXPECT_EQ(j["workload"], "default");
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][0]["policy"], "bestfit");
  EXPECT_EQ(j["results"][1]["seed"], 43);
  EXPECT_GT(j["results"][3]["alloc_at_130"].get<double>(), 94.0);
  std::string curves = Slurp(csv);
  EXPECT_EQ(curves.rfind("arrived_percent,bestfit,fgd\n0,", 0), 0u) << curves.substr(0, 80);
  EXPECT_NE(curves.find("\n130,"), std::string::npos);
  std::string plot = Slurp(svg);
  EXPECT_EQ(plot.rfind("<svg", 0), 0u);
  EXPECT_NE(plot.find("fgd"), std::string::npos);

  EXPECT_EQ(RunSim("--openb " + kData + " --policy tetris -q 2>" + err), 2);
  EXPECT_NE(Slurp(err).find("--policy 'tetris' is not registered"), std::string::npos);
  EXPECT_EQ(RunSim("--openb " + kData + " --compare fgd --seeds 9-3 -q 2>" + err), 2);
  EXPECT_NE(Slurp(err).find("--seeds: '9-3'"), std::string::npos);
  EXPECT_EQ(RunSim("--openb " + kData + " --workload nosuch -q 2>" + err), 2);
  EXPECT_NE(Slurp(err).find("openb_pod_list_nosuch.csv: cannot open"), std::string::npos);
}

}  // namespace
}  // namespace allot
