// The simulator's what-if: each tenant's cost under a rate card, over tests/scenarios/
// reclaim-grace.yaml, worked by hand; and a replay of the run's events gives the same ledger.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "billing/rate_card_yaml.h"
#include "billing/sodium_crypto.h"
#include "metering/meter.h"
#include "metering/rating.h"
#include "sim/report.h"
#include "sim/what_if.h"

namespace allot {
namespace {

const std::string kScenario = std::string(ALLOT_SOURCE_DIR) + "/tests/scenarios/reclaim-grace.yaml";

RateCard Card(const char* mode) {
  auto card = ParseRateCard(std::string("currency: USD\nmode: ") + mode +
                                "\ngpu_hour: {H100-80GB: 2.50}\ncpu_hour: 0\nmemory_gib_hour: 0\nburst_premium: 1.2\n",
                            "card", ZoneCheck::kNameOnly);
  EXPECT_TRUE(card.has_value()) << card.error().message();
  return *card;
}

int64_t CostOf(const nlohmann::json& report, const std::string& path) {
  for (const auto& t : report["tenants"]) {
    if (t["path"] == path) return t["cost"]["amount_micros"].get<int64_t>();
  }
  ADD_FAILURE() << "no tenant " << path;
  return -1;
}

// The run (see the scenario's comment) ends at 21,690 s = 6.025 h, the period:
//   borrow (borrower, burstable): 16 GPUs over [0, 3690 s) and [7290 s, 21690 s) = 18,090 s
//     = 5.025 h → 16 × 5.025 × 2.50 × 1.2 = 241.20
//   claim (owner, guaranteed): 8 GPUs over [3690 s, 7290 s) = 1 h
// floor+burst: owner's floor 8 GPUs × 6.025 h × 2.50 = 120.50, claim covered by it;
//   borrower 241.20. Total 361.70.
// usage: owner 8 × 1 × 2.50 = 20.00; borrower 241.20. Total 261.20.
TEST(WhatIf, ReclaimGraceCostsWhatTheHandWorkedSumsSay) {
  struct Case { const char* mode; int64_t owner, borrower; };
  for (Case c : {Case{"floor+burst", 120500000, 241200000}, Case{"usage", 20000000, 241200000}}) {
    auto w = RunWhatIfFile(kScenario, {}, std::nullopt, Card(c.mode));
    ASSERT_TRUE(w.has_value()) << w.error().message();
    EXPECT_EQ(w->sim.result.end_ms, 21690000);
    auto report = nlohmann::json::parse(ReportJson(w->sim, {.timing = false}));
    EXPECT_EQ(CostOf(report, "owner"), c.owner) << c.mode;
    EXPECT_EQ(CostOf(report, "borrower"), c.borrower) << c.mode;
    EXPECT_EQ(report["tenants"][0]["cost"]["currency"], "USD");
    EXPECT_EQ(w->sim.result.cost->micros[0], c.owner + c.borrower);
    std::ostringstream text;
    PrintSummary(w->sim, text);
    EXPECT_NE(text.str().find("COST USD"), std::string::npos) << text.str();
  }
}

std::string LedgerOf(const std::vector<LedgerLine>& lines) {
  auto crypto = *SodiumLedgerCrypto::FromSeed(std::string(64, 'a'));
  Ledger ledger(crypto);
  for (const LedgerLine& l : lines) ledger.Append(l);
  EXPECT_TRUE(ledger.Close("sim", "USD").has_value());
  return ledger.Encode();
}

TEST(WhatIf, ReplayingTheEventsReproducesTheLedgerByteForByte) {
  std::vector<Event> events;
  SimOptions opt;
  opt.on_event = [&](const Event& e) { events.push_back(e); };
  RateCard card = Card("floor+burst");
  auto w = RunWhatIfFile(kScenario, opt, std::nullopt, card);
  ASSERT_TRUE(w.has_value());
  std::string first = LedgerOf(w->lines);

  // Replay the journal into a fresh state with a fresh meter, as allotd would after a restart.
  ClusterState st;
  Meter meter;
  for (const Event& e : events) {
    ASSERT_TRUE(st.apply(e).ok());
    meter.Observe(e, st);
  }
  std::vector<OrgPeriod> periods;
  for (const Tenant& t : st.tenants().tenants()) {
    if (t.depth == 1) periods.push_back({t.id, Period{"sim", 0, w->sim.result.end_ms}, card.ModeOf(t.path)});
  }
  auto lines = Rate({st.tenants(), st.resource_names(), card}, periods, meter.AllAt(w->sim.result.end_ms));
  ASSERT_TRUE(lines.has_value());
  EXPECT_EQ(LedgerOf(*lines), first);
  EXPECT_NE(first.find("\tborrower\tusage\tgpu/H100-80GB\tburstable\t"), std::string::npos) << first;
}

}  // namespace
}  // namespace allot
