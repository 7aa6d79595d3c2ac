#include "daemon/node_supervisor.h"

#include <cmath>

#include "daemon/ledger_writes.h"

namespace allot {

Status FailNode(Controller& ctl, NodeId node, NodeCondition condition, const std::string& reason, AuditContext audit) {
  int64_t now = ctl.now_ms();
  std::vector<FaultLoss> losses = ctl.Read([&](const ClusterState& st) {
    std::vector<FaultLoss> out;
    if (!node.valid() || node.value() >= st.fleet().size()) return out;
    for (JobId id : st.JobsOn(node)) {
      const Job& j = st.job(id);
      if (j.demand.gpu == 0) continue;
      int64_t ran = std::max<int64_t>(0, (j.state == JobState::kPreempting ? j.last_preempted_ms : now) - j.last_started_ms);
      int64_t kept = j.spec.checkpoint_interval_ms > 0 ? ran / j.spec.checkpoint_interval_ms * j.spec.checkpoint_interval_ms : 0;
      if (ran - kept <= 0) continue;
      out.push_back(FaultLoss{j.spec.tenant, j.demand.gpu_resource, static_cast<__int128>(j.demand.gpu) * (ran - kept),
                              st.fleet().node(node).name, reason});
    }
    return out;
  });
  auto failed = ctl.Execute(NodeFailed{node, condition, reason}, std::move(audit));
  if (!failed) return failed.error();
  // A credit that cannot be recorded fails the call after the node has failed, saying so,
  // rather than vanishing (daemon/ledger_writes.h: a month close in between is retried).
  Status out = Status::Ok();
  if (const MeteringSink* metering = ctl.metering()) {
    for (const FaultLoss& loss : losses) {
      auto appended = AppendLedgerEntry(ctl, [&](const ClusterState& st) { return metering->Credit(st, loss, now); });
      if (!appended && out.ok()) {
        out = Status(appended.error().code(), "node failed, but its fault credit was not recorded: " + appended.error().message());
      }
    }
  }
  return out;
}

NodeSupervisor::NodeSupervisor(Controller& ctl, std::shared_ptr<AgentRegistry> agents, int64_t timeout_ms)
    : ctl_(ctl), agents_(std::move(agents)), timeout_ms_(timeout_ms) {}

NodeSupervisor::~NodeSupervisor() { Stop(); }

void NodeSupervisor::Start() {
  int64_t now = ctl_.now_ms();
  ctl_.Read([&](const ClusterState& st) {
    for (const Node& n : st.fleet().nodes()) {
      if (st.agent_managed(n.id) && n.condition != NodeCondition::kDown) agents_->Expect(n.name, now);
    }
    return 0;
  });
  ticks_.Start(std::chrono::milliseconds(500), [this] { Check(); });
}

void NodeSupervisor::Stop() { ticks_.Stop(); }

std::vector<std::string> NodeSupervisor::Check() {
  std::vector<std::string> lost;
  int64_t now = ctl_.now_ms();
  for (const std::string& name : agents_->Overdue(now, timeout_ms_)) {
    NodeId id = ctl_.Read([&](const ClusterState& st) {
      NodeId n = st.fleet().Find(name);
      bool live = n.valid() && st.agent_managed(n) && st.fleet().node(n).condition != NodeCondition::kDown &&
                  st.fleet().node(n).condition != NodeCondition::kRepair;
      return live ? n : NodeId();
    });
    if (!id.valid()) continue;
    // Read after the node: a registration renews its session first (api_agent.cc), so a node
    // seen back is seen with its new session, which is not silent.
    auto session = agents_->Get(name);
    int64_t silent = session ? now - session->last_heartbeat_ms : timeout_ms_;
    if (silent <= timeout_ms_) continue;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(silent) / 1000);
    AuditContext audit{"allotd", Role::kPlatformAdmin, "", "node.lost", name, ""};
    if (FailNode(ctl_, id, NodeCondition::kDown, std::string("lost: no heartbeat for ") + secs + " s", audit).ok()) {
      lost.push_back(name);
    }
  }
  return lost;
}

}  // namespace allot
