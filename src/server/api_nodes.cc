// The fleet's nodes, and what people ask about agent-managed nodes and the tasks agents run:
//
//   GET  /v1/nodes                 every node: condition, pool, free capacity, its agent's
//                                  heartbeat age and health
//   POST /v1/nodes/{name}/{cordon|drain|uncordon}   platform-admin only
//   GET  /v1/nodes/{name}          the node, with its agent's last heartbeat, GPU telemetry,
//                                  tasks and newest health report
//   POST /v1/nodes/{name}/check    asks the node's agent for a health check (platform-admin)
//   GET  /v1/jobs/{name}/logs[?task=N&run=R&offset=B&wait=S]   a task's log from byte B, as
//                                  text; X-Allot-Log-Size is where the next read starts; with
//                                  wait, waits up to S seconds for more while the job runs
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/quantity.h"
#include "server/agent_wire.h"
#include "server/api_routes.h"
#include "server/job_lookup.h"

namespace allot {
namespace {

Json LabelsJson(const NodeLabels& labels) {
  Json out = Json::object();
  for (const auto& [name, value] : labels) out[name] = value;
  return out;
}

void ListNodes(RouteContext& ctx, httplib::Response& res) {
  int64_t now = ctx.ctl.now_ms();
  Json nodes = ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    for (const Node& n : st.fleet().nodes()) {
      out.push_back({{"name", n.name},
                     {"zone", st.fleet().domains(DomainKind::kZone)[n.zone].name},
                     {"rack", st.fleet().domains(DomainKind::kRack)[n.rack].name},
                     {"condition", NodeConditionName(n.condition)},
                     {"pool", SharingName(n.pool.sharing)},
                     {"gpu_model", n.gpu_count > 0 ? Json(st.resource_names().Name(n.gpu_resource).substr(4)) : Json()},
                     {"gpus", n.gpu_count},
                     {"gpus_idle", n.free.gpus()},
                     {"cpu", FormatMilli(n.cpu)},
                     {"cpu_free", FormatMilli(n.free.cpu)},
                     {"memory", FormatMemoryMiB(n.memory)},
                     {"memory_free", FormatMemoryMiB(n.free.memory)},
                     {"labels", LabelsJson(st.fleet().labels(n.id))}});
      if (!st.agent_managed(n.id)) continue;
      auto session = ctx.agents->Get(n.name);
      out.back()["agent"] = {
          {"heartbeat_age_s", session && session->last_heartbeat_ms > 0 ? Json(Seconds(now - session->last_heartbeat_ms)) : Json()},
          {"health", !session || !session->health ? Json()
                     : session->health->ok()      ? Json("ok")
                                                  : Json(session->health->Failures())}};
    }
    return out;
  });
  Reply(res, 200, {{"nodes", nodes}});
}

void OperateNode(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1], action = req.matches[2];
  AuditContext audit{who.name, who.role, "", "node." + action, name, ctx.request_id(req, res)};
  if (!ctx.ctl.Read([&](const ClusterState& st) { return Allowed(st.tenants(), who, Action::kOperateFleet, TenantId()); })) {
    return ctx.refuse(res, audit, Status(Code::kPermissionDenied, "only a platform-admin operates the fleet"));
  }
  NodeId id = ctx.ctl.Read([&](const ClusterState& st) { return st.fleet().Find(name); });
  if (!id.valid()) return ctx.refuse(res, audit, NotFound("node '" + name + "' does not exist"));
  NodeCondition c = action == "cordon" ? NodeCondition::kCordoned
                    : action == "drain" ? NodeCondition::kDraining
                                        : NodeCondition::kReady;
  auto r = ctx.ctl.Execute(NodeConditionChanged{id, c}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, {{"name", name}, {"condition", NodeConditionName(c)}});
}

// The agent's session; its tasks only those of jobs the caller may see (`visible`).
Json SessionJson(const AgentSession& s, int64_t now_ms, const std::function<bool(const TaskReport&)>& visible) {
  Json gpus = Json::array();
  for (const GpuTelemetry& g : s.gpus) gpus.push_back(GpuTelemetryJson(g));
  Json tasks = Json::array();
  for (const TaskReport& t : s.tasks) {
    if (!visible(t)) continue;
    tasks.push_back({{"job", t.job}, {"task", t.task}, {"run", t.run}, {"pid", t.pid}, {"exited", t.exited},
                     {"reason", t.reason}});
  }
  Json out = {{"address", s.address},
              {"agent_version", s.agent_version},
              {"driver_version", s.driver_version},
              {"gpu_uuids", s.gpu_uuids},
              {"heartbeat_age_s", s.last_heartbeat_ms > 0 ? Json(Seconds(now_ms - s.last_heartbeat_ms)) : Json()},
              {"gpus", gpus},
              {"tasks", tasks},
              {"checks_requested", s.check_requested}};
  if (s.isolation_gaps) out["isolation"] = {{"complete", s.isolation_gaps->empty()}, {"gaps", *s.isolation_gaps}};
  if (s.health) {
    Json checks = Json::array();
    for (const HealthCheck& c : s.health->checks) {
      checks.push_back({{"name", c.name}, {"ok", c.ok}, {"severity", c.severity}, {"detail", c.detail}});
    }
    out["health"] = {{"check", s.health->check}, {"acceptance", s.health->acceptance}, {"ok", s.health->ok()},
                     {"at", Seconds(s.health->at_ms)}, {"checks", checks}};
  }
  return out;
}

// The node, and of the jobs on it only those the caller may see (another tenant's job names
// are theirs).
void ShowNode(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  std::set<int64_t> seen;  // the ids of the visible jobs on the node, for the agent's task list
  Result<Json> node = ctx.ctl.Read([&](const ClusterState& st) -> Result<Json> {
    NodeId id = st.fleet().Find(name);
    if (!id.valid()) return Err(NotFound("node '" + name + "' does not exist"));
    const Node& n = st.fleet().node(id);
    Json jobs = Json::array();
    for (JobId j : st.JobsOn(id)) {
      if (!Allowed(st.tenants(), who, Action::kRead, st.job(j).spec.tenant)) continue;
      jobs.push_back(st.job(j).spec.name);
      seen.insert(j.value());
    }
    return Json{{"name", n.name},
                {"condition", NodeConditionName(n.condition)},
                {"agent_managed", st.agent_managed(id)},
                {"pool", SharingName(n.pool.sharing)},
                {"gpu_model", n.gpu_count > 0 ? Json(st.resource_names().Name(n.gpu_resource).substr(4)) : Json()},
                {"gpus", n.gpu_count},
                {"gpus_idle", n.free.gpus()},
                {"cpu", FormatMilli(n.cpu)},
                {"memory", FormatMemoryMiB(n.memory)},
                {"labels", LabelsJson(st.fleet().labels(id))},
                {"jobs", jobs}};
  });
  if (!node) return ReplyError(res, node.error());
  if (auto s = ctx.agents->Get(name)) {
    // A report names its job by id once its heartbeat is taken (api_agent.cc).
    auto visible = [&](const TaskReport& t) {
      return seen.count(t.job_id) > 0 || ctx.ctl.Read([&](const ClusterState& st) {
               return t.job_id >= 0 && t.job_id < static_cast<int64_t>(st.jobs().size()) &&
                      Allowed(st.tenants(), who, Action::kRead, st.job(JobId(static_cast<uint32_t>(t.job_id))).spec.tenant);
             });
    };
    (*node)["agent"] = SessionJson(*s, ctx.ctl.now_ms(), visible);
  }
  Reply(res, 200, *node);
}

void RequestCheck(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  AuditContext audit{who.name, who.role, "", "node.check", name, ctx.request_id(req, res)};
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
    if (!Allowed(st.tenants(), who, Action::kOperateFleet, TenantId())) {
      return Status(Code::kPermissionDenied, "only a platform-admin operates the fleet");
    }
    NodeId id = st.fleet().Find(name);
    if (!id.valid()) return NotFound("node '" + name + "' does not exist");
    if (!st.agent_managed(id)) return Conflict("node '" + name + "' has no agent to run checks (a simulated node)");
    if (st.fleet().node(id).condition == NodeCondition::kDown) return Conflict("node '" + name + "' is lost: its agent is not heartbeating");
    return Status::Ok();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  uint64_t check = ctx.agents->RequestCheck(name);
  if (check == 0) return ctx.refuse(res, audit, Conflict("node '" + name + "' has not heartbeated since allotd started"));
  ctx.ctl.Audit(audit, Status::Ok());
  Reply(res, 202, {{"node", name}, {"check", check}});
}

void Logs(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string name = req.matches[1];
  auto task = IntParam(req, "task", 0, INT32_MAX, 0);
  if (!task) return ReplyError(res, task.error());
  auto offset = IntParam(req, "offset", 0, INT64_MAX, 0);
  if (!offset) return ReplyError(res, offset.error());
  auto wait = IntParam(req, "wait", 0, 60, 0);
  if (!wait) return ReplyError(res, wait.error());
  struct Found {
    Status status;
    int run = 0;
    bool running = false;
    std::string state;
    JobId id;
  };
  auto look = [&] {
    return ctx.ctl.Read([&](const ClusterState& st) {
      auto found = LookupJob(st, who, req);
      if (!found) return Found{found.error()};
      JobId id = *found;
      const Job& j = st.job(id);
      if (*task >= j.spec.TaskCount()) {
        return Found{InvalidArgument("task: " + std::to_string(*task) + ": job '" + name + "' has " +
                                     std::to_string(j.spec.TaskCount()) + " task(s)")};
      }
      // The current run while it holds resources, else the last one that ran.
      int run = static_cast<int>(j.ended_runs.size()) - (j.holds_resources() || j.state == JobState::kFinished ||
                                                                 j.state == JobState::kFailed ? 0 : 1);
      return Found{Status::Ok(), std::max(run, 0), j.holds_resources(), JobStateName(j.state), id};
    });
  };
  Found f = look();
  if (!f.status.ok()) return ReplyError(res, f.status);
  int run = f.run;
  if (req.has_param("run")) {
    auto r = IntParam(req, "run", 0, INT32_MAX, 0);
    if (!r) return ReplyError(res, r.error());
    run = static_cast<int>(*r);
  }
  std::filesystem::path path =
      ctx.ctl.Read([&](const ClusterState& st) { return LogPath(ctx.log_dir, st, f.id, run, static_cast<int>(*task)); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*wait);
  std::error_code ec;
  uint64_t size = 0;
  while (true) {
    size = std::filesystem::exists(path, ec) ? std::filesystem::file_size(path, ec) : 0;
    if (size > static_cast<uint64_t>(*offset) || !f.running || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    f = look();
  }
  std::string body;
  if (size > static_cast<uint64_t>(*offset)) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(*offset);
    body.resize(std::min<uint64_t>(size - *offset, 4 << 20));  // at most 4 MiB a read
    in.read(body.data(), static_cast<std::streamsize>(body.size()));
    body.resize(static_cast<size_t>(in.gcount()));
  }
  res.status = 200;
  res.set_header("X-Allot-Log-Size", std::to_string(*offset + body.size()));
  res.set_header("X-Allot-Job-State", f.state);
  res.set_header("X-Allot-Run", std::to_string(run));
  res.set_content(body, "text/plain; charset=utf-8");
}

}  // namespace

void NodeRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Get("/v1/nodes", ctx.authed([&ctx](const httplib::Request&, httplib::Response& res, const Principal&) {
    ListNodes(ctx, res);
  }));
  http.Post(R"(/v1/nodes/([^/]+)/(cordon|drain|uncordon))",
            ctx.authed([&ctx](const httplib::Request& req, httplib::Response& res, const Principal& who) {
              OperateNode(ctx, req, res, who);
            }));
  http.Get(R"(/v1/nodes/([^/]+))", ctx.Handle(ShowNode));
  http.Post(R"(/v1/nodes/([^/]+)/check)", ctx.Handle(RequestCheck));
  http.Get(R"(/v1/jobs/([^/]+)/logs)", ctx.Handle(Logs));
}

}  // namespace allot
