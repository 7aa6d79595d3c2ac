#include "server/api_json.h"

#include <charconv>
#include <algorithm>
#include <cstdio>

#include "core/calendar.h"
#include "core/quantity.h"
#include "placement/share_place.h"
#include "server/job_environment_json.h"
#include "spec/placement_view.h"
#include "spec/sizing_view.h"
#include "state/dependency.h"

namespace allot {

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

std::optional<int64_t> ParseApiTime(const std::string& v) {
  if (v.empty()) return std::nullopt;
  int64_t secs = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (end == v.data() + v.size()) {
    return ec == std::errc() && secs >= 0 && secs < 253402300800LL ? std::optional<int64_t>(secs * 1000) : std::nullopt;
  }
  // RFC 3339 by core's one reader (an offset or Z, an optional fraction), from 1970 on.
  auto t = ParseRfc3339(v);
  return t && *t >= 0 ? t : std::nullopt;
}

std::string FormatApiTime(int64_t ms) { return FormatRfc3339(ms); }

Json JobJson(const Controller::View& v, const Job& j) {
  const ClusterState& st = v.state;
  Json nodes = Json::array();
  for (const TaskPlacement& p : j.placement) {
    const std::string& n = st.fleet().node(p.node).name;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  const std::string& reason = v.ReasonOf(j.id);
  bool waiting = j.state == JobState::kPending || j.state == JobState::kRejected;
  Json out = {{"name", j.spec.name},
          {"tenant", st.tenants().tenant(j.spec.tenant).path},
          {"state", JobStateName(j.state)},
          {"kind", JobKindName(j.spec.kind)},
          {"command", j.spec.command},
          {"class", j.admission == AdmissionClass::kNone ? Json() : Json(AdmissionClassName(j.admission))},
          {"submitted", Seconds(j.spec.submit_ms)},
          {"started", j.first_started_ms < 0 ? Json() : Json(Seconds(j.first_started_ms))},
          {"finished", j.finished_ms < 0 ? Json() : Json(Seconds(j.finished_ms))},
          {"preemptions", j.preemptions},
          {"nodes", nodes},
          {"placement", Json::parse(PlacementJson(st, j))},
          {"reason", waiting && !reason.empty() ? Json(reason) : (waiting && !j.reason.empty() ? Json(j.reason) : Json())}};
  if (!j.spec.environment.empty()) {
    Json env = EnvironmentJson(j.spec.environment);
    if (j.spec.environment.shm_size_mib > 0) env["shm_size"] = FormatMemoryMiB(j.spec.environment.shm_size_mib);
    out["environment"] = std::move(env);
  }
  if (!j.spec.reservation.empty()) out["reservation"] = j.spec.reservation;
  // A service's replica (docs/services.md): GET /v1/services/NAME has its port and restarts.
  if (ServiceId s = st.ServiceOf(j.id); s.valid()) out["service"] = st.service(s).spec.name;
  // Task groups sized from a model: the model, the estimate and the allocation chosen, with why.
  if (!j.spec.sizing.empty()) out["sizing"] = SizingJson(j.spec);
  // The form the job and reservation readers take back: "driver>=550,interconnect=nvlink".
  if (!j.spec.require.empty()) out["require"] = FormatRequirements(j.spec.require);
  if (j.state == JobState::kFailed) out["reason"] = j.reason;
  // A noisy-neighbour hardening (state/interference.h): what each changed group holds instead
  // of what it asked for, until its next start after the response is lifted.
  if (!j.own_groups.empty()) {
    Json hardened = Json::array();
    for (size_t g = 0; g < j.own_groups.size() && g < j.spec.groups.size(); ++g) {
      if (j.own_groups[g] == j.spec.groups[g]) continue;
      hardened.push_back("task group " + std::to_string(g) + ": " + GroupHolds(st, j.spec.gpu_resource, j.spec.groups[g]) +
                         " instead of " + GroupHolds(st, j.spec.gpu_resource, j.own_groups[g]) +
                         ", away from a noisy neighbour");
    }
    out["hardened"] = std::move(hardened);
  }
  // Arrays and pipelines (docs/arrays.md).
  if (!j.spec.array.empty()) {
    const ArrayElement& a = j.spec.array;
    out["array"] = {{"name", a.array}, {"index", a.index}, {"count", a.count}, {"parallel", a.parallel}};
    if (a.frame >= 0) out["array"]["frame"] = a.frame;
  }
  if (j.spec.retries > 0) {
    out["retries"] = j.spec.retries;
    out["failures"] = j.failures;
    if (j.failures > 0 && j.reason.rfind("retry ", 0) == 0) out["last_failure"] = j.reason;
  }
  if (!j.spec.after.empty()) {
    Json after = Json::array();
    for (const Dependency& d : j.spec.after) after.push_back({{"job", d.job}, {"state", AfterStateName(d.state)}});
    out["after"] = std::move(after);
  }
  // The template its defaults came from (docs/templates.md), and the GPU memory each task states.
  if (!j.spec.template_name.empty()) out["template"] = {{"name", j.spec.template_name}, {"tenant", j.spec.template_tenant}};
  if (j.spec.vram_mib > 0) out["vram"] = FormatMemoryMiB(j.spec.vram_mib);
  // Runs lost to node failures: the count, and why the last one was (the reason a requeued job
  // keeps until a pass gives it another).
  if (j.requeues > 0) {
    out["requeues"] = j.requeues;
    if (j.reason.rfind("requeued: ", 0) == 0) out["requeued"] = j.reason;
  }
  return out;
}

std::string GroupHolds(const ClusterState& st, ResourceId res, const TaskGroup& g) {
  if (!g.shared()) {
    const std::string model = st.resource_names().Name(res).substr(4);
    return g.gpus() == 1 ? "a whole " + model + " GPU" : std::to_string(g.gpus()) + " whole " + model + " GPUs";
  }
  return DescribeShare(st.fleet(), res, g, st.resource_names());
}

Json ArrayJson(const Controller::View& v, TenantId tenant, const std::string& name, bool elements) {
  const ClusterState& st = v.state;
  const std::vector<JobId>& ids = st.ArrayElements(tenant, name);
  ArrayProgress p = ProgressOf(st, ids);
  Json out = {{"name", name},
              {"tenant", st.tenants().tenant(tenant).path},
              {"count", p.count},
              {"parallel", p.parallel},
              {"state", p.state()},
              {"progress", {{"done", p.done}, {"running", p.running}, {"failed", p.failed}, {"pending", p.pending}}},
              {"retries", p.retries}};
  if (!ids.empty()) {
    const Job& first = st.job(ids.front());
    out["submitted"] = Seconds(first.spec.submit_ms);
    if (!first.spec.after.empty()) out["after"] = JobJson(v, first)["after"];
  }
  if (elements) {
    Json list = Json::array();
    for (JobId id : ids) {
      const Job& j = st.job(id);
      Json e = {{"name", j.spec.name}, {"index", j.spec.array.index}, {"state", JobStateName(j.state)}, {"failures", j.failures}};
      if (j.spec.array.frame >= 0) e["frame"] = j.spec.array.frame;
      Json full = JobJson(v, j);
      if (!full["reason"].is_null()) e["reason"] = full["reason"];
      if (!full["nodes"].empty()) e["nodes"] = full["nodes"];
      list.push_back(std::move(e));
    }
    out["elements"] = std::move(list);
  }
  return out;
}

Json AmountsJson(const ClusterState& st, const Resources& r, bool skip_unlimited) {
  Json out = Json::object();
  for (int i = 0; i < st.resource_names().size(); ++i) {
    ResourceId id = static_cast<ResourceId>(i);
    if (skip_unlimited && r[id] == kUnlimited) continue;
    out[st.resource_names().Name(id)] = FormatAmount(id, r[id]);
  }
  return out;
}

}  // namespace allot
