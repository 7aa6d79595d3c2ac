// Every number the API takes has a range checked where it is read: durations, GPU shares,
// CPU, memory, money, query integers. A value outside it is a 400 naming the field, the value
// and the range; nothing wraps, saturates or is refused later by the scheduler instead.
#include "billing/sodium_crypto.h"
#include "metering/budget_gate.h"
#include "testing/api_fixture.h"

namespace allot {
namespace {

class ApiNumbersTest : public testing::ApiFixture {
 protected:
  // With a rate card, so the ledger and budget routes answer.
  void Configure(ControllerOptions& o) override {
    auto billing = std::make_shared<BillingSetup>();
    billing->card.gpu_hour["H100-80GB"] = 2500000;
    o.metering = std::make_shared<MeteringSink>(billing, std::make_shared<SodiumLedgerCrypto>(SodiumLedgerCrypto::Generate()));
    o.scheduler.gate = std::make_shared<BudgetGateFactory>(billing);
  }
  void SetUp() override {
    ApiFixture::SetUp();
    AddTenant("org");
    AddTenant("org/team");
  }
  // Expects a 400 whose message holds each of `parts`.
  void ExpectRefused(const std::pair<int, Json>& reply, std::initializer_list<std::string> parts) {
    const auto& [status, body] = reply;
    EXPECT_EQ(status, 400) << body;
    std::string message = body.is_object() && body.contains("error") ? body["error"]["message"].get<std::string>() : body.dump();
    for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
  }
  std::string JobWith(const std::string& name, const std::string& fields) {
    return R"({"name": ")" + name + R"(", "tenant": "org/team", )" + fields + "}";
  }
};

TEST_F(ApiNumbersTest, QueryIntegersPastTheirRangeAreRefusedNotWrappedOrSaturated) {
  ASSERT_EQ(Post("/v1/jobs", JobWith("train", R"("duration": "1h", "tasks": {"gpus": 1})")).first, 201);
  // std::atoll saturated this to INT64_MAX, and after + 1 wrapped to the first record.
  ExpectRefused(Get("/v1/audit?after=99999999999999999999"), {"after: '99999999999999999999'", "from 0 to 2147483647"});
  ExpectRefused(Get("/v1/audit?after=-7"), {"after: '-7'"});
  // run = 2^32 was cast to int: run 0's log.
  ExpectRefused(Get("/v1/jobs/train/logs?run=4294967296"), {"run: '4294967296'", "from 0 to 2147483647"});
  ExpectRefused(Get("/v1/jobs/train/logs?offset=18446744073709551616"), {"offset: '18446744073709551616'"});
  // strtoll saturated this to INT64_MAX, which was in range.
  ExpectRefused(Get("/v1/events?since=99999999999999999999"), {"since: '99999999999999999999'"});
  ExpectRefused(Get("/v1/jobs?limit=1x"), {"limit: '1x'", "from 1 to 1000"});
  EXPECT_EQ(Get("/v1/audit?after=0").first, 200);
  EXPECT_EQ(Get("/v1/jobs/train/logs?run=0").first, 200);
}

TEST_F(ApiNumbersTest, AnAdjustmentPastTheLargestAmountIsRefusedAndTheInvoiceNeverWraps) {
  // -9223372036854.775808 was read as INT64_MIN; the next adjustment wrapped the invoice to
  // +9.2 trillion.
  ExpectRefused(Post("/v1/ledger/adjustments", R"({"tenant": "org/team", "amount": "-9223372036854.775808", "note": "n"})"),
                {"amount: '-9223372036854.775808'"});
  ExpectRefused(Post("/v1/ledger/adjustments", R"({"tenant": "org/team", "amount": "1000000000.000001", "note": "n"})"),
                {"amount: '1000000000.000001'", "from -1000000000 to 1000000000"});
  auto [s, made] = Post("/v1/ledger/adjustments", R"({"tenant": "org/team", "amount": "-1000000000", "note": "refund"})");
  ASSERT_EQ(s, 201) << made;
  auto [si, invoice] = Get("/v1/invoices?org=org");
  ASSERT_EQ(si, 200) << invoice;
  EXPECT_EQ(invoice["total"]["amount_micros"], -1000000000LL * 1000000) << invoice;
}

TEST_F(ApiNumbersTest, BudgetCapsPastTheLargestAmountAreRefused) {
  ExpectRefused(Post("/v1/budgets", R"({"tenant": "org/team", "spend": "9223372036854.775808"})"), {"spend", "'9223372036854.775808'"});
  ExpectRefused(Post("/v1/budgets", R"({"tenant": "org/team", "spend": "1000000001"})"), {"spend", "'1000000001'"});
  EXPECT_EQ(Post("/v1/budgets", R"({"tenant": "org/team", "spend": "1000000000"})").first, 200);
}

}  // namespace
}  // namespace allot
