// The daemon's metering: a month closes into the ledger at the first batch after it ends —
// usage priced from the state, a close signed with the daemon's key — as a journaled event, so
// a restart neither loses nor repeats a close and a replay of the journal rebuilds the ledger
// byte for byte; budgets set through the controller hold jobs.
#include <gtest/gtest.h>

#include <atomic>

#include "billing/sodium_crypto.h"
#include "daemon/controller.h"
#include "metering/budget_gate.h"
#include "metering/ledger.h"
#include "store/sqlite_journal.h"
#include "testing/builders.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kNov30At22 = 1796076000000;  // 2026-11-30T22:00:00Z
const char* kSeed = "0101010101010101010101010101010101010101010101010101010101010101";

class ControllerBillingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto billing = std::make_shared<BillingSetup>();
    billing->card.gpu_hour["H100-80GB"] = 2500000;  // 2.50 USD per GPU-hour
    billing_ = billing;
    crypto_ = std::make_shared<SodiumLedgerCrypto>(*SodiumLedgerCrypto::FromSeed(kSeed));
  }
  void TearDown() override { ctl_.reset(); }
  void Start() {
    auto j = SqliteJournal::Open((dir_ / "allot.db").string());
    ASSERT_TRUE(j.has_value()) << j.error().message();
    ControllerOptions o;
    o.simulate_runs = true;
    o.metering = std::make_shared<MeteringSink>(billing_, crypto_);
    o.scheduler.gate = std::make_shared<BudgetGateFactory>(billing_);
    o.log = [](const std::string&) {};
    ctl_ = std::make_unique<Controller>(std::move(*j), [this] { return now_.load(); }, o);
    Status s = ctl_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Bootstrap() {
    NodeSpec n{"n0", "z", "r", "", 64000, 512 * 1024, "H100-80GB", 8};
    ASSERT_TRUE(ctl_->Execute(NodeAdded{n}).has_value());
    TenantSpec t;
    t.path = "team";
    ASSERT_TRUE(ctl_->Execute(TenantUpserted{t}).has_value());
  }
  void Submit(const std::string& name, int gpus, int64_t duration_ms) {
    JobSpec s;
    s.name = name;
    s.tenant = ctl_->Read([](const ClusterState& st) { return st.tenants().Find("team"); });
    s.gpu_resource = ctl_->Read([](const ClusterState& st) { return st.resource_names().Find("gpu/H100-80GB"); });
    s.duration_ms = duration_ms;
    s.submit_ms = now_;
    s.groups = {TaskGroup{1, gpus * kGpuUnit, 0, 0}};
    auto r = ctl_->Execute(JobSubmitted{s});
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  void At(int64_t ms) {
    now_ = ms;
    ASSERT_TRUE(ctl_->Sync().ok());
  }
  // Half an hour of one of team's GPUs lost on n0 to XID 79: −1.25 USD at 2.50.
  FaultLoss HalfAnHourLost() {
    FaultLoss loss;
    loss.tenant = ctl_->Read([](const ClusterState& st) { return st.tenants().Find("team"); });
    loss.gpu_resource = ctl_->Read([](const ClusterState& st) { return st.resource_names().Find("gpu/H100-80GB"); });
    loss.gpu_unit_ms = static_cast<__int128>(kGpuUnit) * kHour / 2;
    loss.node = "n0";
    loss.reason = "XID 79";
    return loss;
  }
  std::string LedgerText() { return ctl_->Read([this](const ClusterState& st) { return ctl_->metering()->LedgerText(st); }); }

  testing::ScratchDir dir_{"controller-billing"};
  std::shared_ptr<const BillingSetup> billing_;
  std::shared_ptr<const LedgerCrypto> crypto_;
  std::atomic<int64_t> now_{kNov30At22};
  std::unique_ptr<Controller> ctl_;
};

TEST_F(ControllerBillingTest, AMonthClosesIntoASignedLedgerOnceAndAReplayRebuildsItByteForByte) {
  Start();
  Bootstrap();
  Submit("a", 2, 4 * kHour);  // 2 GPUs from 22:00 on the 30th, finishing at 02:00 on the 1st
  At(kNov30At22 + kHour);
  EXPECT_TRUE(ctl_->Read([](const ClusterState& st) { return st.billing().ledger().empty(); })) << "November is open";
  At(kNov30At22 + 5 * kHour);  // 03:00 on December 1st: the job has finished, November has ended
  std::string text = LedgerText();
  auto entries = DecodeLedger(text, nullptr);
  ASSERT_TRUE(entries.has_value()) << entries.error().message();
  // November: 2 GPUs × 2 h (22:00–24:00) = 4 GPU-h × 2.50 = 10.00 USD, one usage line per
  // resource held (GPU; CPU and memory at price 0 are not held here), then the close.
  ASSERT_EQ(entries->size(), 2u) << text;
  EXPECT_EQ(entries->front().line.tenant, "team");
  EXPECT_EQ(entries->front().line.amount, 10 * kMicros);
  EXPECT_EQ(entries->back().line.kind, EntryKind::kClose);
  EXPECT_EQ(entries->back().line.period, "2026-11");
  EXPECT_EQ(entries->back().line.amount, 10 * kMicros);
  auto verified = VerifyLedger(*entries, SodiumLedgerCrypto::VerifyOnly(), crypto_->PublicKey());
  ASSERT_TRUE(verified.has_value()) << verified.error().message();
  EXPECT_EQ(verified->closes, 1);

  // A restart: the close is journaled state; the next batch does not close November again.
  ctl_.reset();
  Start();
  At(kNov30At22 + 6 * kHour);
  EXPECT_EQ(LedgerText(), text);

  // A replay of the journal into a fresh state rebuilds the same ledger, byte for byte.
  auto journal = SqliteJournal::Open((dir_ / "allot.db").string());
  ctl_.reset();
  ASSERT_TRUE(journal.has_value());
  ClusterState replayed;
  ASSERT_TRUE((*journal)->Replay(0, [&](uint64_t, const Event& e) { return replayed.apply(e); }).ok());
  MeteringSink sink(billing_, crypto_);
  EXPECT_EQ(sink.LedgerText(replayed), text);
}

TEST_F(ControllerBillingTest, AFaultCreditJoinsItsPeriodsCloseAndTheLedgerStillVerifies) {
  Start();
  Bootstrap();
  Submit("a", 1, 2 * kHour);
  At(kNov30At22 + kHour);
  // The node-health code's call: half an hour of one GPU lost on n0 → −1.25 USD.
  FaultLoss loss = HalfAnHourLost();
  auto credit = ctl_->Read([&](const ClusterState& st) { return ctl_->metering()->Credit(st, loss, now_); });
  ASSERT_TRUE(credit.has_value()) << credit.error().message();
  ASSERT_TRUE(ctl_->Execute(*credit).has_value());
  At(kNov30At22 + 3 * kHour);  // December: November closes
  auto entries = DecodeLedger(LedgerText(), nullptr);
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 3u);  // credit, usage, close
  EXPECT_EQ(entries->front().line.kind, EntryKind::kCredit);
  EXPECT_EQ(entries->front().line.amount, -1250000);
  EXPECT_EQ(entries->front().line.note, "node n0: XID 79");
  // Usage 1 GPU × 2 h = 5.00; close = 5.00 − 1.25.
  EXPECT_EQ(entries->back().line.amount, 3750000);
  EXPECT_TRUE(VerifyLedger(*entries, SodiumLedgerCrypto::VerifyOnly(), crypto_->PublicKey()).has_value());
}

// The race FailNode retries: a credit computed before a month close and journaled after it
// no longer continues the ledger, and is refused with nothing appended; computed again, its
// month is closed and signed, so it goes on December's invoice saying why.
TEST_F(ControllerBillingTest, ACreditOvertakenByAMonthCloseIsRefusedAndComputedAgainLandsInTheOpenMonth) {
  Start();
  Bootstrap();
  Submit("a", 1, 2 * kHour);
  At(kNov30At22 + kHour);
  FaultLoss loss = HalfAnHourLost();
  int64_t fault_at = now_;
  auto stale = ctl_->Read([&](const ClusterState& st) { return ctl_->metering()->Credit(st, loss, fault_at); });
  ASSERT_TRUE(stale.has_value());
  At(kNov30At22 + 3 * kHour);  // November closes first
  std::string closed = LedgerText();
  auto refused = ctl_->Execute(*stale);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), Code::kInvalidArgument);
  EXPECT_EQ(LedgerText(), closed) << "nothing appended";

  auto again = ctl_->Read([&](const ClusterState& st) { return ctl_->metering()->Credit(st, loss, fault_at); });
  ASSERT_TRUE(again.has_value());
  ASSERT_TRUE(ctl_->Execute(*again).has_value());
  auto entries = DecodeLedger(LedgerText(), nullptr);
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 3u);  // usage, November's close, the credit
  const LedgerLine& credit = entries->back().line;
  EXPECT_EQ(credit.kind, EntryKind::kCredit);
  EXPECT_EQ(credit.period, "2026-12");
  EXPECT_EQ(credit.amount, -1250000);
  EXPECT_EQ(credit.note, "node n0: XID 79 (fault in 2026-11, credited after it closed)");
  EXPECT_EQ((*entries)[1].line.amount, 5 * kMicros) << "November's signed total is as it was";
  EXPECT_TRUE(VerifyLedger(*entries, SodiumLedgerCrypto::VerifyOnly(), crypto_->PublicKey()).has_value());
}

TEST_F(ControllerBillingTest, ABudgetSetThroughTheControllerHoldsAJobWithTheReason) {
  Start();
  Bootstrap();
  ASSERT_TRUE(ctl_->Execute(BudgetSet{"team", 5 * kMicros, kNoCap}).has_value());
  Submit("big", 1, 4 * kHour);  // 10.00 USD projected, cut at the period end (2 h left): 5.00
  Submit("huge", 4, 4 * kHour);
  std::string reason = ctl_->ReadView([](const Controller::View& v) { return v.ReasonOf(allot::testing::OnlyJobNamed(v.state, "huge")); });
  EXPECT_EQ(reason,
            "held: budget of team for 2026-11: spent 0.00 USD + running jobs' projected 5.00 USD + this job's "
            "projected 20.00 USD > 5.00 USD");
  EXPECT_EQ(ctl_->Read([](const ClusterState& st) { return st.job(allot::testing::OnlyJobNamed(st, "big")).state; }), JobState::kRunning);
}

}  // namespace
}  // namespace allot
