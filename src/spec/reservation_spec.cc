#include "spec/reservation_spec.h"

#include <algorithm>

#include "spec/require_reader.h"

#include "core/calendar.h"
#include "core/names.h"
#include "core/quantity.h"
#include "spec/field_limits.h"

namespace allot {
namespace {

Result<int64_t> Instant(const YamlReader& rd, const YAML::Node& n, const std::string& path, ReservationClock clock) {
  if (clock == ReservationClock::kVirtual) {
    return rd.Bounded(n, path, ParseDurationMs, 0, kMaxDurationMs, "a virtual time from 0s to 3650d, such as 2h");
  }
  auto s = rd.Scalar(n, path);
  if (!s) return Err(s.error());
  auto t = ParseRfc3339(*s);
  if (!t || *t < 0) {
    return Err(rd.Error(n, path, "'" + EscapeText(*s) + "' is not a time; expected RFC 3339 with an offset, such as "
                                 "2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z"));
  }
  return *t;
}

Result<int64_t> Length(const YamlReader& rd, const YAML::Node& n, const std::string& path) {
  return rd.Bounded(n, path, ParseDurationMs, 1000, kMaxDurationMs, "a duration from 1s to 3650d, such as 6h");
}

}  // namespace

Result<ReservationRequest> ReadReservation(const YamlReader& rd, const YAML::Node& n, const std::string& path,
                                           ReservationClock clock) {
  TRY_STATUS(rd.Fields(n, path, {"name", "tenant", "model", "gpus", "nodes", "topology", "start", "end", "duration",
                                 "every", "until", "drain_before", "orchestrator", "require"}));
  ReservationRequest r;
  r.line = n.Mark().is_null() ? 0 : n.Mark().line + 1;
  for (const char* key : {"name", "tenant", "model", "start"}) {
    if (!n[key]) return Err(rd.Error(n, YamlReader::Join(path, key), "missing; expected it"));
  }
  TRY_ASSIGN(r.name, rd.Scalar(n["name"], YamlReader::Join(path, "name")));
  TRY_STATUS(rd.At(n["name"], CheckName(YamlReader::Join(path, "name"), r.name)));
  TRY_ASSIGN(r.tenant, rd.Scalar(n["tenant"], YamlReader::Join(path, "tenant")));
  TRY_STATUS(rd.At(n["tenant"], CheckTenantPath(YamlReader::Join(path, "tenant"), r.tenant)));
  TRY_ASSIGN(r.model, rd.Scalar(n["model"], YamlReader::Join(path, "model")));
  if (static_cast<bool>(n["gpus"]) == static_cast<bool>(n["nodes"])) {
    return Err(rd.Error(n, YamlReader::Join(path, "gpus"), "give gpus (whole GPUs) or nodes (whole nodes), one of them"));
  }
  if (n["gpus"]) TRY_ASSIGN(r.gpus, rd.Integer(n["gpus"], YamlReader::Join(path, "gpus"), 1, 100'000));
  if (n["nodes"]) TRY_ASSIGN(r.nodes, rd.Integer(n["nodes"], YamlReader::Join(path, "nodes"), 1, 10'000));
  if (n["topology"]) {
    std::string t;
    TRY_ASSIGN(t, rd.Scalar(n["topology"], YamlReader::Join(path, "topology")));
    auto topology = ParseTopology(t);
    if (!topology) {
      return Err(rd.Error(n["topology"], YamlReader::Join(path, "topology"),
                          "'" + EscapeText(t) + "' is not valid; expected none, nvlink, rack or zone"));
    }
    r.topology = *topology;
  }
  TRY_ASSIGN(r.start_ms, Instant(rd, n["start"], YamlReader::Join(path, "start"), clock));
  if (static_cast<bool>(n["end"]) == static_cast<bool>(n["duration"])) {
    return Err(rd.Error(n, YamlReader::Join(path, "end"), "give end or duration, one of them"));
  }
  if (n["end"]) {
    TRY_ASSIGN(r.end_ms, Instant(rd, n["end"], YamlReader::Join(path, "end"), clock));
    if (r.end_ms <= r.start_ms) return Err(rd.Error(n["end"], YamlReader::Join(path, "end"), "is not after start; expected a later time"));
  } else {
    int64_t d = 0;
    TRY_ASSIGN(d, Length(rd, n["duration"], YamlReader::Join(path, "duration")));
    r.end_ms = r.start_ms + d;
  }
  if (static_cast<bool>(n["every"]) != static_cast<bool>(n["until"])) {
    return Err(rd.Error(n, YamlReader::Join(path, n["every"] ? "until" : "every"), "every and until go together"));
  }
  if (n["every"]) {
    std::string every;
    TRY_ASSIGN(every, rd.Scalar(n["every"], YamlReader::Join(path, "every")));
    if (every == "daily") r.every_ms = kDayMs;
    else if (every == "weekly") r.every_ms = 7 * kDayMs;
    else TRY_ASSIGN(r.every_ms, Length(rd, n["every"], YamlReader::Join(path, "every")));
    if (r.every_ms < r.end_ms - r.start_ms) {
      return Err(rd.Error(n["every"], YamlReader::Join(path, "every"), "'" + EscapeText(every) +
                                                           "' is shorter than the window; expected windows apart, "
                                                           "every at least the window's length"));
    }
    TRY_ASSIGN(r.until_ms, Instant(rd, n["until"], YamlReader::Join(path, "until"), clock));
    if (r.until_ms <= r.start_ms) return Err(rd.Error(n["until"], YamlReader::Join(path, "until"), "is not after start; expected a later time"));
  }
  if (n["drain_before"]) {
    TRY_ASSIGN(r.drain_before_ms, rd.Bounded(n["drain_before"], YamlReader::Join(path, "drain_before"), ParseDurationMs, 0,
                                             30 * kDayMs, "a duration from 0s to 30d, such as 30m"));
  }
  if (n["orchestrator"]) {
    const std::string at = YamlReader::Join(path, "orchestrator");
    std::string o;
    TRY_ASSIGN(o, rd.Scalar(n["orchestrator"], at));
    auto orchestrator = ParseOrchestrator(o);
    if (!orchestrator) {
      return Err(rd.Error(n["orchestrator"], at, "'" + EscapeText(o) + "' is not valid; expected none, slurm or hook"));
    }
    if (*orchestrator != Orchestrator::kNone && r.nodes == 0) {
      return Err(rd.Error(n["orchestrator"], at, "'" + o + "' needs whole nodes; expected nodes: N instead of gpus"));
    }
    r.orchestrator = *orchestrator;
  }
  if (n["require"]) TRY_ASSIGN(r.require, ReadRequire(rd, n["require"], YamlReader::Join(path, "require")));
  return r;
}

Result<ReservationRequest> ReadReservationObject(const YAML::Node& root, const std::string& source) {
  return ReadObject<ReservationRequest>(root, source, "reservation", "name, tenant, model, gpus or nodes, start, and end or duration",
                                        [](const YamlReader& rd, const YAML::Node& n) {
                                          return ReadReservation(rd, n, "", ReservationClock::kWallClock);
                                        });
}

ReservationPlan PlanReservation(const ClusterState& state, const ReservationSpec& spec) {
  ReservationPlan plan{ReservationBooked{spec, {}}, 0, std::nullopt};
  const CapacityAsk ask = state.AskOf(spec);
  for (size_t i = 0; i < spec.windows.size(); ++i) {
    auto fit = state.book().Find(state.fleet(), state.resource_names(), ask, spec.windows[i]);
    if (!fit.ok()) {
      plan.refused_window = i;
      plan.shortfall = std::move(fit.shortfall);
      // The partial nodes the ask would have been offered but for its tenant's trust.
      CapacityAsk trusted = ask;
      trusted.confined_only = false;
      const Fleet& fleet = state.fleet();
      const auto n = !ask.confined_only ? 0 : std::count_if(fleet.nodes().begin(), fleet.nodes().end(), [&](const Node& x) {
        return fleet.partial_isolation().Test(x.id.value()) && ReservationBook::Offered(fleet, x, trusted);
      });
      if (n > 0) {
        plan.shortfall->reason += "; its tenant is untrusted: the " + std::to_string(n) + " node" + (n == 1 ? "" : "s") +
                                  " whose agent cannot confine tasks in every way (isolation=partial) " +
                                  (n == 1 ? "is" : "are") + " not offered to it";
      }
      return plan;
    }
    plan.booking.holds.push_back(std::move(fit.holds));
  }
  return plan;
}

Result<ReservationSpec> ResolveReservation(const ReservationRequest& r, const ClusterState& state,
                                           const std::string& where) {
  ReservationSpec spec;
  spec.name = r.name;
  spec.tenant = state.tenants().Find(r.tenant);
  if (!spec.tenant.valid() || spec.tenant == state.tenants().root()) {
    return Err(InvalidArgument(where + "tenant: unknown tenant '" + r.tenant + "'"));
  }
  spec.gpu_resource = state.resource_names().Find("gpu/" + r.model);
  if (spec.gpu_resource == ResourceNames::kInvalid) {
    std::string known;
    for (int i = 0; i < state.resource_names().size(); ++i) {
      const std::string& n = state.resource_names().Name(static_cast<ResourceId>(i));
      if (n.rfind("gpu/", 0) == 0) known += (known.empty() ? "" : ", ") + n.substr(4);
    }
    return Err(InvalidArgument(where + "model: no node in the fleet has GPU model '" + EscapeText(r.model) +
                               "'; expected one of: " + (known.empty() ? "(none)" : known)));
  }
  spec.gpus = r.gpus;
  spec.nodes = r.nodes;
  spec.topology = r.topology;
  spec.drain_before_ms = r.drain_before_ms;
  spec.orchestrator = r.orchestrator;
  spec.require = r.require;
  const int64_t length = r.end_ms - r.start_ms;
  for (int64_t start = r.start_ms;; start += r.every_ms) {
    if (spec.windows.size() == kMaxReservationWindows) {
      return Err(InvalidArgument(where + "until: more than " + std::to_string(kMaxReservationWindows) +
                                 " windows; expected a nearer until or a longer every"));
    }
    spec.windows.push_back({start, start + length});
    if (r.every_ms == 0 || start + r.every_ms >= r.until_ms) break;
  }
  if (Status s = spec.Check(); !s.ok()) return Err(InvalidArgument(where + s.message()));
  return spec;
}

}  // namespace allot
