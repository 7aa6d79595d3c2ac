#include "allotd/config.h"

#include "core/quantity.h"
#include "spec/field_reader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace allot {

Result<DaemonConfig> LoadDaemonConfig(const std::string& path, DaemonConfig base) {
  std::ifstream in(path);
  if (!in) return Err(NotFound(path + ": cannot open the config file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseDaemonConfig(text.str(), path, std::move(base));
}

namespace {

// alerts: {failed_logins: 10, failed_login_window: 5m, …}: each one given replaces the default.
Result<AlertThresholds> ReadAlertThresholds(const YamlReader& rd, const YAML::Node& n, AlertThresholds t) {
  if (!n.IsMap()) return Err(rd.Error(n, "alerts", "expected a mapping such as {failed_logins: 10, failed_login_window: 5m}"));
  TRY_STATUS(rd.Fields(n, "alerts", {"failed_logins", "failed_login_window", "crash_loop_failures", "crash_loop_window",
                                     "ecc_corrected_rise", "ecc_window"}));
  auto shown = [](const YAML::Node& v) { return v.IsScalar() ? v.as<std::string>() : std::string("(not a scalar)"); };
  for (auto [key, out, lo] : {std::tuple<const char*, int*, int64_t>{"failed_logins", &t.failed_logins, 1},
                              {"crash_loop_failures", &t.crash_loop_failures, 1}}) {
    if (const YAML::Node v = n[key]) {
      auto x = rd.Integer(v, std::string("alerts.") + key, lo, 1000000);
      if (!x) return Err(rd.Error(v, std::string("alerts.") + key, "'" + shown(v) + "' is not valid; expected a count from 1 to 1000000"));
      *out = static_cast<int>(*x);
    }
  }
  if (const YAML::Node v = n["ecc_corrected_rise"]) {
    auto x = rd.Integer(v, "alerts.ecc_corrected_rise", 0, INT64_MAX);
    if (!x) return Err(rd.Error(v, "alerts.ecc_corrected_rise", "'" + shown(v) + "' is not valid; expected a count of errors, 0 or more"));
    t.ecc_corrected_rise = *x;
  }
  for (auto [key, out] : {std::pair<const char*, int64_t*>{"failed_login_window", &t.failed_login_window_ms},
                          {"crash_loop_window", &t.crash_loop_window_ms}, {"ecc_window", &t.ecc_window_ms}}) {
    if (const YAML::Node v = n[key]) {
      auto ms = v.IsScalar() ? ParseDurationMs(v.as<std::string>()) : Result<int64_t>(Err(InvalidArgument("")));
      if (!ms || *ms < 1000) {
        return Err(rd.Error(v, std::string("alerts.") + key, "'" + shown(v) + "' is not valid; expected a duration of at least 1s, such as 5m"));
      }
      *out = *ms;
    }
  }
  return t;
}

}  // namespace

Result<DaemonConfig> ParseDaemonConfig(const std::string& text, const std::string& path, DaemonConfig c) {
  auto loaded = LoadObject(text, path);
  if (!loaded) return Err(loaded.error());
  const YAML::Node root = *loaded;
  // The spec field reader (spec/field_reader.h): "FILE:LINE: SETTING: what; expected what".
  const YamlReader rd(path);
  c.file = path;
  if (root.IsNull()) return c;  // an empty file: the defaults
  if (!root.IsMap()) return Err(rd.Error(root, "(top level)", "expected a mapping of settings"));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto relative = [&](const std::string& f) { return f.empty() || f.front() == '/' ? f : (dir / f).string(); };
  try {
    TRY_STATUS(rd.Fields(root, "", {"listen", "metrics_listen", "data", "store", "tenants", "simulated_fleet", "tls", "rate_limit",
                                    "snapshot_every", "node_timeout", "history_interval", "scheduler", "rates", "description", "alert_webhook", "alert_webhook_ca", "alerts"}));
    auto string = [&](const YAML::Node& n, const std::string& key) -> Result<std::string> {
      if (!n.IsScalar() || n.Scalar().empty()) return Err(rd.Error(n, key, "expected a non-empty string"));
      return n.Scalar();
    };
    for (auto [key, out] : {std::pair<const char*, std::string*>{"listen", &c.listen}, {"metrics_listen", &c.metrics_listen}, {"data", &c.data},
                            {"store", &c.store}, {"simulated_fleet", &c.fleet_file},
                            {"rates", &c.rates_file}, {"alert_webhook", &c.alert_webhook},
                            {"alert_webhook_ca", &c.alert_webhook_ca}}) {
      if (const YAML::Node n = root[key]) TRY_ASSIGN(*out, string(n, key));
    }
    if (root["data"]) c.data = relative(c.data);
    if (root["simulated_fleet"]) c.fleet_file = relative(c.fleet_file);
    if (root["rates"]) c.rates_file = relative(c.rates_file);
    if (root["alert_webhook_ca"]) c.alert_webhook_ca = relative(c.alert_webhook_ca);
    if (const YAML::Node tls = root["tls"]) {
      if (!tls.IsMap() || !tls["cert"] || !tls["key"]) return Err(rd.Error(tls, "tls", "expected {cert: FILE, key: FILE}"));
      TRY_STATUS(rd.Fields(tls, "tls", {"cert", "key"}));
      std::string cert, key;
      TRY_ASSIGN(cert, string(tls["cert"], "tls.cert"));
      TRY_ASSIGN(key, string(tls["key"], "tls.key"));
      c.tls_cert = relative(cert);
      c.tls_key = relative(key);
    }
    auto shown = [](const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : std::string("(not a scalar)"); };
    if (const YAML::Node r = root["rate_limit"]) {
      double v = -1;
      if (!r.IsScalar() || !YAML::convert<double>::decode(r, v) || !(v >= 0) || v > 1e9) {
        return Err(rd.Error(r, "rate_limit", "'" + shown(r) + "' is not valid; expected requests per second, 0 (off) to 1000000000"));
      }
      c.rate_limit = v;
    }
    if (const YAML::Node n = root["snapshot_every"]) {
      auto v = rd.Integer(n, "snapshot_every", 0, INT64_MAX);
      if (!v) return Err(rd.Error(n, "snapshot_every", "'" + shown(n) + "' is not valid; expected a number of journal events, 0 (never) or more"));
      c.snapshot_every = *v;
    }
    if (const YAML::Node n = root["node_timeout"]) {
      auto v = n.IsScalar() ? ParseDurationMs(n.as<std::string>()) : Result<int64_t>(Err(InvalidArgument("")));
      if (!v || *v < 1000) {
        return Err(rd.Error(n, "node_timeout", "'" + shown(n) + "' is not valid; expected a duration of at least 1s, such as 15s"));
      }
      c.node_timeout_ms = *v;
    }
    if (const YAML::Node n = root["history_interval"]) {
      auto v = n.IsScalar() ? ParseDurationMs(n.as<std::string>()) : Result<int64_t>(Err(InvalidArgument("")));
      if (!v || *v < 1000 || *v > 3600 * 1000) {
        return Err(rd.Error(n, "history_interval", "'" + shown(n) + "' is not valid; expected a duration from 1s to 1h, such as 60s"));
      }
      c.history_interval_ms = *v;
    }
    if (const YAML::Node n = root["alerts"]) TRY_ASSIGN(c.alerts, ReadAlertThresholds(rd, n, c.alerts));
    const YAML::Node tenants = root["tenants"];
    const bool inline_tenants = tenants && !tenants.IsScalar();
    if (tenants && tenants.IsScalar()) c.tenants_file = relative(tenants.as<std::string>());
    if (inline_tenants || root["scheduler"]) {
      // The scenario reader owns these two sections, with the same messages a scenario gets.
      auto sc = ParseTenantsAndScheduler(text, path, inline_tenants);
      if (!sc) return Err(sc.error());
      if (inline_tenants) c.tenants = std::move(sc->tenants);
      if (root["scheduler"]) c.scheduler = sc->scheduler;
    }
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg));
  }
  return c;
}

}  // namespace allot
