// allotd's settings: defaults, then `--config allot.yaml`, then flags (each flag given wins).
//
//   listen: 127.0.0.1:7070          # address:port of the API
//   metrics_listen: 127.0.0.1:9400  # optional: GET /metrics without a token, on its own port
//   data: ./allot-data              # the admin token, and the SQLite journal
//   store: sqlite                   # or a PostgreSQL URL: postgresql://user@host/db
//   tenants: tenants.yaml           # a scenario file whose tenants: seed a new journal,
//                                   #   or the tenants inline, as a scenario writes them
//   simulated_fleet: fleet.yaml     # a scenario file whose fleet: runs in-process
//   tls: {cert: server.pem, key: server.key}
//   rate_limit: 10000               # requests/s per token (0: off)
//   snapshot_every: 100000          # journal events between state snapshots (0: never)
//   node_timeout: 15s               # an agent silent this long: its node is lost, jobs requeued
//   history_interval: 60s           # how often the dashboard's charts are sampled (GET /v1/history)
//   rates: rates.yaml               # a rate card (billing/rate_card_yaml.h): meter, close
//                                   #   monthly into the signed ledger, enforce budgets
//   scheduler: {pass_interval: 60s, share_policy: allot}   # a scenario's scheduler section
//   alert_webhook: https://alerts.example/allot   # anomaly alerts are POSTed here (docs/alerts.md)
//   alert_webhook_ca: ca.pem        # https: the CAs to trust (default: the system's)
//   alerts: {failed_logins: 10, failed_login_window: 5m, crash_loop_failures: 5,
//            crash_loop_window: 15m, ecc_corrected_rise: 100, ecc_window: 1h}   # the defaults
//
// Relative file names are taken from the config file's directory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "alerting/alert.h"
#include "core/status.h"
#include "scheduler/config.h"
#include "spec/scenario.h"

namespace allot {

struct DaemonConfig {
  std::string file;  // the config file read, if any (for messages)
  std::string listen = "127.0.0.1:7070";
  std::string metrics_listen;  // empty: /metrics only on `listen`, with a token
  std::string data = "./allot-data";
  std::string store = "sqlite";
  std::string tenants_file;
  std::vector<ScenarioTenant> tenants;  // inline in the config file
  std::string fleet_file;
  std::string rates_file;  // "" : no metering, no budgets enforced
  std::string tls_cert;
  std::string tls_key;
  double rate_limit = 10000;
  int64_t snapshot_every = 100000;
  int64_t node_timeout_ms = 15000;
  int64_t history_interval_ms = 60000;
  SchedulerConfig scheduler;
  std::string alert_webhook;  // "" : alerts are kept, counted and logged, not posted
  std::string alert_webhook_ca;
  AlertThresholds alerts;
};

// Reads `path` over `base` (the defaults). Errors read "FILE:LINE: FIELD: what; expected what".
Result<DaemonConfig> LoadDaemonConfig(const std::string& path, DaemonConfig base = {});
// The same from the file's text; `path` names it in errors and anchors relative file names.
Result<DaemonConfig> ParseDaemonConfig(const std::string& text, const std::string& path, DaemonConfig base = {});

}  // namespace allot
