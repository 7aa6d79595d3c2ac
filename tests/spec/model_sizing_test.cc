// Sizing by workload (docs/sizing.md): the estimate's arithmetic, the catalogue, the choice at
// the boundaries the issue names (just fits a 1g.10gb; needs a 2g.20gb; needs two GPUs over
// NVLink), MPS when there is no MIG, and every mistake refused naming field, value and expected.
#include <gtest/gtest.h>

#include <set>

#include "spec/job_spec.h"
#include "spec/model_catalog.h"
#include "spec/model_estimate.h"

namespace allot {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

ModelWorkload Shape(int64_t parameters, ModelPrecision p, int64_t layers = 0, int64_t hidden = 0, int64_t context = 0,
                    int64_t batch = 1, ModelMode mode = ModelMode::kInference) {
  ModelWorkload m;
  m.parameters = parameters;
  m.precision = p;
  m.layers = layers;
  m.hidden = hidden;
  m.context = context;
  m.batch = batch;
  m.mode = mode;
  return m;
}

TEST(ModelEstimate, SevenBillionFp16AtFourKContextBatchEightIsTheWorkedExample) {
  MemoryEstimate e = EstimateMemory(Shape(7'000'000'000, ModelPrecision::kFp16, 32, 4096, 4096, 8));
  EXPECT_EQ(e.weights_mib, 13352);       // 14e9 bytes / 2^20 = 13351.4, rounded up
  EXPECT_EQ(e.kv_cache_mib, 16384);      // 2 × 32 × 4096 × 4096 × 8 × 2 bytes = 16 GiB exactly
  EXPECT_EQ(e.training_mib, 0);
  EXPECT_EQ(e.overhead_mib, 5948 + 512);  // 20% of 29736 = 5947.2, rounded up, + the CUDA context
  EXPECT_EQ(e.total_mib(), 36196);
}

TEST(ModelEstimate, Int4HalvesABytePerWeightAndKeepsTheCacheInSixteenBits) {
  // 70B int4: 35e9 bytes = 33378.6 MiB; the KV cache of 80 × 8192 at 4096 tokens, batch 1, in fp16.
  MemoryEstimate e = EstimateMemory(Shape(70'000'000'000, ModelPrecision::kInt4, 80, 8192, 4096, 1));
  EXPECT_EQ(e.weights_mib, 33379);
  EXPECT_EQ(e.kv_cache_mib, 10240);      // 2 × 80 × 8192 × 4096 × 2 bytes
  EXPECT_EQ(e.overhead_mib, 8724 + 512);  // 20% of 43619 = 8723.8 → 8724
  // fp8 keeps the cache in 8 bits.
  EXPECT_EQ(EstimateMemory(Shape(70'000'000'000, ModelPrecision::kFp8, 80, 8192, 4096, 1)).kv_cache_mib, 5120);
}

TEST(ModelEstimate, FineTuningAddsGradientsAndAdamStateAndLoraOnlyItsAdapters) {
  // Full fine-tune at bf16: 2 bytes of gradient + 12 of fp32 master and Adam moments per weight.
  MemoryEstimate full = EstimateMemory(Shape(1'000'000'000, ModelPrecision::kBf16, 0, 0, 0, 1, ModelMode::kFinetune));
  EXPECT_EQ(full.weights_mib, 1908);     // 2e9 bytes
  EXPECT_EQ(full.training_mib, 13352);   // 14e9 bytes
  // LoRA: 1% of the weights as adapters, 16 bytes each.
  MemoryEstimate lora = EstimateMemory(Shape(1'000'000'000, ModelPrecision::kBf16, 0, 0, 0, 1, ModelMode::kLora));
  EXPECT_EQ(lora.training_mib, 153);     // 1.6e8 bytes = 152.6 MiB
  EXPECT_EQ(lora.weights_mib, full.weights_mib);
}

TEST(ModelEstimate, AHugeCacheIsClampedNotWrapped) {
  MemoryEstimate e = EstimateMemory(Shape(100'000'000'000'000, ModelPrecision::kFp16, 1000, 262144, 16777216, 65536));
  EXPECT_EQ(e.kv_cache_mib, kMaxSizingEstimateMiB);
  EXPECT_GT(e.total_mib(), kMaxSizingEstimateMiB);
}

TEST(ModelCatalog, EveryEntryReadsWithAPlausibleShapeAndUniqueName) {
  ASSERT_GE(ModelCatalog().size(), 8u);
  std::set<std::string> names;
  for (const CatalogModel& m : ModelCatalog()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_GE(m.parameters, 1'000'000'000) << m.name;
    EXPECT_GT(m.layers, 0) << m.name;
    EXPECT_GT(m.hidden, 0) << m.name;
    EXPECT_GE(m.context, 1024) << m.name;
  }
  const CatalogModel* l = FindCatalogModel("llama-3-8b");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->parameters, 8'030'000'000);
  EXPECT_EQ(l->layers, 32);
  EXPECT_EQ(l->hidden, 4096);
  EXPECT_EQ(FindCatalogModel("llama-9"), nullptr);
}

TEST(ParameterCount, ReadsSuffixesAndDecimalsAndRefusesTheRest) {
  EXPECT_EQ(ParseParameterCount("7B"), 7'000'000'000);
  EXPECT_EQ(ParseParameterCount("6.74B"), 6'740'000'000);
  EXPECT_EQ(ParseParameterCount("350M"), 350'000'000);
  EXPECT_EQ(ParseParameterCount("1.5T"), 1'500'000'000'000);
  EXPECT_EQ(ParseParameterCount("125000000"), 125'000'000);
  for (const char* bad : {"", "B", "7X", "-7B", "7 B", "0.5M", "101T", "99999999999999999999B", "1.5"}) {
    EXPECT_FALSE(ParseParameterCount(bad).has_value()) << bad;
  }
  EXPECT_EQ(FormatParameterCount(6'740'000'000), "6.74B");
  EXPECT_EQ(FormatParameterCount(7'000'000'000), "7B");
  EXPECT_EQ(FormatParameterCount(350'000'000), "350M");
  EXPECT_EQ(FormatParameterCount(1'500'000'000'000), "1.5T");
}

// A state with the given nodes and tenants "t" (trusted) and "u" (untrusted).
class SizingTest : public ::testing::Test {
 protected:
  void AddNode(const std::string& name, const std::string& model, int gpus, Sharing sharing, std::vector<std::string> mig = {}) {
    NodeSpec n;
    n.name = name;
    n.cpu = 64000;
    n.memory = 512 * 1024;
    n.gpu_model = model;
    n.gpu_count = gpus;
    n.sharing = sharing;
    n.mig_layout = std::move(mig);
    ASSERT_TRUE(state_.apply({0, NodeAdded{n}}).ok());
  }
  void SetUp() override {
    for (auto [path, trust] : {std::pair{"t", Trust::kTrusted}, std::pair{"u", Trust::kUntrusted}}) {
      TenantSpec t;
      t.path = path;
      t.trust = trust;
      ASSERT_TRUE(state_.apply({0, TenantUpserted{t}}).ok());
    }
  }
  // The job `{name: j, tenant: TENANT, duration: 1h, tasks: TASKS}` read and resolved.
  Result<ScenarioJob> Size(const std::string& tasks, const std::string& tenant = "t", const std::string& extra = "") {
    auto j = ParseJob("{name: j, tenant: " + tenant + ", duration: 1h, tasks: " + tasks + extra + "}", "job.yaml");
    if (!j) return Err(j.error());
    if (Status s = ResolveJob(*j, state_, "job."); !s.ok()) return Err(s);
    return j;
  }
  std::string Error(const std::string& tasks, const std::string& tenant = "t", const std::string& extra = "") {
    auto j = Size(tasks, tenant, extra);
    return j ? "accepted" : j.error().message();
  }
  std::string Mig(const ScenarioJob& j, size_t group = 0) {
    if (j.spec.groups[group].share != ShareKind::kMig) return "not MIG";
    return j.mig[group];
  }
  ClusterState state_;
};

TEST_F(SizingTest, AModelThatJustFitsTenGibTakesA1g10gbAndOneMiBMoreDoesNot) {
  AddNode("mig", "A100-80GB", 8, Sharing::kMig);
  AddNode("whole", "A100-80GB", 8, Sharing::kExclusive);
  // 4249878528 fp16 weights are 8106 MiB exactly; + 1622 (20%) + 512 = 10240 MiB, a 1g.10gb.
  auto fits = Size("{model: {parameters: 4249878528, precision: fp16}}");
  ASSERT_TRUE(fits.has_value()) << fits.error().message();
  ASSERT_EQ(fits->spec.sizing.size(), 1u);
  EXPECT_EQ(fits->spec.sizing[0].estimate.total_mib(), 10240);
  EXPECT_EQ(Mig(*fits), "1g.10gb");
  EXPECT_EQ(fits->spec.sizing[0].allocation, "MIG 1g.10gb on A100-80GB");
  EXPECT_NE(fits->spec.sizing[0].why.find("estimated 10Gi"), std::string::npos) << fits->spec.sizing[0].why;
  // One more weight: 8107 MiB of weights, 10241 in all: past the 1g.10gb.
  auto over = Size("{model: {parameters: 4249878529, precision: fp16}}");
  ASSERT_TRUE(over.has_value()) << over.error().message();
  EXPECT_EQ(over->spec.sizing[0].estimate.total_mib(), 10241);
  EXPECT_EQ(Mig(*over), "1g.20gb") << "still one seventh of the compute (10241 / 81920 × 7 = 0.88 slices)";
}

TEST_F(SizingTest, ASevenBillionFp16ModelNeedsA2g20gb) {
  AddNode("mig", "A100-80GB", 8, Sharing::kMig);
  // 13352 + 2671 + 512 = 16535 MiB: 0.2 of the GPU's memory, so 1.41 of its 7 compute slices.
  auto j = Size("{model: {parameters: 7B, precision: fp16}}");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ(j->spec.sizing[0].estimate.total_mib(), 16535);
  EXPECT_EQ(Mig(*j), "2g.20gb");
  EXPECT_EQ(j->spec.topology, Topology::kNone);
}

TEST_F(SizingTest, ASeventyBillionInt8ModelNeedsTwoWholeGpusOverNvlink) {
  AddNode("mig", "H100-80GB", 8, Sharing::kMig);
  AddNode("whole", "H100-80GB", 8, Sharing::kExclusive);
  // llama-3-70b at int8, its 8192-token context: 67330 + 20480 (KV) + 17562 + 512 = 105884 MiB,
  // more than a GPU's 81920: two whole GPUs in one NVLink domain.
  auto j = Size("{model: {name: llama-3-70b, precision: int8}}");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ(j->spec.sizing[0].estimate.total_mib(), 105884);
  EXPECT_EQ(j->spec.groups[0].share, ShareKind::kWhole);
  EXPECT_EQ(j->spec.groups[0].gpus(), 2);
  EXPECT_EQ(j->spec.topology, Topology::kNvlink);
  EXPECT_EQ(j->spec.sizing[0].allocation, "2 × H100-80GB GPUs (nvlink)");
  EXPECT_EQ(j->gpu_model, "H100-80GB");
}

TEST_F(SizingTest, WithoutMigAModelTakesAnMpsShareLimitedToItsEstimate) {
  AddNode("mps", "H100-80GB", 4, Sharing::kMps);
  AddNode("whole", "H100-80GB", 8, Sharing::kExclusive);
  auto j = Size("{model: {parameters: 7B, precision: fp16}}");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ(j->spec.groups[0].share, ShareKind::kMps);
  EXPECT_EQ(j->spec.groups[0].gpu_memory, 16535);
  EXPECT_EQ(j->spec.groups[0].percent, 21);  // 16535 × 100 / 81920 = 20.2, rounded up
  EXPECT_EQ(j->spec.sizing[0].allocation, "MPS 21% with 16535Mi on H100-80GB");
  // An untrusted tenant may not use MPS: whole GPUs.
  auto u = Size("{model: {parameters: 7B, precision: fp16}}", "u");
  ASSERT_TRUE(u.has_value()) << u.error().message();
  EXPECT_EQ(u->spec.groups[0].share, ShareKind::kWhole);
  EXPECT_EQ(u->spec.groups[0].gpus(), 1);
  EXPECT_EQ(u->spec.sizing[0].allocation, "1 × H100-80GB GPU");
}

TEST_F(SizingTest, TheSmallestAllocationAcrossModelsWinsAndAJobsGpuModelRestrictsIt) {
  AddNode("a40", "A100-40GB", 8, Sharing::kMig);
  AddNode("h80", "H100-80GB", 8, Sharing::kMig);
  // 16535 MiB: a 3g.20gb of an A100-40GB (20Gi, 3 slices) or a 2g.20gb of an H100 (20Gi): same
  // memory, so the model's name decides (A100-40GB before H100-80GB).
  auto j = Size("{model: {parameters: 7B, precision: fp16}}");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ(j->gpu_model, "A100-40GB");
  EXPECT_EQ(Mig(*j), "3g.20gb");
  auto h = Size("{gpu_model: H100-80GB, model: {parameters: 7B, precision: fp16}}");
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_EQ(h->gpu_model, "H100-80GB");
  EXPECT_EQ(Mig(*h), "2g.20gb");
}

TEST_F(SizingTest, OverrideKeepsTheWrittenAllocationAndRecordsTheEstimate) {
  AddNode("whole", "H100-80GB", 8, Sharing::kExclusive);
  auto j = Size("{gpus: 4, model: {name: llama-3-8b, override: true}}");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ(j->spec.groups[0].gpus(), 4);
  EXPECT_EQ(j->spec.sizing[0].allocation, "as written");
  EXPECT_NE(j->spec.sizing[0].why.find("override"), std::string::npos);
  EXPECT_GT(j->spec.sizing[0].estimate.total_mib(), 0);
}

TEST_F(SizingTest, AModelNoAllocationHoldsIsRefusedWithWhatEachModelOffers) {
  AddNode("whole", "L40S-48GB", 2, Sharing::kExclusive);
  std::string e = Error("{model: {name: llama-2-70b}}");
  EXPECT_NE(e.find("job.tasks.model: an estimated "), std::string::npos) << e;
  EXPECT_NE(e.find("L40S-48GB would need 4 GPUs of 48Gi on one node; its nodes have at most 2"), std::string::npos) << e;
  EXPECT_NE(e.find("expected a model, precision, context or batch that fits"), std::string::npos) << e;
}

TEST_F(SizingTest, MistakesNameFieldValueAndWhatWasExpected) {
  AddNode("whole", "H100-80GB", 8, Sharing::kExclusive);
  struct Case { const char* tasks; const char* says; };
  const Case cases[] = {
      {"{model: {name: llama-9}}", "job.yaml:1: job.tasks.model.name: 'llama-9' is not in the model catalogue; expected one of llama-2-7b"},
      {"{model: {name: llama-3-8b, parameters: 8B}}",
       "job.tasks.model.parameters: '8B' beside name 'llama-3-8b', whose catalogue entry sets it; expected either name or the shape"},
      {"{model: {precision: fp16}}", "job.tasks.model.parameters: required; expected a count such as 7B"},
      {"{model: {parameters: 7X}}", "job.tasks.model.parameters: '7X' is not a parameter count; expected a count such as 7B"},
      {"{model: {parameters: 7B, precision: fp4}}", "job.tasks.model.precision: 'fp4' is not valid; expected fp16, bf16, fp8, int8 or int4"},
      {"{model: {parameters: 7B, mode: pretrain}}", "job.tasks.model.mode: 'pretrain' is not valid; expected inference, finetune or lora"},
      {"{model: {parameters: 7B, layers: 32}}", "job.tasks.model.hidden: required with layers (the KV cache needs both)"},
      {"{model: {parameters: 7B, batch: 0}}", "job.tasks.model.batch: '0' is not valid; expected an integer from 1 to 65536"},
      {"{model: {parameters: 7B, context: 4k}}", "job.tasks.model.context: '4k' is not valid; expected an integer from 1 to 16777216"},
      {"{model: {parameters: 7B, precision: int4, mode: finetune}}",
       "job.tasks.model.precision: 'int4' with mode finetune: quantised integer weights take no gradient"},
      {"{model: {parameters: 7B, override: yes}}", "job.tasks.model.override: 'yes' is not valid; expected true or false"},
      {"{model: {parameters: 7B, override: true}}", "job.tasks.model.override: true without gpus, mig, mps or timeslice"},
      {"{gpus: 1, model: {parameters: 7B}}", "job.tasks.model: given with gpus, mig, mps or timeslice; expected either model"},
      {"{model: {parameters: 7B, heads: 32}}", "job.tasks.model.heads: unknown field; expected one of: name, parameters"},
      {"{model: {parameters: 100T, layers: 1000, hidden: 262144, context: 16777216, batch: 65536}}",
       "job.tasks.model: an estimate of 1Pi or more of GPU memory per task; expected a model, context and batch"},
      {"{model: 7B}", "job.tasks.model: expected a mapping"},
  };
  for (const Case& c : cases) {
    std::string e = Error(c.tasks);
    EXPECT_NE(e.find(c.says), std::string::npos) << c.tasks << "\n  got: " << e << "\n  expected: " << c.says;
  }
}

TEST_F(SizingTest, ASizedJobIsAlsoReadFromJsonAsTheApiSendsIt) {
  AddNode("mig", "A100-80GB", 8, Sharing::kMig);
  auto j = Size("[{count: 2, cpu: 4, model: {name: phi-3-mini, precision: int8, batch: 4, context: 2048}}, {cpu: 1}]");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  ASSERT_EQ(j->spec.sizing.size(), 1u);
  EXPECT_EQ(j->spec.sizing[0].group, 0);
  EXPECT_EQ(j->spec.sizing[0].model.name, "phi-3-mini");
  EXPECT_EQ(j->spec.sizing[0].model.batch, 4);
  EXPECT_EQ(j->spec.sizing[0].model.context, 2048);
  EXPECT_EQ(j->spec.groups[0].count, 2);
  EXPECT_EQ(j->spec.groups[0].share, ShareKind::kMig);
  EXPECT_EQ(j->spec.groups[1].share, ShareKind::kWhole);
  EXPECT_TRUE(j->spec.CheckRanges().ok());
}

}  // namespace
}  // namespace allot
