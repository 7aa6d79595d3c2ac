#include "state/event_nodes.h"

#include <type_traits>

namespace allot {
namespace {

// Every node of the job's placement (a master's address is in every task's answer, so a change to
// one task is news to all of them).
void AddJob(const ClusterState& st, JobId id, NodesTouched& out) {
  if (!id.valid() || id.value() >= st.jobs().size()) return;
  for (const TaskPlacement& p : st.job(id).placement) out.Add(p.node);
}

// The node, and every node of the jobs it holds (requeued with it, or told of its new master).
void AddNode(const ClusterState& st, NodeId node, NodesTouched& out) {
  if (!node.valid() || node.value() >= st.fleet().size()) return;
  out.Add(node);
  for (JobId id : st.JobsOn(node)) AddJob(st, id, out);
}

template <class T>
constexpr bool kTouchesNone =
    std::is_same_v<T, TenantUpserted> || std::is_same_v<T, TokenIssued> || std::is_same_v<T, TokenRevoked> ||
    std::is_same_v<T, AuditRecorded> || std::is_same_v<T, TenantRemoved> || std::is_same_v<T, BudgetSet> ||
    std::is_same_v<T, BudgetWarned> || std::is_same_v<T, LedgerAppended> || std::is_same_v<T, TemplateSaved> ||
    std::is_same_v<T, TemplateRemoved>;

}  // namespace

void AddNodesTouched(const ClusterState& st, const EventBody& e, NodesTouched& out) {
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (kTouchesNone<T>) {
          // Tenants' budgets, tokens, audit records, ledgers, templates: no node's tasks.
        } else if constexpr (std::is_same_v<T, JobSubmitted>) {
          // A new job holds nothing yet (its placement is a later JobPlaced).
        } else if constexpr (std::is_same_v<T, JobPreemptionStarted>) {
          AddJob(st, b.job, out);
          AddJob(st, b.preemptor, out);
        } else if constexpr (std::is_same_v<T, JobRejected> || std::is_same_v<T, JobPlaced> ||
                             std::is_same_v<T, JobStopped> || std::is_same_v<T, JobFinished> ||
                             std::is_same_v<T, JobCancelled> || std::is_same_v<T, JobFailed> ||
                             std::is_same_v<T, TaskRunReported>) {
          AddJob(st, b.job, out);
        } else if constexpr (std::is_same_v<T, ReservationSet>) {
          AddJob(st, b.job, out);
          for (const TaskPlacement& p : b.tasks) out.Add(p.node);
        } else if constexpr (std::is_same_v<T, NodeConditionChanged> || std::is_same_v<T, NodeFailed> ||
                             std::is_same_v<T, MigRelayout> || std::is_same_v<T, MigLayoutReported>) {
          AddNode(st, b.node, out);
        } else if constexpr (std::is_same_v<T, NodeAdded> || std::is_same_v<T, NodeRegistered>) {
          AddNode(st, st.fleet().Find(b.spec.name), out);
        } else {
          // Reservations and their acceptance, tenant moves (paths are in every task), interference
          // responses (throttles), services, SSH keys (dedicated clusters' authorised keys).
          out.all = true;
        }
      },
      e);
}

}  // namespace allot
