// allotd with a rate card, as a real process driven over HTTP and by the `allot` CLI: budgets
// set with `allot budgets set` hold a job whose projected cost would break them (`allot
// explain` says why), `allot invoices` shows the month's draft (JSON and CSV), /v1/usage carries
// cost, `allot ledger verify --live` checks the daemon's ledger, and the ledger key is kept
// 0600 in the data directory across restarts.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "testing/free_port.h"
#include "testing/allotd_process.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

using Json = nlohmann::json;

class AllotdBillingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreeListenPort();
    std::ofstream(dir_ / "rates.yaml") << "currency: USD\ngpu_hour: {H100-80GB: 2.50}\ncpu_hour: 0.02\n"
                                          "memory_gib_hour: 0.003\norgs: {product: {accounting: showback}}\n";
  }
  void TearDown() override { Stop(); }
  void Launch() {
    std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    std::vector<std::string> args = {"--listen", "127.0.0.1:" + std::to_string(port_), "--data",
                                     (dir_ / "data").string(), "--tenants", example, "--simulated-fleet", example,
                                     "--rates", (dir_ / "rates.yaml").string()};
    pid_ = testing::LaunchAllotd(std::move(args), dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
  }
  void Stop() { testing::StopProcess(pid_, SIGTERM); }
  std::string Token() {
    std::ifstream in(dir_ / "data" / "admin-token");
    std::string token;
    in >> token;
    return token;
  }
  // Runs the CLI against the daemon; returns (exit code, stdout).
  std::pair<int, std::string> Cli(const std::string& args) {
    return testing::RunShell(std::string(ALLOT_BINARY) + " " + args + " --server http://127.0.0.1:" + std::to_string(port_) +
                             " --token " + Token() + " 2>&1");
  }
  Json Get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(Token().c_str());
    auto r = c.Get(path.c_str());
    EXPECT_TRUE(r && r->status == 200) << path << ": " << (r ? r->body : "no answer");
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }

  testing::ScratchDir dir_{"allotd-billing"};
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(AllotdBillingTest, BudgetsHoldJobsInvoicesAndTheLedgerAreServedAndTheKeyIsKept) {
  Launch();
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "data" / "ledger-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the ledger key is readable by its owner only";

  auto [set_rc, set_out] = Cli("budgets set research/vision --spend 10 --gpu-hours 1000");
  ASSERT_EQ(set_rc, 0) << set_out;
  EXPECT_NE(set_out.find("budget of research/vision: spend 10.00 USD"), std::string::npos) << set_out;
  auto [bad_rc, bad_out] = Cli("budgets set research/vision --spend ten");
  EXPECT_EQ(bad_rc, 1) << bad_out;
  EXPECT_NE(bad_out.find("spend: 'ten' is not an amount"), std::string::npos) << bad_out;

  // 8 GPUs for 2 h: 16 GPU-h × 2.50 = 40.00 USD (+ CPU and memory) > 10.00: held.
  std::ofstream(dir_ / "job.yaml") << "{name: big, tenant: research/vision, duration: 2h, time_limit: 2h, "
                                      "tasks: {gpus: 8, cpu: 1, memory: 1Gi}}\n";
  auto [sub_rc, sub_out] = Cli("submit -f " + (dir_ / "job.yaml").string());
  ASSERT_EQ(sub_rc, 0) << sub_out;
  std::string reason;
  for (int i = 0; i < 100 && reason.empty(); ++i) {
    Json j = Get("/v1/jobs/big/explain");
    reason = j["reason"].is_string() ? j["reason"].get<std::string>() : "";
    if (reason.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(reason.rfind("held: budget of research/vision for ", 0), 0u) << reason;
  EXPECT_NE(reason.find("+ this job's projected 40."), std::string::npos) << reason;
  auto [ex_rc, ex_out] = Cli("explain big");
  EXPECT_EQ(ex_rc, 0);
  EXPECT_NE(ex_out.find("held: budget of research/vision"), std::string::npos) << ex_out;
  auto [bl_rc, bl_out] = Cli("budgets list");
  EXPECT_EQ(bl_rc, 0);
  EXPECT_NE(bl_out.find("research/vision"), std::string::npos) << bl_out;

  // The month's invoice is an open draft; usage carries cost.
  Json inv = Get("/v1/invoices?org=research");
  EXPECT_EQ(inv["status"], "open");
  EXPECT_EQ(inv["org"], "research");
  EXPECT_EQ(inv["total"]["currency"], "USD");
  auto [inv_rc, inv_out] = Cli("invoices --org research");
  EXPECT_EQ(inv_rc, 0) << inv_out;
  EXPECT_NE(inv_out.find("invoice research "), std::string::npos) << inv_out;
  auto [csv_rc, csv_out] = Cli("invoices --org research --csv");
  EXPECT_EQ(csv_rc, 0);
  EXPECT_NE(csv_out.find("period,"), std::string::npos) << csv_out;
  auto [nf_rc, nf_out] = Cli("invoices --org nowhere");
  EXPECT_EQ(nf_rc, 1);
  EXPECT_NE(nf_out.find("org 'nowhere' does not exist"), std::string::npos) << nf_out;
  Json usage = Get("/v1/usage");
  ASSERT_FALSE(usage["tenants"].empty());
  EXPECT_TRUE(usage["tenants"][0].contains("cost")) << usage.dump();

  // The live ledger verifies (no month has closed yet: no entries).
  auto [v_rc, v_out] = Cli("ledger verify --live");
  EXPECT_EQ(v_rc, 0) << v_out;
  EXPECT_NE(v_out.find("ledger intact: 0 entries"), std::string::npos) << v_out;

  // A restart keeps the key (the same public key in the ledger's header) and the budget.
  httplib::Client c("127.0.0.1", port_);
  c.set_bearer_token_auth(Token().c_str());
  std::string header = c.Get("/v1/ledger")->body;
  Stop();
  Launch();
  httplib::Client c2("127.0.0.1", port_);
  c2.set_bearer_token_auth(Token().c_str());
  EXPECT_EQ(c2.Get("/v1/ledger")->body, header);
  Json budgets = Get("/v1/budgets");
  ASSERT_EQ(budgets["budgets"].size(), 1u);
  EXPECT_EQ(budgets["budgets"][0]["spend"]["amount_micros"], 10000000);
  EXPECT_EQ(budgets["budgets"][0]["gpu_hours"], 1000.0);
}

TEST_F(AllotdBillingTest, ReconcileExitsZeroWhenNothingIsListedAndTwoOnABadTolerance) {
  Launch();
  // A simulated fleet has no agents: nothing to compare, nothing listed.
  auto [rc, out] = Cli("reconcile --since 1h --tolerance 10s --tolerance-pct 2");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("0 allocation(s) compared, 0 within 10s / 2%"), std::string::npos) << out;
  auto [json_rc, json_out] = Cli("reconcile -o json");
  EXPECT_EQ(json_rc, 0) << json_out;
  EXPECT_EQ(Json::parse(json_out, nullptr, false)["findings"], Json::array()) << json_out;
  auto [bad_rc, bad_out] = Cli("reconcile --tolerance soon");
  EXPECT_EQ(bad_rc, 2);
  EXPECT_NE(bad_out.find("--tolerance: 'soon' is not a duration like 5s or 500ms"), std::string::npos) << bad_out;
}

// A correction is a new adjustment entry on the open month's invoice: the chain still verifies,
// the draft invoice carries it, and bad input is refused naming the field with nothing written.
TEST_F(AllotdBillingTest, AnAdjustmentIsANewEntryOnTheOpenInvoiceAndBadOnesChangeNothing) {
  Launch();
  auto [rc, out] = Cli("ledger adjust research/vision --amount -12.50 --note \"ticket 4411: a bad image\"");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("adjustment 1 on research/vision's "), std::string::npos) << out;
  EXPECT_NE(out.find(" invoice: -12.50 USD (ticket 4411: a bad image)"), std::string::npos) << out;

  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"research/vision --amount twelve --note x", "amount: 'twelve' is not an amount"},
           {"research/vision --amount 0 --note x", "amount: 0; expected a correction other than zero"},
           {"nowhere --amount 1 --note x", "tenant: 'nowhere' does not exist"},
           {"research/vision --amount 1 --note \"\"", "note: ''; expected why"}}) {
    auto [bad_rc, bad_out] = Cli("ledger adjust " + args);
    EXPECT_EQ(bad_rc, 1) << args << ": " << bad_out;
    EXPECT_NE(bad_out.find(says), std::string::npos) << bad_out;
  }

  auto [v_rc, v_out] = Cli("ledger verify --live");
  EXPECT_EQ(v_rc, 0) << v_out;
  EXPECT_NE(v_out.find("ledger intact: 1 entries"), std::string::npos) << v_out << "the refused ones wrote nothing";
  Json inv = Get("/v1/invoices?org=research");
  EXPECT_EQ(inv["status"], "open");
  EXPECT_EQ(inv["by_class"]["adjustment"], -12500000) << inv.dump();
  EXPECT_EQ(inv["total"]["amount"], "-12.50") << inv.dump();
  ASSERT_EQ(inv["lines"].size(), 1u);
  EXPECT_EQ(inv["lines"][0]["note"], "ticket 4411: a bad image");
  Json audit = Get("/v1/audit");
  int adjusts = 0;
  for (const Json& r : audit["records"]) adjusts += r["action"] == "ledger.adjust";
  EXPECT_EQ(adjusts, 5) << "each attempt is audited, refusals included";
}

}  // namespace
}  // namespace allot
