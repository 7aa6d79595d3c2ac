#include "allotd/config.h"

#include "core/quantity.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace allot {

Result<DaemonConfig> LoadDaemonConfig(const std::string& path, DaemonConfig base) {
  std::ifstream in(path);
  if (!in) return Err(NotFound(path + ": cannot open the config file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseDaemonConfig(text.str(), path, std::move(base));
}

Result<DaemonConfig> ParseDaemonConfig(const std::string& text, const std::string& path, DaemonConfig c) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
  auto error = [&](const YAML::Node& n, const std::string& field, const std::string& msg) {
    return InvalidArgument(path + ":" + std::to_string(n.Mark().line + 1) + ": " + field + ": " + msg);
  };
  c.file = path;
  if (root.IsNull()) return c;  // an empty file: the defaults
  if (!root.IsMap()) return Err(error(root, "(top level)", "expected a mapping of settings"));
  static const std::set<std::string> kKeys = {"listen", "data", "store", "tenants", "simulated_fleet", "tls",
                                              "rate_limit", "snapshot_every", "node_timeout", "scheduler", "description",
                                              "rates"};
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto relative = [&](const std::string& f) { return f.empty() || f.front() == '/' ? f : (dir / f).string(); };
  try {
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      if (!kKeys.count(key)) {
        return Err(error(kv.first, key,
                         "unknown setting; expected listen, data, store, tenants, simulated_fleet, tls, rate_limit, "
                         "snapshot_every, node_timeout, scheduler, rates or description"));
      }
    }
    auto string = [&](const char* key, std::string& out) -> Status {
      const YAML::Node n = root[key];
      if (!n) return Status::Ok();
      if (!n.IsScalar() || n.as<std::string>().empty()) return error(n, key, "expected a non-empty string");
      out = n.as<std::string>();
      return Status::Ok();
    };
    for (auto [key, out] : {std::pair<const char*, std::string*>{"listen", &c.listen}, {"data", &c.data},
                            {"store", &c.store}, {"simulated_fleet", &c.fleet_file},
                            {"rates", &c.rates_file}}) {
      if (Status s = string(key, *out); !s.ok()) return Err(s);
    }
    if (root["data"]) c.data = relative(c.data);
    if (root["simulated_fleet"]) c.fleet_file = relative(c.fleet_file);
    if (root["rates"]) c.rates_file = relative(c.rates_file);
    if (const YAML::Node tls = root["tls"]) {
      if (!tls.IsMap() || tls.size() != 2 || !tls["cert"] || !tls["key"] || !tls["cert"].IsScalar() || !tls["key"].IsScalar()) {
        return Err(error(tls, "tls", "expected {cert: FILE, key: FILE}"));
      }
      c.tls_cert = relative(tls["cert"].as<std::string>());
      c.tls_key = relative(tls["key"].as<std::string>());
    }
    auto shown = [](const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : std::string("(not a scalar)"); };
    if (const YAML::Node r = root["rate_limit"]) {
      double v = -1;
      if (!r.IsScalar() || !YAML::convert<double>::decode(r, v) || v < 0) {
        return Err(error(r, "rate_limit", "'" + shown(r) + "' is not valid; expected requests per second, 0 (off) or more"));
      }
      c.rate_limit = v;
    }
    if (const YAML::Node n = root["snapshot_every"]) {
      int64_t v = -1;
      if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v) || v < 0) {
        return Err(error(n, "snapshot_every", "'" + shown(n) + "' is not valid; expected a number of journal events, 0 (never) or more"));
      }
      c.snapshot_every = v;
    }
    if (const YAML::Node n = root["node_timeout"]) {
      auto v = n.IsScalar() ? ParseDurationMs(n.as<std::string>()) : Result<int64_t>(Err(InvalidArgument("")));
      if (!v || *v < 1000) {
        return Err(error(n, "node_timeout", "'" + shown(n) + "' is not valid; expected a duration of at least 1s, such as 15s"));
      }
      c.node_timeout_ms = *v;
    }
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
