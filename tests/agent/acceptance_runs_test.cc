// A booked node's acceptance runs (agent/node/acceptance_runs.h): the node's checks afresh and the
// operator's --acceptance-command diagnostics, reported as passed or with each failing check named;
// run once while asked, again when asked again.
#include "agent/node/acceptance_runs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace allot {
namespace {

AcceptanceAsk Ask(uint32_t reservation) { return {"own", reservation, 0, 1000, 2000}; }

// Reconciles `asks` until no run is running (at most 10 s).
std::vector<AcceptanceReport> Settled(AcceptanceRuns& runs, const std::vector<AcceptanceAsk>& asks) {
  for (int i = 0; i < 500; ++i) {
    runs.Reconcile(asks, 42);
    auto reports = runs.Reports();
    if (std::none_of(reports.begin(), reports.end(), [](const AcceptanceReport& r) { return r.state == "running"; })) {
      return reports;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return runs.Reports();
}

TEST(AcceptanceRunsTest, AFailingAcceptanceCommandIsReportedByNameWithItsExit) {
  AcceptanceRunOptions o;
  o.health.commands = {"true"};
  o.commands = {"false", "echo diag ok"};
  o.nvml_checks = [] { return std::vector<HealthCheck>{{"nvml.ecc", true, "", ""}}; };
  AcceptanceRuns runs(o);
  runs.Reconcile({Ask(7)}, 1);
  ASSERT_EQ(runs.Reports().size(), 1u);
  auto reports = Settled(runs, {Ask(7)});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].reservation_id, 7u);
  EXPECT_EQ(reports[0].state, "failed");
  ASSERT_EQ(reports[0].failures.size(), 1u);
  EXPECT_EQ(reports[0].failures[0], (AcceptanceFailure{"cmd:false", "exited with code 1"}));
  EXPECT_EQ(reports[0].Why(), "cmd:false: exited with code 1");
  EXPECT_EQ(reports[0].at_ms, 42);
}

TEST(AcceptanceRunsTest, TheNodesOwnChecksCountAndARunIsMadeOnceWhileAsked) {
  int samples = 0;
  AcceptanceRunOptions o;
  o.health.commands = {"echo fan stuck; exit 4"};
  o.nvml_checks = [&] {
    ++samples;
    return std::vector<HealthCheck>{{"nvml.xid", false, "hardware", "GPU 1: Xid 79"}};
  };
  AcceptanceRuns runs(o);
  auto reports = Settled(runs, {Ask(1)});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].Why(), "nvml.xid: GPU 1: Xid 79; cmd:echo fan stuck; exit 4: exited with code 4: fan stuck");
  for (int i = 0; i < 5; ++i) runs.Reconcile({Ask(1)}, 43);
  EXPECT_EQ(samples, 1) << "settled once";
  // The ask goes away: its result with it; asked again, it runs again.
  runs.Reconcile({}, 44);
  EXPECT_TRUE(runs.Reports().empty());
  reports = Settled(runs, {Ask(1)});
  EXPECT_EQ(samples, 2);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].state, "failed");
}

TEST(AcceptanceRunsTest, AllChecksPassingPasses) {
  AcceptanceRunOptions o;
  o.commands = {"true"};
  AcceptanceRuns runs(o);
  auto reports = Settled(runs, {Ask(1), Ask(2)});
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].state, "passed");
  EXPECT_EQ(reports[1].state, "passed");
  EXPECT_TRUE(reports[0].failures.empty());
}

}  // namespace
}  // namespace allot
