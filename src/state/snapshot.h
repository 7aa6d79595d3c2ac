// A snapshot of a whole ClusterState, so start-up restores it and replays only the journal's
// tail instead of every event since the beginning.
//
//   byte 0       format version (kSnapshotFormat)
//   bytes 1-8    body length, little-endian
//   bytes 9-16   checksum of the body, little-endian
//   body         the state's primary data, in the event codec's encoding (state/codec_fields.h):
//                resource names, nodes (spec, condition, MIG layouts), tenants (tombstones
//                included), tokens (revoked included), audit records, shape interning, jobs
//                (spec and every runtime field), MPS shapes, the backfill reservation, then
//                (format 3) budgets, budget warnings given and the ledger's entries, then
//                (format 4) the agents' task reports
//
// Indexes — the job sets, what the fleet holds and has free, tenant usage — are not written:
// a restore rebuilds them from the jobs and then checks VerifyInvariants. Encoding the same
// state twice gives the same bytes, and EncodeSnapshot of a restored state gives back the bytes
// it was restored from. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "state/cluster_state.h"

namespace allot {

// 2: JobSpec.command (event format 2).
// 3: each ended run's admission class, the billing state (budgets, warnings, ledger), a node's
//    agent-managed flag and a job's requeue count (node agents; with the node conditions and the
//    job state they added). Format 2 still restores (no billing state then, no agent-managed
//    nodes, no requeues; ended runs take no class, metered as their job's last); an older one is
//    refused, and start-up then replays the journal instead.
// 4: the agents' task reports (TaskRunReported); formats 2 and 3 restore with none.
// 5: the history of the tenants' floors (BillingState::floor_changes); older formats restore
//    with none, and floor+burst then bills the floors held at the snapshot as held all along.
//    Each ended run says whether it ran on agent-managed nodes (RunSpan::on_agents).
// 6: JobSpec.environment (event format 4); older formats restore every job with none.
// 7: each MIG GPU's layout its node agent reported holding (MigLayoutReported); older formats
//    restore with none, so agent-managed MIG GPUs wait for the next report.
// 8: reservations of capacity (state/reservation.h); older formats restore with none.
// 9: JobSpec.reservation (event format 6); the admission class kReserved and the preemption
//    kinds kReservation and kWindowEnd. Older formats restore every job with none.
// 10: node labels and the requirements of jobs and reservations (event format 7); reservations'
//     shrinks (CapacityReservation::shrinks) and acceptance records (AcceptanceRecord). Older
//     formats restore with none.
// 11: the noisy-neighbour responses in force (ClusterState::interference, event format 8); older
//     formats restore with none.
// 12: tenants' business hours (event format 9). Older formats restore with none.
// 13: JobSpec.sizing, the task groups sized from a model (event format 10); older formats
//     restore every job with none.
// 14: the noisy-neighbour moves and hardenings (event format 11: InterferenceResponse's
//     victim_group and hardened) and a hardened job's own task groups (Job::own_groups); older
//     formats restore with none.
// 15: JobSpec.array, .retries and .after (event format 12) and each job's retried failures
//     (Job::failures); older formats restore every job with none.
// 16: inference services (ClusterState::services, event format 13); older formats restore with
//     none.
// 17: job templates (ClusterState::templates, event format 14), JobSpec.template_name,
//     .template_tenant and .vram_mib; older formats restore with none.
inline constexpr uint8_t kSnapshotFormat = 17;

std::string EncodeSnapshot(const ClusterState& state);

// Restores `bytes` into `into`, which must be a fresh, empty state. Refuses (naming what is
// wrong: truncated, trailing bytes, an unknown format, a checksum or state check that fails)
// and leaves `into` untouched on error.
Status RestoreSnapshot(std::string_view bytes, ClusterState& into);

// The checksum a snapshot's header carries, of its body. It catches damage (a torn write, a
// flipped bit), not tampering; exposed for tests that forge damaged bodies.
uint64_t SnapshotChecksum(std::string_view body);

}  // namespace allot
