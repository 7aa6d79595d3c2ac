// Every change of state is an Event. ClusterState::apply is the only code that mutates state;
// replaying the same events rebuilds the same state.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "fleet/fleet.h"
#include "state/interference.h"
#include "state/job.h"
#include "state/job_template.h"
#include "state/reservation.h"
#include "state/service.h"
#include "state/ssh_key.h"
#include "state/audit.h"
#include "state/billing_state.h"
#include "tenancy/access.h"
#include "tenancy/quota_tree.h"

namespace allot {

struct NodeAdded { NodeSpec spec; bool operator==(const NodeAdded&) const = default; };
struct NodeConditionChanged { NodeId node; NodeCondition condition; bool operator==(const NodeConditionChanged&) const = default; };
struct TenantUpserted { TenantSpec spec; bool operator==(const TenantUpserted&) const = default; };
struct JobSubmitted { JobSpec spec; bool operator==(const JobSubmitted&) const = default; };
struct JobRejected { JobId job; std::string reason; bool operator==(const JobRejected&) const = default; };
// Admitted with a class and placed: resources are held from now.
struct JobPlaced { JobId job; AdmissionClass admission; std::vector<TaskPlacement> placement; bool operator==(const JobPlaced&) const = default; };
// The job is signalled; it keeps its resources until it exits or the deadline passes.
struct JobPreemptionStarted { JobId job; PreemptKind kind; JobId preemptor; int64_t deadline_ms; bool operator==(const JobPreemptionStarted&) const = default; };
// A preempted job has exited: resources are freed and it is requeued with the work it saved.
struct JobStopped { JobId job; int64_t saved_work_ms; bool operator==(const JobStopped&) const = default; };
struct JobFinished { JobId job; bool operator==(const JobFinished&) const = default; };
struct JobCancelled { JobId job; bool operator==(const JobCancelled&) const = default; };
// The free instances of a MIG GPU are replaced by `layout` (held instances are kept); the new
// instances are usable from ready_ms.
// The backfill reservation: `job` is expected to start at start_ms on `tasks`; jobs started
// later must not delay it. An invalid job clears it.
struct ReservationSet { JobId job; int64_t start_ms = 0; std::vector<TaskPlacement> tasks; bool operator==(const ReservationSet&) const = default; };
// A bearer token (its hash) for a principal with a role over a tenant subtree; revoked by hash.
struct TokenIssued { TokenRecord record; bool operator==(const TokenIssued&) const = default; };
struct TokenRevoked { std::string hash; bool operator==(const TokenRevoked&) const = default; };
// One audit record, chained to the previous one (see state/audit.h).
struct AuditRecorded { AuditRecord record; bool operator==(const AuditRecorded&) const = default; };
// The tenant at `path` is deleted (no children, no pending or running jobs); tokens scoped at it
// are revoked. Its id stays as a tombstone for the finished jobs that name it.
struct TenantRemoved { std::string path; bool operator==(const TenantRemoved&) const = default; };
// The subtree at `path` moves to `to` (new parent, new name or both), its usage with it.
struct TenantMoved { std::string path; std::string to; bool operator==(const TenantMoved&) const = default; };
struct MigRelayout { NodeId node; int gpu = 0; MigLayout layout; int64_t ready_ms = 0; bool operator==(const MigRelayout&) const = default; };

// A node agent registered `spec.name`. A new node is added, agent-managed and accepting (not
// schedulable until its acceptance checks pass). A known node must report the same inventory;
// it becomes accepting again and the jobs it held are requeued (its agent restarted, so their
// processes are gone).
struct NodeRegistered { NodeSpec spec; bool operator==(const NodeRegistered&) const = default; };
// The node failed: lost (its agent stopped heartbeating: down), a hardware fault (repair) or a
// software fault being reset (accepting). Every job holding resources on it is requeued at its
// old queue place with its priority, keeping the work it checkpointed.
struct NodeFailed { NodeId node; NodeCondition condition = NodeCondition::kDown; std::string reason; bool operator==(const NodeFailed&) const = default; };
// A task exited unsuccessfully: the job ends failed with `reason`; agents stop its other tasks.
struct JobFailed { JobId job; std::string reason; bool operator==(const JobFailed&) const = default; };
// A tenant node's caps per billing period (kNoCap: none; both kNoCap removes the budget).
struct BudgetSet { std::string path; int64_t spend_micros = kNoCap; int64_t gpu_hours_milli = kNoCap; bool operator==(const BudgetSet&) const = default; };
// A budget crossed `percent` (80, 100) of its cap in `period`: given once per (tenant, period,
// what, percent). Planned by the pass (metering/budget_gate.h), so the simulator gives the same.
struct BudgetWarned { std::string path; std::string period; std::string what; int32_t percent = 0; std::string message; bool operator==(const BudgetWarned&) const = default; };
// Ledger entries in text form (metering/ledger.h), continuing its seq; `closes` names the period
// whose signed close entry is among them ("" when none).
struct LedgerAppended { std::vector<std::string> entries; std::string closes; bool operator==(const LedgerAppended&) const = default; };
// The agent on `node` reported task `task` of `job`'s run `run` exited, having run from
// started_ms to ended_ms by the agent's clock: what reconciliation (metering/reconcile.h)
// compares with the run the scheduler charged. Once per (job, run, task).
struct TaskRunReported { JobId job; int32_t run = 0; int32_t task = 0; std::string node; int64_t started_ms = 0; int64_t ended_ms = 0; bool operator==(const TaskRunReported&) const = default; };

// The agent of MIG node `node` reported holding `layout` on GPU `gpu` (journaled when it differs
// from the last report). Its MIG shares are placed there only once it holds the planned layout.
struct MigLayoutReported { NodeId node; int gpu = 0; MigLayout layout; bool operator==(const MigLayoutReported&) const = default; };

// A reservation confirmed (state/reservation.h) with the holds of each window, planned against
// the book when it was asked for (ReservationBook::Find); refused whole if a hold would book a
// GPU twice.
struct ReservationBooked { ReservationSpec spec; std::vector<std::vector<NodeHold>> holds; bool operator==(const ReservationBooked&) const = default; };
// A confirmed reservation cancelled: its windows free their holds at once.
struct ReservationCancelled { ReservationId id; bool operator==(const ReservationCancelled&) const = default; };
// Window `window` of a confirmed reservation ends at `end_ms`: later only where its holds stay
// free (and before the next window), earlier above its start.
struct ReservationEndSet { ReservationId id; int32_t window = 0; int64_t end_ms = 0; bool operator==(const ReservationEndSet&) const = default; };
// The reservation cut to `count` GPUs (or nodes, when booked by node) from its first window not
// ended at the event's time; refused when its jobs, or its dedicated cluster in an open window,
// hold what would be cut.
struct ReservationShrunk { ReservationId id; int32_t count = 0; bool operator==(const ReservationShrunk&) const = default; };

// Acceptance of booked nodes (issue 16; scheduler/acceptance.h). `node`'s acceptance for window
// `window` settled without a move: passed, or failed with `why` and no free node fits (the hold
// stays; the tenant sees which node and why).
struct ReservationNodeAccepted { ReservationId id; int32_t window = 0; NodeId node; bool passed = false; std::string why; bool operator==(const ReservationNodeAccepted&) const = default; };
// Window `window`'s hold on `from` moves to `to` (the same GPUs; whole nodes: a node of as many),
// because `from` failed its acceptance (`why`). Refused, changing nothing, unless the book takes
// the new holds for the whole window and they keep the reservation's topology.
struct ReservationHoldMoved { ReservationId id; int32_t window = 0; NodeId from; NodeId to; std::string why; bool operator==(const ReservationHoldMoved&) const = default; };

// A tenant registered an SSH public key (state/ssh_key.h); `record.id` is ignored: the state
// numbers keys in order. Refused when the tenant already has a key of that fingerprint.
struct SshKeyAdded { SshKeyRecord record; bool operator==(const SshKeyAdded&) const = default; };
// A registered key removed: no window authorises it from here on.
struct SshKeyRemoved { SshKeyId id; bool operator==(const SshKeyRemoved&) const = default; };

// allotd responded to interference on a shared GPU (state/interference.h): the response is in
// force from now, replacing one for the same neighbour task on that GPU. `why` says what was seen.
struct InterferenceActed { InterferenceResponse response; std::string why; bool operator==(const InterferenceActed&) const = default; };
// The response to `neighbour`'s task on that GPU is lifted (a quiet period passed, or a task ended).
// Lifts the response in force keyed (node, gpu, neighbour, neighbour_task, action).
struct InterferenceCleared { NodeId node; int32_t gpu = 0; JobId neighbour; int32_t neighbour_task = 0; std::string why; InterferenceAction action = InterferenceAction::kThrottle; bool operator==(const InterferenceCleared&) const = default; };

// Inference services (state/service.h; docs/services.md). A service is created with its spec; its
// replicas are jobs the service reconciler adds (submitted and linked in one event), restarts
// after a failure (the failed job back to pending, its run kept), and removes (cancelled).
struct ServiceCreated { ServiceSpec spec; bool operator==(const ServiceCreated&) const = default; };
struct ServiceReplicaAdded { ServiceId service; int32_t slot = 0; int32_t revision = 1; int32_t port = 0; JobSpec spec; bool operator==(const ServiceReplicaAdded&) const = default; };
struct ServiceReplicaRestarted { ServiceId service; JobId job; std::string reason; bool operator==(const ServiceReplicaRestarted&) const = default; };
struct ServiceReplicaRemoved { ServiceId service; JobId job; std::string why; bool operator==(const ServiceReplicaRemoved&) const = default; };
// The replicas wanted now (the autoscaler's decision, or a person's), with why.
struct ServiceScaled { ServiceId service; int32_t desired = 0; std::string why; bool operator==(const ServiceScaled&) const = default; };
// A new revision of the replica template (an update, or a rollback to an older template):
// replicas of older revisions are replaced one at a time.
struct ServiceUpdated { ServiceId service; JobSpec replica; std::string why; bool operator==(const ServiceUpdated&) const = default; };
// The service is deleted: every replica's job is cancelled now.
struct ServiceDeleted { ServiceId service; bool operator==(const ServiceDeleted&) const = default; };
// A job template (state/job_template.h) saved at its tenant: created, or replacing the one of that
// name there. `template_.saved_ms` is ignored: the state takes the event's time.
struct TemplateSaved { JobTemplate template_; bool operator==(const TemplateSaved&) const = default; };
// The template `name` of `tenant` removed; jobs submitted from it keep their fields.
struct TemplateRemoved { TenantId tenant; std::string name; bool operator==(const TemplateRemoved&) const = default; };

using EventBody = std::variant<NodeAdded, NodeConditionChanged, TenantUpserted, JobSubmitted, JobRejected,
                               JobPlaced, JobPreemptionStarted, JobStopped, JobFinished, JobCancelled, MigRelayout,
                               ReservationSet, TokenIssued, TokenRevoked, AuditRecorded, TenantRemoved, TenantMoved,
                               NodeRegistered, NodeFailed, JobFailed, BudgetSet, BudgetWarned, LedgerAppended,
                               TaskRunReported, MigLayoutReported, ReservationBooked, ReservationCancelled,
                               ReservationEndSet, SshKeyAdded, SshKeyRemoved, ReservationShrunk,
                               ReservationNodeAccepted, ReservationHoldMoved, InterferenceActed,
                               InterferenceCleared, ServiceCreated, ServiceReplicaAdded, ServiceReplicaRestarted,
                               ServiceReplicaRemoved, ServiceScaled, ServiceUpdated, ServiceDeleted, TemplateSaved,
                               TemplateRemoved>;

struct Event {
  int64_t time_ms = 0;
  EventBody body;
  bool operator==(const Event&) const = default;
};

}  // namespace allot
