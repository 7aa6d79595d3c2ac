// Budgets in scenario files: the simulator applies them as allotd does (BudgetSet after the
// tenants) and its pass runs allotd's budget gate, so it holds the same jobs with the same
// reasons and gives the same 80%/100% warnings. Prices: an H100 at 2.50 USD an hour.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "billing/rate_card_yaml.h"
#include "metering/billing.h"
#include "sim/report.h"
#include "sim/simulator.h"

namespace allot {
namespace {

using Json = nlohmann::json;

const std::string kHead =
    "fleet:\n"
    "  - {prefix: h100-, count: 2, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}\n"
    "tenants:\n"
    "  - {path: research}\n"
    "  - {path: research/vision}\n";
const std::string kBudgets =
    "budgets:\n"
    "  - {tenant: research/vision, spend: 100.00}\n"
    "  - {tenant: research, gpu_hours: 32}\n";
// sweep: 8 GPUs × 4 h = 80.00 USD, 32 GPU-hours. finetune: 8 GPUs × 2 h = 40.00 USD.
const std::string kJobs =
    "jobs:\n"
    "  - {name: sweep, tenant: research/vision, submit: 0s, duration: 4h, tasks: {gpus: 8}}\n"
    "  - {name: finetune, tenant: research/vision, submit: 1h, duration: 2h, tasks: {gpus: 8}}\n";

std::shared_ptr<const BillingSetup> Billing() {
  auto card = ParseRateCard("currency: USD\nmode: usage\ngpu_hour: {H100-80GB: 2.50}\ncpu_hour: 0\n"
                            "memory_gib_hour: 0\nburst_premium: 1.0\n",
                            "rates.yaml", ZoneCheck::kNameOnly);
  EXPECT_TRUE(card.has_value()) << card.error().message();
  auto setup = std::make_shared<BillingSetup>();
  setup->card = *card;  // no zones loaded: UTC, so virtual time 0 is in the period 1970-01
  return setup;
}

struct With {
  int64_t until_ms = -1;
  bool rates = true;  // run with the rate card (as --rates)
};

Result<SimRun> Simulate(const std::string& yaml, With with = {}) {
  auto sc = ParseScenario(yaml, "budgets.yaml");
  if (!sc) return Err(sc.error());
  SimOptions opt;
  opt.verify = true;
  opt.until_ms = with.until_ms;
  if (with.rates) opt.billing = Billing();
  return RunScenario(std::move(*sc), opt, std::nullopt);
}

const Job& JobNamed(const SimRun& run, const std::string& name) {
  for (const Job& j : run.state.jobs()) {
    if (j.spec.name == name) return j;
  }
  ADD_FAILURE() << "no job " << name;
  return run.state.jobs().front();
}

// At 1 h: spent 8 GPUs × 1 h × 2.50 = 20.00; sweep's remaining 3 h = 60.00; finetune 40.00.
// 20 + 60 + 40 = 120 > 100: held though h100-1 is idle. At 4 h: 80 + 40 = 120 > 100 still.
TEST(SimBudgets, ASpendBudgetHoldsAJobTheFleetHasRoomForAndItsReasonSaysTheSums) {
  auto mid = Simulate(kHead + kBudgets + kJobs, {.until_ms = 3600000});
  ASSERT_TRUE(mid.has_value()) << mid.error().message();
  const Job& held = JobNamed(*mid, "finetune");
  EXPECT_EQ(held.state, JobState::kPending);
  EXPECT_EQ(mid->result.reasons[held.id.value()],
            "held: budget of research/vision for 1970-01: spent 20.00 USD + running jobs' projected 60.00 USD + "
            "this job's projected 40.00 USD > 100.00 USD");

  auto end = Simulate(kHead + kBudgets + kJobs);
  ASSERT_TRUE(end.has_value()) << end.error().message();
  EXPECT_EQ(JobNamed(*end, "sweep").state, JobState::kFinished);
  const Job& never = JobNamed(*end, "finetune");
  EXPECT_EQ(never.state, JobState::kPending);
  EXPECT_LT(never.first_started_ms, 0);
  EXPECT_EQ(end->result.reasons[never.id.value()],
            "held: budget of research/vision for 1970-01: spent 80.00 USD + this job's projected 40.00 USD > 100.00 USD");
  auto report = Json::parse(ReportJson(*end, {.timing = false}));
  EXPECT_EQ(report["jobs"][1]["state"], "pending");
  EXPECT_EQ(report["jobs"][1]["started"], nullptr);
}

TEST(SimBudgets, WithoutTheBudgetsSectionTheSameJobStartsOnTheIdleNode) {
  for (bool rates : {true, false}) {
    auto run = Simulate(kHead + kJobs, {.rates = rates});
    ASSERT_TRUE(run.has_value()) << run.error().message();
    const Job& j = JobNamed(*run, "finetune");
    EXPECT_EQ(j.state, JobState::kFinished) << "rates " << rates;
    EXPECT_EQ(j.first_started_ms, 3600000) << "rates " << rates;
    // No budgets, no budget section: reports of existing scenarios are unchanged.
    EXPECT_EQ(ReportJson(*run, {.timing = false}).find("budget_warnings"), std::string::npos);
    std::ostringstream text;
    PrintSummary(*run, text);
    EXPECT_EQ(text.str().find("BUDGET"), std::string::npos);
  }
}

// research's 32 GPU-hours: 80% = 25.6 h, reached at 3.2 h = 11,520 s (a pass-interval tick
// while finetune waits); 100% when sweep ends at 4 h. vision's spend: 80.00 of 100.00 at 4 h.
TEST(SimBudgets, WarningsAtEightyAndOneHundredPercentAppearInTheJsonAndTextReports) {
  auto run = Simulate(kHead + kBudgets + kJobs);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  auto report = Json::parse(ReportJson(*run, {.timing = false}));
  ASSERT_TRUE(report.contains("budget_warnings")) << report.dump();
  const Json& w = report["budget_warnings"];
  ASSERT_EQ(w.size(), 3u) << w.dump();
  struct Want { const char* path; const char* what; int percent; int64_t at; };
  const Want want[] = {{"research", "gpu-hours", 80, 11520},
                       {"research", "gpu-hours", 100, 14400},
                       {"research/vision", "spend", 80, 14400}};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(w[i].dump());
    EXPECT_EQ(w[i]["path"], want[i].path);
    EXPECT_EQ(w[i]["period"], "1970-01");
    EXPECT_EQ(w[i]["what"], want[i].what);
    EXPECT_EQ(w[i]["percent"], want[i].percent);
    EXPECT_EQ(w[i]["at"], want[i].at);
  }
  EXPECT_EQ(w[2]["message"], "budget of research/vision for 1970-01: spend 80.00 USD of 100.00 USD (80%)");
  std::ostringstream text;
  PrintSummary(*run, text);
  EXPECT_NE(text.str().find("BUDGET WARNINGS (2 budgets set)\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("  at 14400 s: budget of research/vision for 1970-01: spend 80.00 USD of 100.00 USD (80%)\n"),
            std::string::npos)
      << text.str();
}

TEST(SimBudgets, RefusesBadBudgetsNamingFileLineFieldValueAndExpectation) {
  struct Case { const char* name; std::string budgets; const char* expected; };
  const Case cases[] = {
      {"unknown tenant", "budgets:\n  - {tenant: research/nlp, spend: 10}\n",
       "budgets.yaml:7: budgets[0].tenant: 'research/nlp' is not a tenant of the scenario; expected a path under tenants:"},
      {"negative spend", "budgets:\n  - {tenant: research, spend: -5}\n",
       "budgets.yaml:7: budgets[0].spend: '-5' is not valid; expected an amount of the rate card's currency >= 0"},
      {"non-number spend", "budgets:\n  - {tenant: research, spend: lots}\n",
       "budgets.yaml:7: budgets[0].spend: 'lots' is not valid; expected an amount"},
      {"seven decimals", "budgets:\n  - {tenant: research, spend: 0.0000001}\n",
       "budgets[0].spend: '0.0000001' is not valid; expected an amount of the rate card's currency >= 0 with at most six decimals"},
      {"non-number gpu_hours", "budgets:\n  - {tenant: research, gpu_hours: [1]}\n",
       "budgets.yaml:7: budgets[0].gpu_hours: a list or mapping is not valid; expected GPU-hours >= 0"},
      {"negative gpu_hours", "budgets:\n  - {tenant: research, gpu_hours: -1}\n",
       "budgets.yaml:7: budgets[0].gpu_hours: '-1' is not a number of GPU-hours"},
      {"neither cap", "budgets:\n  - {tenant: research}\n",
       "budgets.yaml:7: budgets[0]: has no cap; expected spend and/or gpu_hours"},
      {"no tenant", "budgets:\n  - {spend: 10}\n", "budgets.yaml:7: budgets[0].tenant: required"},
      {"unknown field", "budgets:\n  - {tenant: research, spend: 10, monthly: true}\n",
       "budgets.yaml:7: budgets[0].monthly: unknown field; expected one of: tenant, spend, gpu_hours"},
      {"twice", "budgets:\n  - {tenant: research, spend: 10}\n  - {tenant: research, gpu_hours: 1}\n",
       "budgets.yaml:8: budgets[1].tenant: 'research' already has a budget (budgets[0])"},
      {"not a list", "budgets: {tenant: research}\n", "budgets.yaml:6: budgets: expected a list"},
  };
  for (const Case& c : cases) {
    auto run = Simulate(kHead + c.budgets + kJobs);
    ASSERT_FALSE(run.has_value()) << c.name;
    EXPECT_EQ(run.error().code(), Code::kInvalidArgument) << c.name;
    EXPECT_NE(run.error().message().find(c.expected), std::string::npos) << c.name << ": " << run.error().message();
  }
}

TEST(SimBudgets, BudgetsWithoutARateCardAreRefusedBeforeAnythingRuns) {
  std::vector<Event> seen;
  auto sc = ParseScenario(kHead + kBudgets + kJobs, "budgets.yaml");
  ASSERT_TRUE(sc.has_value()) << sc.error().message();
  SimOptions opt;
  opt.on_event = [&](const Event& e) { seen.push_back(e); };
  auto run = RunScenario(std::move(*sc), opt, std::nullopt);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code(), Code::kInvalidArgument);
  EXPECT_NE(run.error().message().find("budgets.yaml:7: budgets need --rates"), std::string::npos) << run.error().message();
  EXPECT_TRUE(seen.empty());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The binary over the bundled example: finetune held with the sums; without --rates, exit 2.
TEST(SimCommand, HoldsTheBundledBudgetExamplesJobAndRefusesItsBudgetsWithoutRates) {
  std::string dir = std::string(ALLOT_SOURCE_DIR) + "/scenarios/";
  std::string json = ::testing::TempDir() + "allot-budgets.json", err = ::testing::TempDir() + "allot-budgets.err";
  int rc = std::system((std::string(ALLOT_BINARY) + " sim " + dir + "budgets.yaml --rates " + dir +
                        "rates.yaml --no-timing -q --json " + json + " 2>" + err)
                           .c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  ASSERT_EQ(WEXITSTATUS(rc), 0) << ReadAll(err);
  Json report = Json::parse(ReadAll(json));
  EXPECT_EQ(report["jobs"][1]["name"], "finetune");
  EXPECT_EQ(report["jobs"][1]["state"], "pending");
  EXPECT_EQ(report["jobs"][1]["reason"],
            "held: budget of research/vision for 1970-01: spent 80.00 USD + this job's projected 40.00 USD > 100.00 USD");
  EXPECT_EQ(report["budget_warnings"].size(), 3u);

  rc = std::system((std::string(ALLOT_BINARY) + " sim " + dir + "budgets.yaml -q 2>" + err + " >/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::string msg = ReadAll(err);
  EXPECT_NE(msg.find("allot sim: " + dir + "budgets.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("budgets need --rates"), std::string::npos) << msg;
}

}  // namespace
}  // namespace allot
