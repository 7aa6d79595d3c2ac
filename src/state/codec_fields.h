// The binary encoding shared by the event codec (journal records) and the snapshot codec: a
// Writer and a Reader, and one Fields() list per struct that both walk. Internal to src/state.
//
// Integers are zigzag varints, strings and lists length-prefixed, Resources every slot in id
// order. A field added to a listed struct must be added to its Fields() list and the formats
// that use it bumped (kEventFormat, kSnapshotFormat); the size checks below catch the first half.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "state/event.h"
#include "state/event_codec.h"

namespace allot::codec {

// One description of each type's fields serves both directions: Fields(archive, value) calls
// archive(field) for each field in order; the Writer appends, the Reader fills.
class Writer {
 public:
  std::string out;

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  template <class T>
  void operator()(const T& v);
  static constexpr uint8_t format() { return kEventFormat; }
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  // The event format the bytes were written in: field lists read what that format had (a
  // journal written by an older allotd still replays), and the Writer always writes the newest.
  Reader(std::string_view in, uint8_t format) : in_(in), format_(format) {}
  uint8_t format() const { return format_; }
  // Set by the snapshot codec to the snapshot's format (0 in the event codec).
  uint8_t snapshot_format = 0;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool done() const { return pos_ == in_.size(); }
  size_t pos() const { return pos_; }

  // A count of items that follow, each at least one byte: one larger than the bytes left is
  // damage, refused before anything is allocated for it.
  uint64_t Count() {
    uint64_t n = Varint();
    if (n > in_.size() - pos_) {
      Fail("a count of " + std::to_string(n) + " is more than the " + std::to_string(in_.size() - pos_) + " bytes left");
      return 0;
    }
    return n;
  }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) {
        Fail("truncated");
        return 0;
      }
      uint8_t b = static_cast<uint8_t>(in_[pos_++]);
      v |= uint64_t{b & 0x7Fu} << shift;
      if (!(b & 0x80)) return v;
    }
    Fail("varint too long");
    return 0;
  }
  std::string_view Bytes(uint64_t n) {
    if (n > in_.size() - pos_) {
      Fail("truncated");
      return {};
    }
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at byte " + std::to_string(pos_);
  }
  template <class T>
  void operator()(T& v);

 private:
  std::string_view in_;
  uint8_t format_ = kEventFormat;
  size_t pos_ = 0;
  std::string error_;
};

inline uint64_t Zig(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t Unzig(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsPair : std::false_type {};
template <class T, class U>
struct IsPair<std::pair<T, U>> : std::true_type {};
template <class T>
struct IsId : std::false_type {};
template <class Tag>
struct IsId<Id<Tag>> : std::true_type {};

// Field lists. Add a field at the end of its list and bump kEventFormat (and kSnapshotFormat:
// snapshots embed these lists) when the encoding changes; decoders refuse formats they do not know.
template <class A, class T>
void Fields(A& a, T& x);

template <class A>
void Fields(A& a, MigInstance& x) { a(x.profile); a(x.start); }
template <class A>
void Fields(A& a, TaskShare& x) { a(x.kind); a(x.mig); a(x.mig_created); a(x.percent); a(x.memory); }
template <class A>
void Fields(A& a, TaskPlacement& x) { a(x.node); a(x.gpu_mask); a(x.cpu); a(x.memory); a(x.share); }
template <class A>
void Fields(A& a, TaskGroup& x) {
  a(x.count); a(x.gpu); a(x.cpu); a(x.memory); a(x.share); a(x.fractional); a(x.mig_profile); a(x.percent);
  a(x.gpu_memory);
}
template <class A>
void Fields(A& a, NodeSpec& x) {
  a(x.name); a(x.zone); a(x.rack); a(x.nvlink_domain); a(x.cpu); a(x.memory); a(x.gpu_model); a(x.gpu_count);
  a(x.sharing); a(x.mig_layout); a(x.replicas); a(x.oversubscription_milli); a(x.gpu_groups);
  if (a.format() >= 7) a(x.labels);  // format 7
}
template <class A>
void Fields(A& a, Requirement& x) { a(x.label); a(x.op); a(x.value); }
template <class A>
void Fields(A& a, TenantSpec& x) {
  a(x.path); a(x.guarantee); a(x.guarantee_set); a(x.max); a(x.weight); a(x.trust); a(x.pools);
  if (a.format() >= 6) a(x.max_reserved);  // format 6
  if (a.format() >= 9) a(x.business_hours);  // format 9
}
template <class A>
void Fields(A& a, JobSpec& x) {
  a(x.name); a(x.tenant); a(x.gpu_resource); a(x.groups); a(x.topology); a(x.priority); a(x.duration_ms);
  a(x.time_limit_ms); a(x.min_runtime_ms); a(x.checkpoint_interval_ms); a(x.grace_ms); a(x.submit_ms); a(x.kind);
  if (a.format() >= 2) a(x.command);  // format 2
  if (a.format() >= 4) a(x.environment);  // format 4
  if (a.format() >= 6) a(x.reservation);  // format 6
  if (a.format() >= 7) a(x.require);  // format 7
  if (a.format() >= 10) a(x.sizing);  // format 10
  if (a.format() >= 12) {  // format 12
    a(x.array); a(x.retries); a(x.after);
  }
  if (a.format() >= 14) {  // format 14
    a(x.template_name); a(x.template_tenant); a(x.vram_mib);
  }
}
template <class A>
void Fields(A& a, ArrayElement& x) { a(x.array); a(x.index); a(x.frame); a(x.count); a(x.parallel); }
template <class A>
void Fields(A& a, Dependency& x) { a(x.job); a(x.state); }
template <class A>
void Fields(A& a, ModelWorkload& x) {
  a(x.name); a(x.parameters); a(x.precision); a(x.context); a(x.batch); a(x.layers); a(x.hidden); a(x.mode); a(x.override);
}
template <class A>
void Fields(A& a, MemoryEstimate& x) { a(x.weights_mib); a(x.kv_cache_mib); a(x.training_mib); a(x.overhead_mib); }
template <class A>
void Fields(A& a, GroupSizing& x) { a(x.group); a(x.model); a(x.estimate); a(x.allocation); a(x.why); }
template <class A>
void Fields(A& a, VolumeMount& x) { a(x.tenant); a(x.volume); a(x.path); a(x.read_only); }
template <class A>
void Fields(A& a, JobEnvironment& x) { a(x.image); a(x.mounts); a(x.env); a(x.shm_size_mib); }
template <class A>
void Fields(A& a, NodeAdded& x) { a(x.spec); }
template <class A>
void Fields(A& a, NodeConditionChanged& x) { a(x.node); a(x.condition); }
template <class A>
void Fields(A& a, TenantUpserted& x) { a(x.spec); }
template <class A>
void Fields(A& a, JobSubmitted& x) { a(x.spec); }
template <class A>
void Fields(A& a, JobRejected& x) { a(x.job); a(x.reason); }
template <class A>
void Fields(A& a, JobPlaced& x) { a(x.job); a(x.admission); a(x.placement); }
template <class A>
void Fields(A& a, JobPreemptionStarted& x) { a(x.job); a(x.kind); a(x.preemptor); a(x.deadline_ms); }
template <class A>
void Fields(A& a, JobStopped& x) { a(x.job); a(x.saved_work_ms); }
template <class A>
void Fields(A& a, JobFinished& x) { a(x.job); }
template <class A>
void Fields(A& a, JobCancelled& x) { a(x.job); }
template <class A>
void Fields(A& a, MigRelayout& x) { a(x.node); a(x.gpu); a(x.layout); a(x.ready_ms); }
template <class A>
void Fields(A& a, ReservationSet& x) { a(x.job); a(x.start_ms); a(x.tasks); }
template <class A>
void Fields(A& a, Principal& x) { a(x.name); a(x.role); a(x.scope); }
template <class A>
void Fields(A& a, TokenRecord& x) { a(x.hash); a(x.principal); a(x.issued_ms); a(x.revoked); }
template <class A>
void Fields(A& a, TokenIssued& x) { a(x.record); }
template <class A>
void Fields(A& a, TokenRevoked& x) { a(x.hash); }
template <class A>
void Fields(A& a, AuditRecord& x) {
  a(x.time_ms); a(x.actor); a(x.role); a(x.tenant); a(x.action); a(x.target); a(x.outcome); a(x.request_id);
  a(x.prev_hash); a(x.hash);
}
template <class A>
void Fields(A& a, AuditRecorded& x) { a(x.record); }
template <class A>
void Fields(A& a, TenantRemoved& x) { a(x.path); }
template <class A>
void Fields(A& a, TenantMoved& x) { a(x.path); a(x.to); }
template <class A>
void Fields(A& a, NodeRegistered& x) { a(x.spec); }
template <class A>
void Fields(A& a, MigLayoutReported& x) { a(x.node); a(x.gpu); a(x.layout); }
template <class A>
void Fields(A& a, NodeFailed& x) { a(x.node); a(x.condition); a(x.reason); }
template <class A>
void Fields(A& a, JobFailed& x) { a(x.job); a(x.reason); }
template <class A>
void Fields(A& a, BudgetSet& x) { a(x.path); a(x.spend_micros); a(x.gpu_hours_milli); }
template <class A>
void Fields(A& a, BudgetWarned& x) { a(x.path); a(x.period); a(x.what); a(x.percent); a(x.message); }
template <class A>
void Fields(A& a, LedgerAppended& x) { a(x.entries); a(x.closes); }
template <class A>
void Fields(A& a, TaskRunReported& x) { a(x.job); a(x.run); a(x.task); a(x.node); a(x.started_ms); a(x.ended_ms); }
template <class A>
void Fields(A& a, Window& x) { a(x.start_ms); a(x.end_ms); }
template <class A>
void Fields(A& a, NodeHold& x) { a(x.node); a(x.gpus); }
template <class A>
void Fields(A& a, ReservationSpec& x) {
  a(x.name); a(x.tenant); a(x.gpu_resource); a(x.gpus); a(x.nodes); a(x.topology); a(x.windows); a(x.drain_before_ms);
  if (a.format() >= 6) a(x.orchestrator);  // format 6
  if (a.format() >= 7) a(x.require);  // format 7
}
template <class A>
void Fields(A& a, ReservationBooked& x) { a(x.spec); a(x.holds); }
template <class A>
void Fields(A& a, ReservationCancelled& x) { a(x.id); }
template <class A>
void Fields(A& a, ReservationEndSet& x) { a(x.id); a(x.window); a(x.end_ms); }
template <class A>
void Fields(A& a, ReservationShrunk& x) { a(x.id); a(x.count); }
template <class A>
void Fields(A& a, ReservationShrink& x) { a(x.first_window); a(x.count_before); a(x.at_ms); a(x.gpus_before); a(x.gpus_after); }
template <class A>
void Fields(A& a, AcceptanceRecord& x) { a(x.window); a(x.node); a(x.state); a(x.why); a(x.replaced_by); a(x.at_ms); }
// Only in snapshots (format 8 on); format 10 adds the shrinks and the acceptance records.
template <class A>
void Fields(A& a, CapacityReservation& x) {
  a(x.id); a(x.spec); a(x.holds); a(x.bookings); a(x.state); a(x.booked_ms); a(x.cancelled_ms);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 10) return;  // formats 8 and 9: never shrunk, no acceptance yet
  }
  a(x.shrinks);
  a(x.acceptance);
}
template <class A>
void Fields(A& a, SshKeyRecord& x) {
  a(x.id); a(x.tenant); a(x.line); a(x.fingerprint); a(x.added_by); a(x.added_ms); a(x.removed); a(x.removed_ms);
}
template <class A>
void Fields(A& a, SshKeyAdded& x) { a(x.record); }  // format 6
template <class A>
void Fields(A& a, SshKeyRemoved& x) { a(x.id); }  // format 6
template <class A>
void Fields(A& a, ReservationNodeAccepted& x) { a(x.id); a(x.window); a(x.node); a(x.passed); a(x.why); }  // format 7
template <class A>
void Fields(A& a, ReservationHoldMoved& x) { a(x.id); a(x.window); a(x.from); a(x.to); a(x.why); }  // format 7
template <class A>
void Fields(A& a, InterferenceResponse& x) {
  a(x.node); a(x.gpu); a(x.victim); a(x.victim_task); a(x.neighbour); a(x.neighbour_task); a(x.neighbour_run);
  a(x.action); a(x.percent); a(x.neighbour_percent); a(x.baseline_p99_us); a(x.p99_us); a(x.neighbour_sm_percent);
  a(x.neighbour_memory_percent); a(x.since_ms);
  if (a.format() >= 11) { a(x.victim_group); a(x.hardened); }  // format 11: moves and hardenings
}  // format 8
template <class A>
void Fields(A& a, InterferenceActed& x) { a(x.response); a(x.why); }  // format 8
template <class A>
void Fields(A& a, InterferenceCleared& x) {
  a(x.node); a(x.gpu); a(x.neighbour); a(x.neighbour_task); a(x.why);
  if (a.format() >= 11) a(x.action);  // format 11
}  // format 8
template <class A>
void Fields(A& a, AutoscaleSpec& x) {
  a(x.target_milli); a(x.stable_window_ms); a(x.panic_window_ms); a(x.panic_threshold_milli); a(x.scale_down_delay_ms);
}  // format 13
template <class A>
void Fields(A& a, ServiceSpec& x) {
  a(x.name); a(x.tenant); a(x.replica); a(x.replicas); a(x.min_replicas); a(x.max_replicas); a(x.spread); a(x.port);
  a(x.max_unavailable); a(x.max_surge); a(x.autoscale);
}  // format 13
template <class A>
void Fields(A& a, ServiceReplica& x) {
  a(x.slot); a(x.job); a(x.revision); a(x.port); a(x.restarts); a(x.crashes); a(x.last_exit);
}  // snapshots only
template <class A>
void Fields(A& a, Service& x) {
  a(x.id); a(x.spec); a(x.templates); a(x.revision); a(x.desired); a(x.deleted); a(x.created_ms); a(x.deleted_ms);
  a(x.scaled_ms); a(x.scale_reason); a(x.replicas); a(x.replaced); a(x.next_slot);
}  // snapshots only (format 16)
template <class A>
void Fields(A& a, ServiceCreated& x) { a(x.spec); }  // format 13
template <class A>
void Fields(A& a, ServiceReplicaAdded& x) { a(x.service); a(x.slot); a(x.revision); a(x.port); a(x.spec); }  // format 13
template <class A>
void Fields(A& a, ServiceReplicaRestarted& x) { a(x.service); a(x.job); a(x.reason); }  // format 13
template <class A>
void Fields(A& a, ServiceReplicaRemoved& x) { a(x.service); a(x.job); a(x.why); }  // format 13
template <class A>
void Fields(A& a, ServiceScaled& x) { a(x.service); a(x.desired); a(x.why); }  // format 13
template <class A>
void Fields(A& a, ServiceUpdated& x) { a(x.service); a(x.replica); a(x.why); }  // format 13
template <class A>
void Fields(A& a, ServiceDeleted& x) { a(x.service); }  // format 13
template <class A>
void Fields(A& a, JobTemplate& x) { a(x.tenant); a(x.name); a(x.description); a(x.fields); a(x.saved_by); a(x.saved_ms); }  // format 14
template <class A>
void Fields(A& a, TemplateSaved& x) { a(x.template_); }  // format 14
template <class A>
void Fields(A& a, TemplateRemoved& x) { a(x.tenant); a(x.name); }  // format 14

// A field added to one of these structs must be added to its Fields() list above (and the
// format version bumped): these sizes catch the first half of that.
static_assert(sizeof(NodeSpec) == 272, "NodeSpec changed: update Fields(NodeSpec) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(TenantSpec) == 856, "TenantSpec changed: update Fields(TenantSpec) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(JobSpec) == 384 + sizeof(JobEnvironment), "JobSpec changed: update Fields(JobSpec) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ArrayElement) == 56, "ArrayElement changed: update Fields(ArrayElement) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(Dependency) == 40, "Dependency changed: update Fields(Dependency) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(GroupSizing) == 192, "GroupSizing changed: update Fields(GroupSizing) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ModelWorkload) == 88, "ModelWorkload changed: update Fields(ModelWorkload) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(JobEnvironment) == 88, "JobEnvironment changed: update Fields(JobEnvironment) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(VolumeMount) == 104, "VolumeMount changed: update Fields(VolumeMount) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(TaskGroup) == 48, "TaskGroup changed: update Fields(TaskGroup) and kEventFormat, kSnapshotFormat");
// TaskShare::tenant is not written: it is the job's, stamped where a placement enters the state.
static_assert(sizeof(TaskShare) == 16, "TaskShare changed: update Fields(TaskShare) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(MigInstance) == 2, "MigInstance changed: update Fields(MigInstance) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(Principal) == 40, "Principal changed: update Fields(Principal) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(TokenRecord) == 88, "TokenRecord changed: update Fields(TokenRecord) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(AuditRecord) == 272, "AuditRecord changed: update Fields(AuditRecord) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ReservationSpec) == 120, "ReservationSpec changed: update Fields(ReservationSpec) and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ReservationShrink) == 24, "ReservationShrink changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(CapacityReservation) == 248, "CapacityReservation changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(AcceptanceRecord) == 64, "AcceptanceRecord changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(SshKeyRecord) == 128, "SshKeyRecord changed: update its Fields and kEventFormat, kSnapshotFormat");
static_assert(sizeof(InterferenceResponse) == 128, "InterferenceResponse changed: update its Fields and kEventFormat, kSnapshotFormat");
static_assert(sizeof(AutoscaleSpec) == 40, "AutoscaleSpec changed: update its Fields and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ServiceSpec) == 112 + sizeof(JobSpec), "ServiceSpec changed: update its Fields and kEventFormat, kSnapshotFormat");
static_assert(sizeof(ServiceReplica) == 56, "ServiceReplica changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(JobTemplate) == 144, "JobTemplate changed: update its Fields and kEventFormat, kSnapshotFormat");
static_assert(sizeof(TaskPlacement) == 48, "TaskPlacement changed: update Fields(TaskPlacement) and kEventFormat, kSnapshotFormat");

template <class T>
void Writer::operator()(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    Varint(v ? 1 : 0);
  } else if constexpr (std::is_enum_v<T>) {
    Varint(static_cast<uint64_t>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    Varint(Zig(v));
  } else if constexpr (std::is_integral_v<T>) {
    Varint(v);
  } else if constexpr (IsId<T>::value) {
    Varint(v.value());
  } else if constexpr (std::is_same_v<T, std::string>) {
    Varint(v.size());
    out += v;
  } else if constexpr (std::is_same_v<T, Resources>) {
    for (int r = 0; r < kMaxResources; ++r) Varint(Zig(v[static_cast<ResourceId>(r)]));
  } else if constexpr (IsVector<T>::value) {
    Varint(v.size());
    for (const auto& e : v) (*this)(e);
  } else if constexpr (IsPair<T>::value) {
    (*this)(v.first);
    (*this)(v.second);
  } else {
    Fields(*this, const_cast<T&>(v));
  }
}

template <class T>
void Reader::operator()(T& v) {
  if (!ok()) return;
  if constexpr (std::is_same_v<T, bool>) {
    uint64_t x = Varint();
    if (x > 1) Fail("a boolean is not 0 or 1");
    v = x == 1;
  } else if constexpr (std::is_enum_v<T>) {
    v = static_cast<T>(Varint());
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    int64_t x = Unzig(Varint());
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) Fail("integer out of range");
    v = static_cast<T>(x);
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t x = Varint();
    if (x > std::numeric_limits<T>::max()) Fail("integer out of range");
    v = static_cast<T>(x);
  } else if constexpr (IsId<T>::value) {
    uint64_t x = Varint();
    if (x > UINT32_MAX) Fail("id out of range");
    v = T(static_cast<uint32_t>(x));
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = std::string(Bytes(Varint()));
  } else if constexpr (std::is_same_v<T, Resources>) {
    for (int r = 0; r < kMaxResources; ++r) v[static_cast<ResourceId>(r)] = Unzig(Varint());
  } else if constexpr (IsVector<T>::value) {
    uint64_t n = Varint();
    if (n > in_.size()) {
      Fail("list longer than the record");
      return;
    }
    v.clear();
    v.resize(n);
    for (auto& e : v) (*this)(e);
  } else if constexpr (IsPair<T>::value) {
    (*this)(v.first);
    (*this)(v.second);
  } else {
    Fields(*this, v);
  }
}

}  // namespace allot::codec
