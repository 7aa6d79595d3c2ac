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
  void ExpectRefused(const std::pair<int, Json>& reply, const std::vector<std::string>& parts) {
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

// start + 9223372036854775 s wrapped: the job "finished" 16 ms after it started.
TEST_F(ApiNumbersTest, ADurationPastTenYearsIsRefusedNotWrapped) {
  ExpectRefused(Post("/v1/jobs", JobWith("long", R"("duration": "9223372036854775s", "tasks": {"gpus": 1})")),
                {"job.duration: '9223372036854775s' is out of range", "from 1ms to 3650d"});
  ExpectRefused(Post("/v1/jobs", JobWith("long", R"("duration": "99999999999999999999d", "tasks": {"gpus": 1})")),
                {"job.duration: '99999999999999999999d'", "from 1ms to 3650d"});
  ExpectRefused(Post("/v1/jobs", JobWith("long", R"("duration": "1h", "time_limit": "3651d", "tasks": {"gpus": 1})")),
                {"job.time_limit: '3651d'", "from 1ms to 3650d"});
  ASSERT_EQ(Post("/v1/jobs", JobWith("long", R"("duration": "3650d", "tasks": {"gpus": 1})")).first, 201);
  now_ += 3600 * 1000;
  ASSERT_TRUE(ctl_->Sync().ok());
  EXPECT_EQ(Get("/v1/jobs/long").second["state"], "running") << "an hour into ten years";
}

// 0.0001 GPU was taken by the parser (it rounds to 2 of 21000 units) and refused by the scheduler.
TEST_F(ApiNumbersTest, AGpuShareBelowAThousandthIsRefusedWhereItIsRead) {
  ExpectRefused(Post("/v1/jobs", JobWith("tiny", R"("duration": "1h", "tasks": {"gpus": 0.0001})")),
                {"job.tasks.gpus: '0.0001' is less than the smallest GPU share", "expected 0 or from 0.001 to 64"});
  ExpectRefused(Post("/v1/jobs", JobWith("tiny", R"("duration": "1h", "tasks": {"gpus": "0.0004"})")), {"job.tasks.gpus: '0.0004'"});
  // The smallest share passes the parser (this fleet has no shared pool to place it on).
  auto [s, j] = Post("/v1/jobs", JobWith("small", R"("duration": "1h", "tasks": {"gpus": 0.001})"));
  EXPECT_EQ(s, 201) << j;
}

// Each quantity of a job or a tenant: out of range is a 400 naming the field, the value and
// the range (docs/scenario.md, "Ranges").
TEST_F(ApiNumbersTest, EveryQuantityOutOfItsRangeIsRefusedNamingFieldValueAndRange) {
  struct Case {
    const char* fields;
    std::vector<std::string> parts;
  };
  const Case jobs[] = {
      {R"("duration": "1h", "tasks": {"cpu": 10001})", {"job.tasks.cpu: '10001' is out of range", "CPUs from 0 to 10000"}},
      {R"("duration": "1h", "tasks": {"memory": "65Ti"})", {"job.tasks.memory: '65Ti' is out of range", "from 0Mi to 64Ti"}},
      {R"("duration": "1h", "tasks": {"count": 100001})", {"job.tasks.count: '100001'", "from 1 to 100000"}},
      {R"("duration": "1h", "tasks": {"gpus": 65})", {"job.tasks.gpus: '65'", "at most 64"}},
      {R"("duration": "1h", "grace": "2d", "tasks": {"gpus": 1})", {"job.grace: '2d' is out of range", "from 0s to 1d"}},
      {R"("duration": "1h", "min_runtime": "4000d", "tasks": {"gpus": 1})", {"job.min_runtime: '4000d'", "from 0s to 3650d"}},
      {R"("duration": "1h", "checkpoint": {"interval": "0s"}, "tasks": {"gpus": 1})", {"job.checkpoint.interval: '0s'", "from 1ms"}},
      {R"("duration": "1h", "priority": 1000001, "tasks": {"gpus": 1})", {"job.priority: '1000001'", "from -1000000 to 1000000"}},
      {R"("duration": "1h", "tasks": {"mps": {"percent": 50, "memory": "2Ti"}})", {"job.tasks.mps.memory: '2Ti'", "from 1Mi to 1Ti"}},
  };
  for (const Case& c : jobs) ExpectRefused(Post("/v1/jobs", JobWith("q", c.fields)), {c.parts.begin(), c.parts.end()});
  const Case tenants[] = {
      {R"("weight": 0)", {"tenant.weight: '0' is out of range", "from 0.001 to 1000000"}},
      {R"("max": {"gpu/H100-80GB": 1000001})", {"tenant.max.gpu/H100-80GB: '1000001'", "GPUs from 0 to 1000000"}},
      {R"("guarantee": {"cpu": "100000001"})", {"tenant.guarantee.cpu: '100000001'", "CPUs from 0 to 100000000"}},
      {R"("max": {"memory": "1048577Ti"})", {"tenant.max.memory: '1048577Ti'", "from 0Mi to 1048576Ti"}},
  };
  for (const Case& c : tenants) {
    ExpectRefused(Post("/v1/tenants", std::string(R"({"path": "org/other", )") + c.fields + "}"), {c.parts.begin(), c.parts.end()});
  }
}

}  // namespace
}  // namespace allot
