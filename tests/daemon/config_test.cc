// allotd's config file: defaults, every setting read, relative files taken from the file's
// directory, the scenario sections read by the scenario reader, and bad settings named.
#include "allotd/config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/scratch_dir.h"

namespace allot {
namespace {

class DaemonConfigTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::string path = (dir_ / "allot.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::string ErrorOf(const std::string& text) {
    auto c = LoadDaemonConfig(Write(text));
    EXPECT_FALSE(c.has_value());
    return c ? "" : c.error().message();
  }
  testing::ScratchDir dir_{"config"};
};

TEST_F(DaemonConfigTest, AnEmptyFileKeepsTheDefaults) {
  auto c = LoadDaemonConfig(Write(""));
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->listen, "127.0.0.1:7070");
  EXPECT_EQ(c->store, "sqlite");
  EXPECT_EQ(c->snapshot_every, 100000);
  EXPECT_EQ(c->scheduler.pass_interval_ms, 60000);
  EXPECT_EQ(c->history_interval_ms, 60000);
}

TEST_F(DaemonConfigTest, ReadsEverySettingAndTheScenarioSections) {
  auto c = LoadDaemonConfig(Write(
      "listen: 0.0.0.0:8443\n"
      "data: state\n"
      "store: postgresql://allot@db/allot\n"
      "simulated_fleet: /etc/allot/fleet.yaml\n"
      "tls: {cert: tls/cert.pem, key: tls/key.pem}\n"
      "rate_limit: 50\n"
      "snapshot_every: 5000\n"
      "history_interval: 10s\n"
      "tenants:\n"
      "  - {path: research, guarantee: {cpu: 64}}\n"
      "  - {path: research/nlp, weight: 2}\n"
      "scheduler: {pass_interval: 5s, share_policy: allot}\n"));
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->listen, "0.0.0.0:8443");
  EXPECT_EQ(c->data, (dir_ / "state").string()) << "relative to the config file";
  EXPECT_EQ(c->store, "postgresql://allot@db/allot");
  EXPECT_EQ(c->fleet_file, "/etc/allot/fleet.yaml");
  EXPECT_EQ(c->tls_cert, (dir_ / "tls/cert.pem").string());
  EXPECT_EQ(c->rate_limit, 50);
  EXPECT_EQ(c->snapshot_every, 5000);
  EXPECT_EQ(c->history_interval_ms, 10000);
  ASSERT_EQ(c->tenants.size(), 2u);
  EXPECT_EQ(c->tenants[1].path, "research/nlp");
  EXPECT_EQ(c->scheduler.pass_interval_ms, 5000);
  EXPECT_TRUE(c->tenants_file.empty());
}

TEST_F(DaemonConfigTest, ReadsTheAlertWebhookAndThresholdsKeepingDefaultsForTheRest) {
  auto c = LoadDaemonConfig(Write("alert_webhook: http://alerts.example:9000/allot\nalert_webhook_ca: ca.pem\n"
                                  "alerts: {failed_logins: 20, crash_loop_window: 30m, ecc_corrected_rise: 0}\n"
                                  "tenants:\n  - {path: eu, business_hours: 'Mon-Fri 08:00-19:00 Europe/Berlin'}\n"));
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->alert_webhook, "http://alerts.example:9000/allot");
  EXPECT_EQ(c->alert_webhook_ca, (dir_ / "ca.pem").string()) << "relative to the config file";
  EXPECT_EQ(c->alerts.failed_logins, 20);
  EXPECT_EQ(c->alerts.failed_login_window_ms, 5 * 60'000) << "the default";
  EXPECT_EQ(c->alerts.crash_loop_failures, 5) << "the default";
  EXPECT_EQ(c->alerts.crash_loop_window_ms, 30 * 60'000);
  EXPECT_EQ(c->alerts.ecc_corrected_rise, 0);
  ASSERT_EQ(c->tenants.size(), 1u);
  EXPECT_EQ(c->tenants[0].business_hours, "Mon-Fri 08:00-19:00 Europe/Berlin");
  EXPECT_EQ(LoadDaemonConfig(Write(""))->alert_webhook, "") << "none unless given";
}

TEST_F(DaemonConfigTest, BadAlertThresholdsAndBusinessHoursAreNamedWithTheirLine) {
  std::string f = (dir_ / "allot.yaml").string();
  EXPECT_EQ(ErrorOf("alerts: {failed_logins: 0}\n"),
            f + ":1: alerts.failed_logins: '0' is not valid; expected a count from 1 to 1000000");
  EXPECT_EQ(ErrorOf("alerts:\n  ecc_window: soon\n"),
            f + ":2: alerts.ecc_window: 'soon' is not valid; expected a duration of at least 1s, such as 5m");
  EXPECT_EQ(ErrorOf("alerts: {failed_login: 3}\n"),
            f + ":1: alerts.failed_login: unknown field; expected one of: failed_logins, failed_login_window, "
                "crash_loop_failures, crash_loop_window, ecc_corrected_rise, ecc_window");
  EXPECT_EQ(ErrorOf("alerts: 5\n"), f + ":1: alerts: expected a mapping such as {failed_logins: 10, failed_login_window: 5m}");
  EXPECT_NE(ErrorOf("tenants:\n  - {path: eu, business_hours: 'weekdays 9-5'}\n")
                .find(f + ":2: tenants[0].business_hours: 'weekdays 9-5' is not three parts separated by single spaces"),
            std::string::npos)
      << ErrorOf("tenants:\n  - {path: eu, business_hours: 'weekdays 9-5'}\n");
}

TEST_F(DaemonConfigTest, TenantsMayBeAFileName) {
  auto c = LoadDaemonConfig(Write("tenants: tenants.yaml\nscheduler: {pass_interval: 2s}\n"));
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->tenants_file, (dir_ / "tenants.yaml").string());
  EXPECT_TRUE(c->tenants.empty());
  EXPECT_EQ(c->scheduler.pass_interval_ms, 2000);
}

TEST_F(DaemonConfigTest, BadSettingsAreNamedWithTheirLine) {
  std::string f = (dir_ / "allot.yaml").string();
  EXPECT_EQ(ErrorOf("listen: a:1\nlisen: b\n"),
            f + ":2: lisen: unknown field; expected one of: listen, metrics_listen, data, store, tenants, simulated_fleet, tls, "
                "rate_limit, snapshot_every, node_timeout, history_interval, scheduler, rates, description, alert_webhook, alert_webhook_ca, alerts");
  EXPECT_EQ(ErrorOf("node_timeout: 200ms\n"),
            f + ":1: node_timeout: '200ms' is not valid; expected a duration of at least 1s, such as 15s");
  EXPECT_EQ(ErrorOf("history_interval: 500ms\n"),
            f + ":1: history_interval: '500ms' is not valid; expected a duration from 1s to 1h, such as 60s");
  EXPECT_EQ(ErrorOf("rate_limit: fast\n"), f + ":1: rate_limit: 'fast' is not valid; expected requests per second, 0 (off) to 1000000000");
  EXPECT_EQ(ErrorOf("rate_limit: .inf\n"), f + ":1: rate_limit: '.inf' is not valid; expected requests per second, 0 (off) to 1000000000");
  EXPECT_EQ(ErrorOf("tls: {cert: a.pem, key: b.pem, ca: c.pem}\n"), f + ":1: tls.ca: unknown field; expected one of: cert, key");
  EXPECT_EQ(ErrorOf("snapshot_every: -3\n"),
            f + ":1: snapshot_every: '-3' is not valid; expected a number of journal events, 0 (never) or more");
  EXPECT_EQ(ErrorOf("tls: {cert: a.pem}\n"), f + ":1: tls: expected {cert: FILE, key: FILE}");
  EXPECT_EQ(ErrorOf("store: [a]\n"), f + ":1: store: expected a non-empty string");
  EXPECT_NE(ErrorOf("scheduler: {pass_interval: soon}\n").find(f + ":1: scheduler.pass_interval"), std::string::npos);
  EXPECT_NE(ErrorOf("x: 1\ntenants:\n  - {path: a, wieght: 2}\n").find(":1: x: unknown field"), std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {path: a, wieght: 2}\n").find(f + ":2: tenants[0].wieght: unknown field"), std::string::npos);
  EXPECT_EQ(ErrorOf("- a\n"), f + ":1: (top level): expected a mapping of settings");
  auto missing = LoadDaemonConfig((dir_ / "nope.yaml").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(), (dir_ / "nope.yaml").string() + ": cannot open the config file");
}

}  // namespace
}  // namespace allot
