// The journal's encoding of an Event: compact, versioned, deterministic bytes.
//
//   byte 0      format version (kEventFormat)
//   byte 1      event type (the index in EventBody)
//   varint      time_ms (zigzag)
//   ...         the event's fields in declaration order: integers as zigzag varints, strings
//               and lists length-prefixed
//
// Encoding the same event twice gives the same bytes, and Decode(Encode(e)) == e field for
// field. A decoder refuses a newer format, an unknown type, truncated or trailing bytes, with
// the reason. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "state/event.h"

namespace allot {

// 2: JobSpec.command. Records of format 1 still decode (the command is empty).
// 3: node agents (NodeRegistered, NodeFailed, JobFailed); no field of an older event changed, so
//    records of formats 1 and 2 decode as before, and an allotd that predates agents refuses a
//    journal that has them by its format ("a newer allotd wrote it") rather than an event type.
// 4: JobSpec.environment (image, mounts, env, shm size). Records of formats 1 to 3 decode with an
//    empty environment.
// 5: MigLayoutReported (what a node agent holds of its MIG layout); no field of an older event
//    changed, so records of formats 1 to 4 decode as before.
// 7: node labels (NodeSpec.labels, in NodeAdded and NodeRegistered) and the node requirements
//    of jobs and reservations (JobSpec.require, ReservationSpec.require). Records of formats 1
//    to 6 decode with none. Also new in 7: the events ReservationShrunk, and the acceptance of
//    booked nodes (ReservationNodeAccepted, ReservationHoldMoved).
// 8: the noisy-neighbour responses (InterferenceActed, InterferenceCleared); no field of an
//    older event changed, so records of formats 1 to 7 decode as before.
// 9: a tenant's business hours (TenantSpec.business_hours, in TenantUpserted). Records of
//    formats 1 to 8 decode with none.
// 10: JobSpec.sizing (state/sizing.h: the model, the estimate and the allocation chosen for each
//     task group sized from a model). Records of formats 1 to 9 decode with none.
// 11: the noisy-neighbour moves and hardenings: InterferenceResponse.victim_group and .hardened
//     (in InterferenceActed), InterferenceCleared.action, and the preemption kind kInterference.
//     Records of formats 1 to 10 decode as throttles.
// 12: arrays, retries and dependencies (JobSpec.array, .retries, .after: docs/arrays.md). Records
//     of formats 1 to 11 decode with none.
// 13: inference services (ServiceCreated, ServiceReplicaAdded, ServiceReplicaRestarted,
//     ServiceReplicaRemoved, ServiceScaled, ServiceUpdated, ServiceDeleted); no field of an older
//     event changed, so records of formats 1 to 12 decode as before.
// 14: job templates (TemplateSaved, TemplateRemoved: docs/templates.md), the template a job
//     came from (JobSpec.template_name, .template_tenant) and its tasks' GPU memory
//     (JobSpec.vram_mib). Records of formats 1 to 13 decode with none.
inline constexpr uint8_t kEventFormat = 14;
inline constexpr uint8_t kOldestEventFormat = 1;

std::string EncodeEvent(const Event& e);
Result<Event> DecodeEvent(std::string_view bytes);

// The name of an event's type ("JobSubmitted"), for logs and errors.
const char* EventTypeName(const Event& e);

}  // namespace allot
