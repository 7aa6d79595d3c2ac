#include "spec/service_reader.h"

#include "core/names.h"
#include "core/quantity.h"
#include "spec/field_limits.h"

namespace allot {

bool IsServiceObject(const YAML::Node& n) {
  if (!n.IsMap() || !n["kind"] || !n["kind"].IsScalar()) return false;
  std::string k = n["kind"].Scalar();
  return k == "service" || (k == "inference" && (n["replicas"] || n["min_replicas"] || n["max_replicas"]));
}

namespace {

Status ReadAutoscale(const YamlReader& rd, const YAML::Node& n, const std::string& path, AutoscaleSpec& a) {
  if (Status _s = rd.Fields(n, path, {"target", "stable_window", "panic_window", "panic_threshold", "scale_down_delay"}); !_s.ok()) return _s;
  if (!n["target"]) return rd.Error(n, path + ".target", "required: the load one replica takes (in-flight requests or queue depth)");
  auto milli = [&](const char* key, int64_t& out, int64_t lo, int64_t hi, const std::string& want) -> Status {
    if (!n[key]) return Status::Ok();
    auto v = rd.Bounded(n[key], path + "." + key, ParseMilli, lo, hi, want);
    if (!v) return v.error();
    out = *v;
    return Status::Ok();
  };
  auto duration = [&](const char* key, int64_t& out, int64_t lo, const std::string& want) -> Status {
    if (!n[key]) return Status::Ok();
    auto v = rd.Bounded(n[key], path + "." + key, ParseDurationMs, lo, 86'400'000, want);
    if (!v) return v.error();
    out = *v;
    return Status::Ok();
  };
  if (Status _s = milli("target", a.target_milli, 1, int64_t{1'000'000'000}, "a load above 0, e.g. 10 or 0.5"); !_s.ok()) return _s;
  if (Status _s = milli("panic_threshold", a.panic_threshold_milli, 1000, 100'000, "a multiple from 1 to 100, e.g. 2"); !_s.ok()) return _s;
  if (Status _s = duration("stable_window", a.stable_window_ms, 1000, "a duration from 1s to 1d, e.g. 60s"); !_s.ok()) return _s;
  if (Status _s = duration("panic_window", a.panic_window_ms, 1000, "a duration from 1s to 1d, e.g. 6s"); !_s.ok()) return _s;
  if (Status _s = duration("scale_down_delay", a.scale_down_delay_ms, 0, "a duration from 0s to 1d, e.g. 60s"); !_s.ok()) return _s;
  if (a.panic_window_ms > a.stable_window_ms) {
    return rd.Error(n["panic_window"], path + ".panic_window", "longer than the stable window; expected at most it");
  }
  return Status::Ok();
}

Status ReadLoad(const YamlReader& rd, const YAML::Node& n, const std::string& path, std::vector<std::pair<int64_t, int64_t>>& out) {
  if (!n.IsSequence() || n.size() == 0) return rd.Error(n, path, "expected a list such as [{at: 0s, value: 20}, {at: 2m, value: 40}]");
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    if (Status _s = rd.Fields(n[i], p, {"at", "value"}); !_s.ok()) return _s;
    if (!n[i]["at"]) return rd.Error(n[i], p + ".at", "required");
    if (!n[i]["value"]) return rd.Error(n[i], p + ".value", "required");
    auto at = rd.Bounded(n[i]["at"], p + ".at", ParseDurationMs, 0, kMaxDurationMs, "a time from 0s");
    if (!at) return at.error();
    auto v = rd.Bounded(n[i]["value"], p + ".value", ParseMilli, 0, int64_t{1'000'000'000'000}, "a load from 0, e.g. 20");
    if (!v) return v.error();
    if (!out.empty() && *at <= out.back().first) return rd.Error(n[i]["at"], p + ".at", "not after the previous point; expected times in order");
    out.emplace_back(*at, *v);
  }
  return Status::Ok();
}

}  // namespace

Result<ScenarioService> ReadService(const YamlReader& rd, const YAML::Node& n, const std::string& path, bool simulated) {
  ScenarioService out;
  out.line = n.Mark().line + 1;
  for (const char* key : {"duration", "time_limit", "checkpoint", "repeat", "reservation"}) {
    if (n[key]) {
      return Err(rd.Error(n[key], path + "." + key, std::string("does not apply to a service (its replicas run until it is deleted); ") +
                                                        "expected no " + key));
    }
  }
  std::vector<ScenarioJob> jobs;
  TRY_ASSIGN(jobs, ReadJob(rd, n, path, simulated, /*service=*/true));
  out.replica = std::move(jobs.front());
  out.replica.spec.kind = JobKind::kInference;
  out.submit_ms = out.replica.spec.submit_ms;
  ServiceSpec& s = out.spec;
  s.name = out.replica.spec.name;
  if (s.name.size() > kMaxServiceNameLength) {
    return Err(rd.Error(n["name"], path + ".name", "'" + s.name + "' is " + std::to_string(s.name.size()) + " characters; expected at most " +
                                                       std::to_string(kMaxServiceNameLength) + " (replicas are named NAME-r<k>)"));
  }
  auto count = [&](const char* key, int32_t& field) -> Status {
    if (!n[key]) return Status::Ok();
    auto v = rd.Integer(n[key], path + "." + key, 0, kMaxServiceReplicas);
    if (!v) return v.error();
    field = static_cast<int32_t>(*v);
    return Status::Ok();
  };
  TRY_STATUS(count("replicas", s.replicas));
  TRY_STATUS(count("min_replicas", s.min_replicas));
  TRY_STATUS(count("max_replicas", s.max_replicas));
  TRY_STATUS(count("max_unavailable", s.max_unavailable));
  TRY_STATUS(count("max_surge", s.max_surge));
  if (n["port"]) {
    auto v = rd.Integer(n["port"], path + ".port", 1, 65535);
    if (!v) return Err(v.error());
    s.port = static_cast<int32_t>(*v);
  }
  if (n["spread"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(n["spread"], path + ".spread"));
    auto sp = ParseSpread(t);
    if (!sp) return Err(rd.Error(n["spread"], path + ".spread", "'" + t + "' is not valid; expected node, rack, zone or none"));
    s.spread = *sp;
  }
  if (const YAML::Node a = n["autoscale"]) TRY_STATUS(ReadAutoscale(rd, a, path + ".autoscale", s.autoscale));
  bool scaled = n["autoscale"] || n["max_replicas"] || n["min_replicas"];
  if (scaled && !n["autoscale"]) return Err(rd.Error(n, path + ".autoscale", "required with min_replicas or max_replicas (its target)"));
  if (scaled && !n["max_replicas"]) return Err(rd.Error(n, path + ".max_replicas", "required with autoscale"));
  if (scaled && s.min_replicas > s.max_replicas) {
    return Err(rd.Error(n["min_replicas"], path + ".min_replicas", std::to_string(s.min_replicas) + " is more than max_replicas (" +
                                                                      std::to_string(s.max_replicas) + "); expected at most it"));
  }
  if (scaled && !n["replicas"]) s.replicas = std::max(s.min_replicas, 1);
  if (scaled && s.max_replicas == 0) return Err(rd.Error(n["max_replicas"], path + ".max_replicas", "0; expected at least 1"));
  if (s.max_unavailable == 0 && s.max_surge == 0) {
    return Err(rd.Error(n["max_unavailable"], path + ".max_unavailable", "0 with max_surge 0; expected one of them above 0"));
  }
  if (const YAML::Node l = n["load"]) {
    if (!simulated) return Err(rd.Error(l, path + ".load", "applies to scenario files only (the simulator's scripted load); "
                                                           "a running service's replicas report theirs through ALLOT_LOAD_FILE"));
    if (!s.autoscaled()) return Err(rd.Error(l, path + ".load", "given to a service that does not autoscale; expected autoscale too"));
    TRY_STATUS(ReadLoad(rd, l, path + ".load", out.load));
  }
  return out;
}

Result<ScenarioService> ReadServiceObject(const YAML::Node& root, const std::string& source, const TemplateCatalog* templates) {
  return ReadObject<ScenarioService>(root, source, "service", "name, tenant, kind: service, tasks and replicas",
                                     [](const YamlReader& rd, const YAML::Node& n) { return ReadService(rd, n, "service", false); },
                                     templates);
}

Status ResolveService(ScenarioService& s, const ClusterState& state, const std::string& where) {
  if (Status r = ResolveJob(s.replica, state, where); !r.ok()) return r;
  s.spec.tenant = s.replica.spec.tenant;
  s.spec.replica = s.replica.spec;
  s.spec.replica.submit_ms = 0;
  return Status::Ok();
}

}  // namespace allot
