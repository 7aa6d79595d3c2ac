#include "daemon/agent_registry.h"

#include <algorithm>

namespace allot {

void AgentRegistry::Registered(AgentSession session, int64_t now_ms) {
  std::lock_guard lock(mu_);
  session.registered_ms = now_ms;
  session.last_heartbeat_ms = now_ms;
  std::string node = session.node;
  auto it = sessions_.find(node);
  if (it != sessions_.end()) session.check_requested = it->second.check_requested;
  sessions_[node] = std::move(session);
}

void AgentRegistry::Clusters(const std::string& node, std::vector<ClusterReport> clusters) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  if (it != sessions_.end()) it->second.clusters = std::move(clusters);
}

void AgentRegistry::Acceptance(const std::string& node, std::vector<AcceptanceReport> reports) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  if (it != sessions_.end()) it->second.acceptance = std::move(reports);
}

bool AgentRegistry::Heartbeat(const std::string& node, int64_t now_ms, std::vector<GpuTelemetry> gpus,
                              std::vector<TaskReport> tasks) {
  std::lock_guard lock(mu_);
  // A session only expected (allotd restarted; Expect) is taken up by its agent's heartbeat: the
  // agent kept its lease and its tasks, so its exits count and it is heard from, without a
  // registration (which would requeue the node's jobs).
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return false;
  AgentSession& s = it->second;
  s.last_heartbeat_ms = now_ms;
  for (const GpuTelemetry& g : gpus) s.xid_total[g.index] += g.xids.size();
  s.gpus = std::move(gpus);
  for (const TaskReport& t : tasks) {
    if (t.exited && t.job_id >= 0) exits_[{static_cast<uint32_t>(t.job_id), t.run, t.task}] = TaskExit{t, node};
  }
  s.tasks = std::move(tasks);
  return true;
}

std::vector<AgentSession> AgentRegistry::All() const {
  std::lock_guard lock(mu_);
  std::vector<AgentSession> out;
  out.reserve(sessions_.size());
  for (const auto& [name, s] : sessions_) out.push_back(s);
  return out;
}

std::optional<HealthReport> AgentRegistry::Health(const std::string& node, HealthReport report) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return std::nullopt;
  std::optional<HealthReport> before = std::move(it->second.health);
  it->second.health = std::move(report);
  return before;
}

uint64_t AgentRegistry::RequestCheck(const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  if (it == sessions_.end() || it->second.registered_ms == 0) return 0;
  return ++it->second.check_requested;
}

std::optional<AgentSession> AgentRegistry::Get(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return std::nullopt;
  return it->second;
}

std::string AgentRegistry::Address(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  return it == sessions_.end() ? std::string() : it->second.address;
}

uint64_t AgentRegistry::CheckRequested(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(node);
  return it == sessions_.end() ? 0 : it->second.check_requested;
}

std::vector<std::string> AgentRegistry::Overdue(int64_t now_ms, int64_t timeout_ms) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [node, s] : sessions_) {
    if (now_ms - s.last_heartbeat_ms > timeout_ms) out.push_back(node);
  }
  return out;
}

void AgentRegistry::Expect(const std::string& node, int64_t now_ms) {
  std::lock_guard lock(mu_);
  AgentSession& s = sessions_[node];
  s.node = node;
  s.last_heartbeat_ms = std::max(s.last_heartbeat_ms, now_ms);
}

std::map<int, AgentRegistry::TaskExit> AgentRegistry::ExitsOf(JobId job, int run) const {
  std::lock_guard lock(mu_);
  std::map<int, TaskExit> out;
  for (auto it = exits_.lower_bound({job.value(), run, 0}); it != exits_.end(); ++it) {
    const auto& [j, r, task] = it->first;
    if (j != job.value() || r != run) break;
    out.emplace(task, it->second);
  }
  return out;
}

void AgentRegistry::Forget(JobId job, int run) {
  std::lock_guard lock(mu_);
  auto it = exits_.lower_bound({job.value(), 0, 0});
  while (it != exits_.end() && std::get<0>(it->first) == job.value() && std::get<1>(it->first) <= run) it = exits_.erase(it);
}

std::optional<EventBody> JobOutcome(const ClusterState& st, JobId id, int run,
                                    const std::map<int, AgentRegistry::TaskExit>& exits, int64_t now_ms) {
  const Job& j = st.job(id);
  if (!j.holds_resources() || CurrentRun(j) != run || exits.empty()) return std::nullopt;
  bool preempting = j.state == JobState::kPreempting;
  bool signalled = false;
  for (const auto& [task, e] : exits) {
    if (task < 0 || task >= static_cast<int>(j.placement.size())) continue;
    // Only the node the task is placed on speaks for it (the API drops other nodes' reports
    // too; this keeps a stray one from ending the job).
    if (st.fleet().node(j.placement[task].node).name != e.node) continue;
    signalled |= e.report.preempted;
    // A task that fails on its own ends the job; one that fails while being stopped does not.
    if (!e.report.succeeded() && !preempting && !e.report.preempted) {
      return JobFailed{id, "task " + std::to_string(task) + " on " + e.node + ": " + e.report.reason};
    }
  }
  size_t own = std::count_if(exits.begin(), exits.end(), [&](const auto& e) {
    return e.first >= 0 && e.first < static_cast<int>(j.placement.size()) &&
           st.fleet().node(j.placement[e.first].node).name == e.second.node;
  });
  if (own < j.placement.size()) return std::nullopt;  // a gang ends when every task has
  bool all_succeeded = std::all_of(exits.begin(), exits.end(), [](const auto& e) { return e.second.report.succeeded(); });
  if (preempting && (signalled || !all_succeeded)) {
    // The work its checkpoints saved: a simulated job's by its interval; a command job keeps
    // its checkpoint directory on the node and reports no duration.
    int64_t saved = j.saved_work_ms;
    if (j.spec.checkpoint_interval_ms > 0) {
      int64_t ran = std::max<int64_t>(0, std::min(now_ms, j.last_preempted_ms) - j.last_started_ms);
      saved += ran / j.spec.checkpoint_interval_ms * j.spec.checkpoint_interval_ms;
    }
    return JobStopped{id, std::min(saved, j.spec.duration_ms)};
  }
  return JobFinished{id};
}

}  // namespace allot
