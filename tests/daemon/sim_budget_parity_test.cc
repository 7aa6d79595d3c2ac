// The simulator and the daemon hold the same jobs for the same budgets: scenarios/budgets.yaml
// runs in `allot sim` (RunScenario with a rate card), and its inputs — nodes, tenants, budgets,
// jobs at their submit times — go through a Controller with the budget gate allotd installs.
// The held job's reason and the budget warnings must be the same, word for word.
#include <gtest/gtest.h>

#include <atomic>

#include "billing/rate_card_yaml.h"
#include "daemon/controller.h"
#include "metering/budget_gate.h"
#include "sim/simulator.h"
#include "store/sqlite_journal.h"
#include "testing/builders.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

constexpr int64_t kHour = 3600 * 1000;

std::shared_ptr<const BillingSetup> Billing() {
  auto card = LoadRateCard(std::string(ALLOT_SOURCE_DIR) + "/scenarios/rates.yaml", ZoneCheck::kNameOnly);
  EXPECT_TRUE(card.has_value()) << card.error().message();
  auto setup = std::make_shared<BillingSetup>();
  setup->card = *card;  // UTC
  return setup;
}

struct SimSide {
  std::vector<Event> inputs;  // what a client would send allotd, in order
  std::string reason_at_1h, reason_at_end;
  std::vector<BudgetWarning> warnings;
};

SimSide RunSim(const std::shared_ptr<const BillingSetup>& billing) {
  SimSide out;
  const std::string file = std::string(ALLOT_SOURCE_DIR) + "/scenarios/budgets.yaml";
  SimOptions opt;
  opt.billing = billing;
  opt.until_ms = kHour;
  auto early = RunScenarioFile(file, opt, std::nullopt);
  EXPECT_TRUE(early.has_value()) << early.error().message();
  if (!early) return out;
  out.reason_at_1h = early->result.reasons[allot::testing::OnlyJobNamed(early->state, "finetune").value()];
  opt.until_ms = -1;
  opt.on_event = [&](const Event& e) {
    const EventBody& b = e.body;
    if (std::holds_alternative<NodeAdded>(b) || std::holds_alternative<TenantUpserted>(b) ||
        std::holds_alternative<BudgetSet>(b) || std::holds_alternative<JobSubmitted>(b)) {
      out.inputs.push_back(e);
    }
  };
  auto run = RunScenarioFile(file, opt, std::nullopt);
  EXPECT_TRUE(run.has_value()) << run.error().message();
  if (!run) return out;
  out.reason_at_end = run->result.reasons[allot::testing::OnlyJobNamed(run->state, "finetune").value()];
  out.warnings = run->state.billing().warnings();
  return out;
}

TEST(SimBudgetParity, TheSimulatorAndTheDaemonHoldTheSameJobWithTheSameReasonAndWarnings) {
  auto billing = Billing();
  SimSide sim = RunSim(billing);
  ASSERT_FALSE(sim.inputs.empty());
  ASSERT_EQ(sim.warnings.size(), 3u);
  EXPECT_NE(sim.reason_at_1h.find("held: budget of research/vision"), std::string::npos) << sim.reason_at_1h;

  testing::ScratchDir dir{"sim-budget-parity"};
  auto journal = SqliteJournal::Open((dir / "allot.db").string());
  ASSERT_TRUE(journal.has_value()) << journal.error().message();
  ControllerOptions o;
  o.simulate_runs = true;
  o.scheduler.gate = std::make_shared<BudgetGateFactory>(billing);
  o.log = [](const std::string&) {};
  std::atomic<int64_t> now{0};
  auto ctl = std::make_unique<Controller>(std::move(*journal), [&now] { return now.load(); }, o);
  ASSERT_TRUE(ctl->Start().ok());
  auto reason = [&] {
    return ctl->ReadView([](const Controller::View& v) { return v.ReasonOf(allot::testing::OnlyJobNamed(v.state, "finetune")); });
  };
  auto at = [&](int64_t ms) {
    now = ms;
    ASSERT_TRUE(ctl->Sync().ok());
  };
  for (const Event& e : sim.inputs) {
    if (e.time_ms != now) at(e.time_ms);
    auto r = ctl->Execute(e.body);
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  at(kHour);
  EXPECT_EQ(reason(), sim.reason_at_1h);
  // The passes where the simulator warned: research's 80% (a tick) and the end of sweep.
  at(sim.warnings.front().time_ms);
  at(4 * kHour);
  EXPECT_EQ(reason(), sim.reason_at_end);
  EXPECT_FALSE(sim.reason_at_end.empty());
  EXPECT_EQ(ctl->Read([](const ClusterState& st) { return st.job(allot::testing::OnlyJobNamed(st, "finetune")).state; }), JobState::kPending);
  auto warnings = ctl->Read([](const ClusterState& st) { return st.billing().warnings(); });
  EXPECT_EQ(warnings, sim.warnings);
  ctl.reset();
}

}  // namespace
}  // namespace allot
