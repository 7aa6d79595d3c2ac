// The node agents' side of the API (a token of role "node"; its principal names the node it
// may act for, or "*" for any):
//
//   POST /v1/agent/register      inventory → NodeRegistered; answers the lease and intervals
//   POST /v1/agent/heartbeat     telemetry, task reports, health → outcomes (finished, failed,
//                                stopped), node conditions; answers the condition, check asked
//   GET  /v1/agent/assignments   the tasks the node must run (long poll on a version)
//   POST /v1/agent/logs          a chunk of a task's log at an offset (raw bytes)
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "core/names.h"
#include "core/quantity.h"
#include "fleet/mig.h"
#include "daemon/autoscale_monitor.h"
#include "daemon/interference_monitor.h"
#include "daemon/node_supervisor.h"
#include "server/acceptance_wire.h"
#include "server/agent_wire.h"
#include "server/api_routes.h"
#include "server/body_reader.h"

namespace allot {
namespace {

Status MayActAsAgent(const Principal& who) {
  if (who.role != Role::kNode && who.role != Role::kPlatformAdmin) {
    return MayNot(who, "act as a node agent");
  }
  return Status::Ok();
}

// The node the caller acts for: its role must be node (or platform-admin) and its principal
// that node or "*".
Status MayActFor(const Principal& who, const std::string& node) {
  if (Status s = MayActAsAgent(who); !s.ok()) return s;
  if (node.empty()) return InvalidArgument("node: expected the node's name");
  if (who.role == Role::kNode && who.name != "*" && who.name != node) {
    return Status(Code::kPermissionDenied, "this node token is for node '" + who.name + "', not '" + node + "'");
  }
  return Status::Ok();
}

// The state's node for an agent's request: it must exist, be agent-managed and not lost.
Status Managed(const ClusterState& st, const std::string& node) {
  NodeId id = st.fleet().Find(node);
  if (!id.valid() || !st.agent_managed(id)) {
    return Status(Code::kNotFound, "node '" + node + "' is not registered: register first");
  }
  if (st.fleet().node(id).condition == NodeCondition::kDown) {
    return Conflict("node '" + node + "' was declared lost; its jobs were requeued: stop every task and register again");
  }
  return Status::Ok();
}

void Register(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit{who.name, who.role, "", "node.register", "", ctx.request_id(req, res)};
  // Refusals are rate-limited: a compromised node token could repeat them without end.
  if (Status s = MayActAsAgent(who); !s.ok()) return ctx.refuse_limited(res, audit, s);
  auto body = ParseStrictJson(req.body);
  if (!body) return ctx.refuse_limited(res, audit, body.error());
  auto inv = ParseRegistration(*body);
  if (!inv) return ctx.refuse_limited(res, audit, inv.error());
  audit.target = inv->spec.name;
  if (Status s = MayActFor(who, inv->spec.name); !s.ok()) return ctx.refuse_limited(res, audit, s);
  // The session is renewed before the node comes back: the node supervisor, which reads the node
  // and then its session, must never see a node back from lost beside its old, silent session
  // (it declared such a node lost again, just registered; seen as an agent registering twice).
  ctx.agents->Registered(std::move(inv->session), ctx.ctl.now_ms());
  auto r = ctx.ctl.Execute(NodeRegistered{inv->spec}, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, {{"node", inv->spec.name},
                   {"condition", "accepting"},
                   {"lease_ms", ctx.lease_ms()},
                   {"heartbeat_ms", ctx.heartbeat_ms},
                   {"node_timeout_ms", ctx.node_timeout_ms}});
}

// The tenant a scrub of GPU `gpu` of node `here` is filed under: `named` (the tenant the node
// says gets the GPU) when a job of that tenant holds the GPU now, else the first holder's, else
// "" (the platform's records).
std::string HolderOf(const ClusterState& st, NodeId here, int gpu, const std::string& named) {
  std::string first;
  for (JobId id : st.JobsOn(here)) {
    const Job& j = st.job(id);
    for (const TaskPlacement& p : j.placement) {
      if (p.node != here || !(p.gpu_mask >> gpu & 1)) continue;
      const std::string& path = st.tenants().tenant(j.spec.tenant).path;
      if (path == named) return path;
      if (first.empty()) first = path;
    }
  }
  return first;
}

// Each task run's exit to journal once (TaskRunReported), for reconciliation against what the
// scheduler held (metering/reconcile.h): exits of jobs the state knows, not yet recorded. Ahead
// of the outcomes in SettleExits' batch, so a run's reports are in by the time its outcome ends it. A report the state
// would refuse (negative indexes, ending before it started) is left out rather than refused
// at every heartbeat.
std::vector<TaskRunReported> ExitRecords(RouteContext& ctx, const std::string& node, const std::vector<TaskReport>& tasks) {
  return ctx.ctl.Read([&](const ClusterState& st) {
    std::vector<TaskRunReported> out;
    for (const TaskReport& t : tasks) {
      if (!t.exited || t.run < 0 || t.task < 0 || t.ended_ms < t.started_ms) continue;
      JobId id(static_cast<uint32_t>(t.job_id));  // resolved by OnHeartbeat
      if (t.job_id < 0 || st.TaskReported(id, t.run, t.task)) continue;
      out.push_back(TaskRunReported{id, t.run, t.task, node, t.started_ms, t.ended_ms});
    }
    return out;
  });
}

// Journals each MIG GPU's layout the node reports holding when it differs from the last one
// recorded (heartbeats come every second; the state keeps only what events say). A GPU the
// report names with a profile the node's model lacks is left as it was.
void RecordMigLayouts(RouteContext& ctx, const std::string& node, const std::vector<MigGpuLayout>& reported) {
  std::vector<MigLayoutReported> changed = ctx.ctl.Read([&](const ClusterState& st) {
    std::vector<MigLayoutReported> out;
    NodeId id = st.fleet().Find(node);
    if (!id.valid() || !st.agent_managed(id)) return out;
    const Node& n = st.fleet().node(id);
    if (n.pool.sharing != Sharing::kMig || !n.pool.mig) return out;
    for (const MigGpuLayout& wire : reported) {
      if (wire.gpu < 0 || wire.gpu >= n.gpu_count) continue;
      auto layout = MigLayoutFromWire(*n.pool.mig, wire);
      if (!layout || *layout == st.fleet().shares(id)[wire.gpu].node_layout) continue;
      out.push_back(MigLayoutReported{id, wire.gpu, std::move(*layout)});
    }
    return out;
  });
  for (MigLayoutReported& e : changed) {
    auto r = ctx.ctl.Execute(std::move(e));  // refused: the node re-registered meanwhile; the next beat says again
  }
}

// Turns exited tasks into job outcomes, once each job's run has its answer. One batch for the
// whole heartbeat: its exits' records (ExitRecords), then the outcomes, so every GPU they free is
// in the same pass and the agent hears back after one journal commit.
void SettleExits(RouteContext& ctx, const std::string& node, const std::vector<TaskReport>& tasks) {
  std::vector<EventBody> batch;
  // Refused in the batch (a conflict): a concurrent heartbeat recorded it first.
  for (TaskRunReported& e : ExitRecords(ctx, node, tasks)) batch.push_back(std::move(e));
  std::vector<std::pair<JobId, int>> forget;
  std::set<std::pair<JobId, int>> runs;
  for (const TaskReport& t : tasks) {
    if (t.exited && t.job_id >= 0) runs.insert({JobId(static_cast<uint32_t>(t.job_id)), t.run});  // resolved by OnHeartbeat
  }
  for (const auto& [id, run] : runs) {
    auto exits = ctx.agents->ExitsOf(id, run);
    struct Decision {
      std::optional<EventBody> outcome;
      bool stale = false;
    };
    Decision d = ctx.ctl.Read([&](const ClusterState& st) {
      const Job& j = st.job(id);
      if (!j.holds_resources() || CurrentRun(j) != run) return Decision{std::nullopt, true};
      return Decision{JobOutcome(st, id, run, exits, ctx.ctl.now_ms()), false};
    });
    if (d.outcome) {
      batch.push_back(std::move(*d.outcome));
      d.stale = true;  // decided (or refused because something else ended the run first)
    }
    if (d.stale) forget.emplace_back(id, run);
  }
  if (!batch.empty()) ctx.ctl.ExecuteAll(std::move(batch));
  for (const auto& [id, run] : forget) ctx.agents->Forget(id, run);
}

// A health report moves the node: accepting → ready when it passes; a hardware fault →
// repair (its jobs requeued); a software fault → accepting while the agent resets it.
void SettleHealth(RouteContext& ctx, const std::string& node, const HealthReport& report) {
  auto [id, condition] = ctx.ctl.Read([&](const ClusterState& st) {
    NodeId n = st.fleet().Find(node);
    return std::make_pair(n, n.valid() ? st.fleet().node(n).condition : NodeCondition::kDown);
  });
  if (!id.valid()) return;
  AuditContext audit{"node:" + node, Role::kNode, "", "node.health", node, ""};
  if (report.ok()) {
    bool repaired = condition == NodeCondition::kRepair && report.check > 0;  // asked for by an operator
    if (condition == NodeCondition::kAccepting || repaired) ctx.ctl.Execute(NodeConditionChanged{id, NodeCondition::kReady}, audit);
    return;
  }
  if (report.hardware_fault()) {
    if (condition != NodeCondition::kRepair) {
      FailNode(ctx.ctl, id, NodeCondition::kRepair, "failed its health check (hardware): " + report.Failures(), audit);
    }
  } else if (condition == NodeCondition::kReady || condition == NodeCondition::kCordoned ||
             condition == NodeCondition::kDraining) {
    FailNode(ctx.ctl, id, NodeCondition::kAccepting, "failed its health check (software; resetting): " + report.Failures(), audit);
  }
}

// A heartbeat read (by OnHeartbeat, or by QuietHeartbeat that handed it on), from a caller that
// may act as an agent: the rest of the route, `audit` its record's context.
void OnHeartbeatRead(RouteContext& ctx, httplib::Response& res, const Principal& who, AuditContext audit, Heartbeat* hb) {
  audit.target = hb->node;
  if (Status s = MayActFor(who, hb->node); !s.ok()) return ctx.refuse_limited(res, audit, s);
  if (Status s = ctx.ctl.Read([&](const ClusterState& st) { return Managed(st, hb->node); }); !s.ok()) {
    return ReplyError(res, s);
  }
  // A node speaks only for its own tasks: a report of a task placed elsewhere (or of a job it
  // never ran) is dropped before it can end anything, and the refusal is audited.
  std::vector<std::string> foreign;
  ctx.ctl.Read([&](const ClusterState& st) {
    NodeId here = st.fleet().Find(hb->node);
    std::erase_if(hb->tasks, [&](TaskReport& t) {
      JobId id = ReportedJob(st, here, t.job, t.job_id, t.task);
      t.job_id = id.valid() ? id.value() : -1;  // from here on, reports name their job by id
      if (id.valid()) return false;
      foreign.push_back(t.job + " task " + std::to_string(t.task) + " run " + std::to_string(t.run));
      return true;
    });
    return 0;
  });
  int64_t now = ctx.ctl.now_ms();
  std::vector<TaskReport> tasks = hb->tasks;
  if (ctx.interference) ctx.interference->Observe(hb->node, hb->gpus);
  if (ctx.autoscale) ctx.autoscale->Observe(hb->node, hb->loads, now);
  ctx.agents->Heartbeat(hb->node, now, std::move(hb->gpus), std::move(hb->tasks));
  SettleExits(ctx, hb->node, tasks);
  RecordMigLayouts(ctx, hb->node, hb->mig);
  ctx.agents->Clusters(hb->node, std::move(hb->clusters));
  ctx.agents->Acceptance(hb->node, std::move(hb->acceptance));
  if (!foreign.empty()) {
    std::string which;
    for (size_t i = 0; i < foreign.size() && i < 5; ++i) which += (i ? ", " : "") + foreign[i];
    if (foreign.size() > 5) which += " and " + std::to_string(foreign.size() - 5) + " more";
    AuditContext refused = audit;
    refused.action = "agent.task_report";
    httplib::Response ignored;
    ctx.refuse_limited(ignored, refused,
                       Status(Code::kPermissionDenied, "node '" + hb->node + "' reported tasks not placed on it: " + which));
  }
  // Scrubs go to the hash-chained audit log: who held the GPU, who gets it, how it went (a
  // failure's detail is its outcome; a success's, "ok in 3 ms" or why it was not run on a shared
  // GPU another tenant's task still used, follows the target). The
  // tenant the record is filed under is allotd's own answer (the tenant of a job holding that
  // GPU of this node now), never the node's word; a GPU the node does not have is refused.
  for (const ScrubReport& s : hb->scrubs) {
    auto tenant = ctx.ctl.Read([&](const ClusterState& st) -> std::optional<std::string> {
      NodeId here = st.fleet().Find(hb->node);
      if (s.gpu < 0 || s.gpu >= st.fleet().node(here).gpu_count) return std::nullopt;
      return HolderOf(st, here, s.gpu, s.to);
    });
    if (!tenant) {
      AuditContext refused = audit;
      refused.action = "gpu.scrub";
      httplib::Response ignored;
      ctx.refuse_limited(ignored, refused,
                         InvalidArgument("scrub of GPU " + std::to_string(s.gpu) + ": node '" + hb->node + "' has no such GPU"));
      continue;
    }
    AuditContext scrub{"node:" + hb->node, Role::kNode, *tenant, "gpu.scrub",
                       hb->node + " GPU " + std::to_string(s.gpu) + " (" + s.uuid + ") from '" + s.from + "' to '" + s.to +
                           "' (as the node reports)" + (s.ok && !s.detail.empty() ? ": " + s.detail : ""),
                       ""};
    ctx.ctl.Audit(scrub, s.ok ? Status::Ok() : FailedPrecondition(s.detail));
  }
  if (hb->health) {
    ctx.agents->Health(hb->node, *hb->health);
    SettleHealth(ctx, hb->node, *hb->health);
  }
  std::string condition = ctx.ctl.Read([&](const ClusterState& st) {
    NodeId id = st.fleet().Find(hb->node);
    return std::string(NodeConditionName(st.fleet().node(id).condition));
  });
  Reply(res, 200, {{"condition", condition},
                   {"lease_ms", ctx.lease_ms()},
                   {"check", ctx.agents->CheckRequested(hb->node)}});
}

void OnHeartbeat(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit{who.name, who.role, "", "agent.heartbeat", "", ctx.request_id(req, res)};
  if (Status s = MayActAsAgent(who); !s.ok()) return ctx.refuse_limited(res, audit, s);
  auto hb = ReadHeartbeatBody(req.body);
  if (!hb) return ReplyError(res, hb.error());
  OnHeartbeatRead(ctx, res, who, std::move(audit), &*hb);
}

// A heartbeat answered on the I/O thread (HttpRouter::PostInline), with no hand-off to a worker:
// one that can change nothing in the journal, so that OnHeartbeat would only take its telemetry
// and tasks into the registry and answer. Not one with an exit (its outcome is journaled), a
// report of a task placed elsewhere (its refusal is audited), a scrub (audited), a health report
// (which may move the node) or MIG layouts (which may be recorded), nor one from a node of a
// shared pool (MPS, time-slice: the noisy-neighbour detector journals its responses), nor one
// that is refused for its caller or its node (audited, or rare): for those it changes nothing
// and returns what a worker is to run: the rest of OnHeartbeat on the heartbeat already read
// (not read twice), or all of it when the body was not read. Nothing when it answered. The state is read under the same
// shared lock, and the registry written under its own, as OnHeartbeat does; but only if the
// lock is free at once: while the writer holds it (a batch, a pass) the heartbeat goes to a
// worker too, so the I/O thread never waits out a pass. The node's condition in the answer is
// read in that same look.
RouteContext::Handler QuietHeartbeat(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  auto whole = [&ctx](const httplib::Request& req, httplib::Response& res, const Principal& who) { OnHeartbeat(ctx, req, res, who); };
  if (!MayActAsAgent(who).ok()) return whole;
  auto hb = ReadHeartbeatBody(req.body);
  if (!hb) return whole;
  auto read = std::make_shared<Heartbeat>(std::move(*hb));
  auto rest = [&ctx, read](const httplib::Request& req, httplib::Response& res, const Principal& who) {
    AuditContext audit{who.name, who.role, "", "agent.heartbeat", "", ctx.request_id(req, res)};
    OnHeartbeatRead(ctx, res, who, std::move(audit), read.get());
  };
  Heartbeat* beat = read.get();
  if (!MayActFor(who, beat->node).ok() || !beat->scrubs.empty() || beat->health || !beat->mig.empty()) return rest;
  // The node's condition when the heartbeat is quiet (its tasks' jobs in `ids`); nothing when
  // it is not, the heartbeat left as read.
  std::vector<int64_t> ids;
  std::optional<std::string_view> condition = ctx.ctl.TryRead([&](const ClusterState& st) -> std::optional<std::string_view> {
    if (!Managed(st, beat->node).ok()) return std::nullopt;
    NodeId here = st.fleet().Find(beat->node);
    Sharing pool = st.fleet().node(here).pool.sharing;
    if (ctx.interference && (pool == Sharing::kMps || pool == Sharing::kTimeslice)) return std::nullopt;
    for (const TaskReport& t : beat->tasks) {
      if (t.exited) return std::nullopt;
      JobId id = ReportedJob(st, here, t.job, t.job_id, t.task);
      if (!id.valid()) return std::nullopt;
      ids.push_back(id.value());
    }
    return NodeConditionName(st.fleet().node(here).condition);
  }).value_or(std::nullopt);
  if (!condition) return rest;
  // From here on, reports name their job by id (as OnHeartbeat).
  for (size_t i = 0; i < ids.size(); ++i) beat->tasks[i].job_id = ids[i];
  ctx.request_id(req, res);
  int64_t now = ctx.ctl.now_ms();
  if (ctx.autoscale) ctx.autoscale->Observe(beat->node, beat->loads, now);
  ctx.agents->Heartbeat(beat->node, now, std::move(beat->gpus), std::move(beat->tasks));
  ctx.agents->Clusters(beat->node, std::move(beat->clusters));
  ctx.agents->Acceptance(beat->node, std::move(beat->acceptance));
  Reply(res, 200, {{"condition", *condition},
                   {"lease_ms", ctx.lease_ms()},
                   {"check", ctx.agents->CheckRequested(beat->node)}});
  return nullptr;
}

// Whether a reservation holds `node` in any of its windows (past ones too: erring wide).
bool Booked(const ClusterState& st, NodeId node) {
  for (const CapacityReservation& r : st.reservations()) {
    for (const std::vector<NodeHold>& window : r.holds) {
      for (const NodeHold& h : window) {
        if (h.node == node) return true;
      }
    }
  }
  return false;
}

// The node's desired tasks, answered when they differ from the version the agent holds or
// when its wait ends; parked (holding no thread) meanwhile.
std::optional<LongPoll> Assignments(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string node = req.get_param_value("node");
  if (Status s = MayActFor(who, node); !s.ok()) {
    ctx.refuse_limited(res, AuditContext{who.name, who.role, "", "agent.assignments", node, ctx.request_id(req, res)}, s);
    return std::nullopt;
  }
  std::string known = req.get_param_value("version");
  double wait_s = 0;
  if (req.has_param("wait")) {
    try {
      wait_s = std::stod(req.get_param_value("wait"));
    } catch (...) {
      wait_s = -1;
    }
    if (!(wait_s >= 0 && wait_s <= 60)) {
      ReplyError(res, InvalidArgument("wait: '" + req.get_param_value("wait") + "': expected seconds from 0 to 60"));
      return std::nullopt;
    }
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
  // Counted per node under its token: an agent holds one poll, and a fleet may share one token.
  // Re-run when a batch touched this node; after every change while a reservation holds the
  // node, since its dedicated clusters and acceptance asks follow the clock too.
  auto every_change = std::make_shared<std::atomic<bool>>(false);
  return LongPoll{"/node:" + node, deadline, [&ctx, node, known, every_change](httplib::Response& res, bool last) {
                    if (!ctx.ctl.healthy()) {
                      ReplyError(res, Status(Code::kUnavailable, "allotd is stopping"));
                      return true;
                    }
                    Result<Json> desired = ctx.ctl.Read([&](const ClusterState& st) -> Result<Json> {
                      if (Status s = Managed(st, node); !s.ok()) return Err(s);
                      Json out = DesiredTasks(st, st.fleet().Find(node), *ctx.agents);
                      // Dedicated clusters: the one window of each reservation not yet over. The
                      // agent starts and ends it by its clock; an answer comes at least every wait.
                      auto clusters = DesiredClusters(st, st.fleet().Find(node), ctx.ctl.now_ms(), ctx.cluster_ports,
                                                      ClusterSources{ctx.agents.get(), ctx.cluster_secret});
                      if (!clusters.empty()) out["clusters"] = ClusterAssignmentsJson(clusters);
                      // Acceptance of booked nodes: asked from the lead time until it settles.
                      auto acceptance = DesiredAcceptance(st, st.fleet().Find(node), ctx.ctl.now_ms(), ctx.acceptance_lead_ms);
                      if (!acceptance.empty()) out["acceptance"] = AcceptanceAsksJson(acceptance);
                      every_change->store(Booked(st, st.fleet().Find(node)));
                      return out;
                    });
                    if (!desired) {
                      ReplyError(res, desired.error());
                      return true;
                    }
                    std::string version = AssignmentVersion(*desired);
                    if (version == known && !last) return false;
                    (*desired)["version"] = version;
                    Reply(res, 200, *desired);
                    return true;
                  },
                  AssignmentPollTopic(node), every_change};
}

void AppendLog(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  std::string node = req.get_param_value("node"), job = req.get_param_value("job");
  int64_t job_id = -1;  // absent from an agent older than per-tenant names
  AuditContext audit{who.name, who.role, "", "agent.logs", node + " " + job, ctx.request_id(req, res)};
  if (Status s = MayActFor(who, node); !s.ok()) return ctx.refuse_limited(res, audit, s);
  if (ctx.log_dir.empty()) return ReplyError(res, Status(Code::kFailedPrecondition, "this allotd keeps no task logs"));
  auto run = IntParam(req, "run", 0, INT32_MAX, std::nullopt);
  if (!run) return ReplyError(res, run.error());
  auto task = IntParam(req, "task", 0, INT32_MAX, std::nullopt);
  if (!task) return ReplyError(res, task.error());
  auto offset = IntParam(req, "offset", 0, INT64_MAX, std::nullopt);
  if (!offset) return ReplyError(res, offset.error());
  if (req.has_param("job_id")) {
    auto id = IntParam(req, "job_id", 0, UINT32_MAX, std::nullopt);
    if (!id) return ReplyError(res, id.error());
    job_id = *id;
  }
  // The node must run (or have run) a task of this job: an agent writes only its own logs.
  std::filesystem::path path;
  Status may = ctx.ctl.Read([&](const ClusterState& st) {
    JobId id = ReportedJob(st, st.fleet().Find(node), job, job_id, static_cast<int>(std::min<int64_t>(*task, INT32_MAX)));
    // A node learns nothing of jobs elsewhere, not even whether a name exists.
    if (!id.valid() && who.role != Role::kNode && st.JobsNamed(job).empty()) {
      return NotFound("job '" + EscapeText(job) + "' does not exist");
    }
    if (!id.valid()) {
      return Status(Code::kPermissionDenied, "task " + std::to_string(*task) + " of job '" + EscapeText(job) +
                                                 "' is not on node '" + EscapeText(node) + "'");
    }
    path = LogPath(ctx.log_dir, st, id, static_cast<int>(*run), static_cast<int>(*task));
    return Status::Ok();
  });
  if (may.code() == Code::kPermissionDenied) return ctx.refuse_limited(res, audit, may);
  if (!may.ok()) return ReplyError(res, may);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  uint64_t size = std::filesystem::exists(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  if (static_cast<uint64_t>(*offset) != size) {
    // Out of step (a retry after a lost answer, or a restart): tell the agent where to resume.
    return Reply(res, 409, {{"error", {{"code", "conflict"}, {"message", "offset " + std::to_string(*offset) +
                                                                            " is not the log's end"}}},
                            {"size", size}});
  }
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out.write(req.body.data(), static_cast<std::streamsize>(req.body.size()));
  out.flush();
  if (!out) return ReplyError(res, Status(Code::kUnavailable, "cannot write " + path.string()));
  Reply(res, 200, {{"size", size + req.body.size()}});
}

}  // namespace

void AgentRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/agent/register", ctx.Handle(Register));
  http.PostInline("/v1/agent/heartbeat", ctx.HandleInline(QuietHeartbeat, OnHeartbeat));
  http.GetLongPoll("/v1/agent/assignments",
                   ctx.authed_long_poll([&ctx](const httplib::Request& req, httplib::Response& res, const Principal& who) {
                     return Assignments(ctx, req, res, who);
                   }));
  http.Post("/v1/agent/logs", ctx.Handle(AppendLog));
}

}  // namespace allot
