// GET /v1/interference: the noisy-neighbour responses in force, and the detector's recent
// findings (those with no response too), each shown when the caller may read the victim's or
// the neighbour's tenant.
#include "server/api_interference.h"

#include <httplib.h>

#include "daemon/interference_monitor.h"
#include "server/api_json.h"
#include "server/api_routes.h"

namespace allot {
namespace {

using Json = nlohmann::json;

bool MayRead(const ClusterState& st, const Principal& who, JobId id) {
  return Allowed(st.tenants(), who, Action::kRead, st.job(id).spec.tenant);
}

Json JobRef(const ClusterState& st, const Principal& who, JobId id, int32_t task) {
  if (!MayRead(st, who, id)) return {{"job", "another tenant's job"}, {"task", task}};
  const Job& j = st.job(id);
  return {{"job", j.spec.name}, {"job_id", id.value()}, {"tenant", st.tenants().tenant(j.spec.tenant).path}, {"task", task}};
}

Json ResponseJson(const ClusterState& st, const Principal& who, const InterferenceResponse& r) {
  Json out = {{"node", st.fleet().node(r.node).name},
          {"gpu", r.gpu},
          {"action", InterferenceActionName(r.action)},
          {"victim", JobRef(st, who, r.victim, r.victim_task)},
          {"neighbour", JobRef(st, who, r.neighbour, r.neighbour_task)},
          {"percent", r.action == InterferenceAction::kThrottle ? Json(r.percent) : Json()},
          {"neighbour_percent", r.neighbour_percent},
          {"baseline_p99_ms", r.baseline_p99_us / 1000.0},
          {"p99_ms", r.p99_us / 1000.0},
          {"neighbour_sm_percent", r.neighbour_sm_percent},
          {"neighbour_memory_percent", r.neighbour_memory_percent},
          {"since", Seconds(r.since_ms)},
          {"why", r.Describe()}};
  if (r.action == InterferenceAction::kHarden) {
    out["hardened_to"] = GroupHolds(st, st.job(r.victim).spec.gpu_resource, r.hardened);
  }
  return out;
}

void ListInterference(RouteContext& ctx, const httplib::Request&, httplib::Response& res, const Principal& who) {
  std::vector<InterferenceFinding> findings;
  if (ctx.interference) findings = ctx.interference->Findings();
  ctx.ctl.Read([&](const ClusterState& st) {
    Json responses = Json::array();
    for (const InterferenceResponse& r : st.interference()) {
      if (MayRead(st, who, r.victim) || MayRead(st, who, r.neighbour)) responses.push_back(ResponseJson(st, who, r));
    }
    Json found = Json::array();
    for (const InterferenceFinding& f : findings) {
      if (f.victim.value() >= st.jobs().size() || f.neighbour.value() >= st.jobs().size()) continue;
      if (!MayRead(st, who, f.victim) && !MayRead(st, who, f.neighbour)) continue;
      found.push_back({{"node", st.fleet().node(f.node).name},
                       {"gpu", f.gpu},
                       {"victim", JobRef(st, who, f.victim, f.victim_task)},
                       {"neighbour", JobRef(st, who, f.neighbour, f.neighbour_task)},
                       {"baseline_p99_ms", f.baseline_p99_us / 1000.0},
                       {"p99_ms", f.p99_us / 1000.0},
                       {"neighbour_sm_percent", f.neighbour_sm_percent},
                       {"neighbour_memory_percent", f.neighbour_memory_percent},
                       {"at", Seconds(f.at_ms)},
                       {"response", f.response}});
    }
    Reply(res, 200, {{"responses", responses}, {"findings", found}});
    return 0;
  });
}

}  // namespace

Json InterferenceOfJob(const ClusterState& st, JobId id, const Principal& who) {
  Json out = Json::array();
  for (const InterferenceResponse& r : st.interference()) {
    if (r.victim == id || r.neighbour == id) out.push_back(ResponseJson(st, who, r));
  }
  return out;
}

void InterferenceRoutes(HttpRouter& http, RouteContext& ctx) { http.Get("/v1/interference", ctx.Handle(ListInterference)); }

}  // namespace allot
