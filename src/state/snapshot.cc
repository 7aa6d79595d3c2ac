#include "state/snapshot.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "state/codec_fields.h"

namespace allot {
namespace codec {

// The state a snapshot holds beyond what events carry. Each list leaves out what a restore
// derives: a tenant's id (its position) and usage (from the active jobs); a job's id (its
// position) and the caches of its spec (demand, has_shares, best_effort).
template <class A>
void Fields(A& a, Tenant& x) {
  a(x.parent); a(x.path); a(x.children); a(x.depth); a(x.guarantee); a(x.guarantee_set); a(x.max); a(x.weight);
  a(x.trust); a(x.pools); a(x.removed);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 9) return;  // formats 2 to 8: no booking cap beyond max
  }
  a(x.max_reserved);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 12) return;  // formats 2 to 11: no business hours
  }
  a(x.business_hours);
}
template <class A>
void Fields(A& a, Job::RunSpan& x) {
  a(x.start_ms); a(x.end_ms);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 3) return;  // format 2 had no class per run: the job's last is taken
  }
  a(x.admission);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 5) return;  // formats 2 to 4: reconciliation takes the job's last placement
  }
  a(x.on_agents);
}
template <class A>
void Fields(A& a, FloorChange& x) { a(x.time_ms); a(x.tenant); a(x.resource); a(x.before); a(x.after); }
template <class A>
void Fields(A& a, BudgetWarning& x) { a(x.time_ms); a(x.tenant); a(x.period); a(x.what); a(x.percent); a(x.message); }
template <class A>
void Fields(A& a, Job& x) {
  a(x.spec);
  bool failures = true;  // format 15: right after the spec
  if constexpr (std::is_same_v<A, Reader>) failures = a.snapshot_format >= 15;
  if (failures) a(x.failures);
  a(x.shape); a(x.state); a(x.admission); a(x.first_started_ms); a(x.last_started_ms); a(x.finished_ms);
  a(x.preemptions); a(x.last_preempted_ms); a(x.preempt_deadline_ms); a(x.preempt_kind); a(x.preemptor);
  a(x.saved_work_ms); a(x.queued_ms); a(x.expected_end_ms); a(x.placement); a(x.reason); a(x.ended_runs);
  if constexpr (std::is_same_v<A, Reader>) {
    if (a.snapshot_format < 3) return;  // format 2: no requeues yet
  }
  a(x.requeues);
  // Job::own_groups: in the last section (format 14), for the few jobs that have them.
}
// A hardened job's own task groups (Job::own_groups), format 14.
struct HardenedJob {
  JobId job;
  std::vector<TaskGroup> own_groups;
};
template <class A>
void Fields(A& a, HardenedJob& x) { a(x.job); a(x.own_groups); }
template <class A>
void Fields(A& a, ClusterState::TaskRunReport& x) {
  a(x.job); a(x.run); a(x.task); a(x.node); a(x.started_ms); a(x.ended_ms); a(x.recorded_ms);
}
template <class A>
void Fields(A& a, ClusterState::Reservation& x) { a(x.job); a(x.start_ms); a(x.made_ms); a(x.tasks); }

// A field added to one of these must be written above (or rebuilt by RebuildIndexes) and
// kSnapshotFormat bumped: these sizes catch the first half. The containers are here too, so a
// new member of the state is not silently left out of its snapshot.
static_assert(sizeof(Tenant) == 1416, "Tenant changed: update Fields(Tenant) and kSnapshotFormat");
static_assert(sizeof(Job::RunSpan) == 24, "RunSpan changed: update Fields(Job::RunSpan) and kSnapshotFormat");
static_assert(sizeof(Job) == 624 + sizeof(JobEnvironment), "Job changed: update Fields(Job) and kSnapshotFormat");
static_assert(sizeof(ClusterState::Reservation) == 48, "Reservation changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(FloorChange) == 32, "FloorChange changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(BillingState) == 200, "BillingState changed: update SnapshotCodec::Billing and kSnapshotFormat");
static_assert(sizeof(BudgetWarning) == 120, "BudgetWarning changed: update its Fields and kSnapshotFormat");
static_assert(sizeof(Node) == 176, "Node changed: capture it in the snapshot (SpecOf, condition) and bump kSnapshotFormat");
// Its MPS counts (clients, percent, memory, mps_tenants) are rebuilt from the jobs' placements.
static_assert(sizeof(GpuShareState) == 112, "GpuShareState changed: capture it in the snapshot and bump kSnapshotFormat");
// Fleet's domain_hist_ (+72), like domain_free_, is derived: nodes added and jobs placed on
// restore rebuild it; so is its capacity index, with its buckets' counts (+24), and its count
// and set of isolation=partial nodes (+32), which AddNode takes from the labels.
static_assert(sizeof(Fleet) == 1632, "Fleet changed: capture its new state in the snapshot and bump kSnapshotFormat");
static_assert(sizeof(QuotaTree) == 80, "QuotaTree changed: capture its new state in the snapshot and bump kSnapshotFormat");
static_assert(sizeof(AccessTable) == 48, "AccessTable changed: capture its new state in the snapshot and bump kSnapshotFormat");
static_assert(sizeof(ClusterState::TaskRunReport) == 40, "TaskRunReport changed: update its Fields and kSnapshotFormat");
// pending_groups_ (+24) is rebuilt in RebuildIndexes, and so are burstable_gpus_ (+48) and
// running_gpus_ (+24);
// change_epoch_ and released_gpus_ (+56) are derived and restart there (a new epoch, no
// releases counted). The Fleet inside grew by its derived domain_hist_ (+72), index counts
// (+24) and partial-isolation nodes (+32, above). The job sets rebuilt there (pending, active,
// burstable, reserved, preempting: IdSet; active by end: ChunkedSet) grew by 8 bytes each (+48).
// shape_changes_ (+8) is derived and restarts at 0 (a memo resets on a restore's new epoch).
static_assert(sizeof(ClusterState) == 3272, "ClusterState changed: capture its new member in the snapshot (or rebuild it "
                                             "in RebuildIndexes) and bump kSnapshotFormat");

}  // namespace codec

namespace {

using codec::Reader;
using codec::Writer;

constexpr size_t kHeaderBytes = 17;  // format, body length, checksum

uint64_t LoadLe64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
}
void StoreLe64(char* p, uint64_t v) {
  if constexpr (std::endian::native != std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

}  // namespace

// Eight bytes per multiply, so a snapshot of tens of MB checks in milliseconds.
uint64_t SnapshotChecksum(std::string_view b) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ b.size();
  size_t i = 0;
  auto mix = [&](uint64_t w) {
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  };
  for (; i + 8 <= b.size(); i += 8) mix(LoadLe64(b.data() + i));
  uint64_t tail = 0;
  for (size_t k = 0; i + k < b.size(); ++k) tail |= uint64_t{static_cast<uint8_t>(b[i + k])} << (8 * k);
  mix(tail);
  return h;
}

namespace {

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Each part names itself in its errors: "snapshot: jobs: truncated at byte 4711".
Status Damaged(const char* part, const Reader& r) {
  return InvalidArgument(std::string("snapshot: ") + part + ": " + r.error());
}

}  // namespace

// Friend of ClusterState, QuotaTree and AccessTable: writes their primary state in the order
// the header describes and reads it back.
class SnapshotCodec {
 public:
  static void Encode(const ClusterState& s, Writer& w);
  // REQUIRES: `s` is fresh. Leaves `s` half-built on error (the caller discards it).
  static Status Restore(Reader& r, ClusterState& s);

 private:
  static Status Names(Reader& r, ClusterState& s);
  static Status Nodes(Reader& r, ClusterState& s);
  static Status Tenants(Reader& r, ClusterState& s);
  static Status TokensAndAudit(Reader& r, ClusterState& s);
  static Status Jobs(Reader& r, ClusterState& s);
  static Status MpsAndReservation(Reader& r, ClusterState& s);
  static Status Billing(Reader& r, ClusterState& s);
  static Status TaskReports(Reader& r, ClusterState& s);
  static Status Floors(Reader& r, ClusterState& s);
  static Status Reservations(Reader& r, ClusterState& s);
  static Status SshKeys(Reader& r, ClusterState& s);
  static Status Interference(Reader& r, ClusterState& s);
  static Status Services(Reader& r, ClusterState& s);
  static Status Templates(Reader& r, ClusterState& s);
};

void SnapshotCodec::Encode(const ClusterState& s, Writer& w) {
  const ResourceNames& names = s.names_;
  w.Varint(names.size());
  for (int i = 0; i < names.size(); ++i) w(names.Name(static_cast<ResourceId>(i)));

  const Fleet& fleet = s.fleet_;
  w.Varint(fleet.size());
  for (const Node& n : fleet.nodes()) {
    w(fleet.SpecOf(n.id, names));
    w(n.condition);
    w(static_cast<bool>(s.agent_managed(n.id)));
    // Holds are rebuilt from the jobs' placements; a MIG GPU's layout and its re-layout times
    // are state of their own.
    if (n.pool.sharing != Sharing::kMig) continue;
    for (const GpuShareState& g : fleet.shares(n.id)) {
      w(g.Layout());
      w(g.ready_ms);
      w(g.layout_ms);
      w(g.node_layout);  // format 7
    }
  }

  w.Varint(s.tenants_.size());
  for (const Tenant& t : s.tenants_.tenants()) w(t);

  w.Varint(s.access_.tokens().size());
  for (const auto& [hash, record] : s.access_.tokens()) w(record);
  w(s.audit_);

  std::vector<std::string> shapes(s.shape_ids_.size());
  for (const auto& [shape, id] : s.shape_ids_) shapes[id] = shape;
  w(shapes);
  w.Varint(s.jobs_.size());
  for (const Job& j : s.jobs_) w(j);

  w.Varint(s.mps_shapes_.size());
  for (const auto& [shape, tasks] : s.mps_shapes_) {
    w(std::get<0>(shape)); w(std::get<1>(shape)); w(std::get<2>(shape)); w(std::get<3>(shape)); w(tasks);
  }
  w(s.reservation_.has_value());
  if (s.reservation_) w(*s.reservation_);

  // Format 3: budgets, warnings given, the ledger.
  const BillingState& b = s.billing_;
  w.Varint(b.budgets_.size());
  for (const auto& [t, budget] : b.budgets_) {
    w(t); w(budget.spend_micros); w(budget.gpu_hours_milli);
  }
  w(b.warnings_);
  w(b.ledger_);
  w(b.closed_period_);

  // Format 4: the agents' task reports.
  w(s.task_reports_);

  // Format 5: the floors' history.
  w(b.floor_changes_);

  // Format 8: reservations of capacity (the book and the names index are rebuilt from them).
  w(s.reservations_);

  // Format 9: registered SSH keys.
  w(s.ssh_keys_);

  // Format 11: the noisy-neighbour responses in force.
  w(s.interference_);

  // Format 14: the hardened jobs' own task groups.
  std::vector<codec::HardenedJob> hardened;
  for (const Job& j : s.jobs_) {
    if (!j.own_groups.empty()) hardened.push_back({j.id, j.own_groups});
  }
  w(hardened);
  // Format 16: inference services (the job → service index is rebuilt from them).
  w(s.services_);

  // Format 17: job templates, by (tenant, name).
  w.Varint(s.templates_.size());
  for (const auto& [key, t] : s.templates_) w(t);
}

Status SnapshotCodec::Services(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 16) return Status::Ok();  // formats 2 to 15: no services yet
  r(s.services_);
  if (!r.ok()) return Damaged("services", r);
  for (size_t i = 0; i < s.services_.size(); ++i) {
    const Service& v = s.services_[i];
    bool ok = v.id.value() == i && v.spec.tenant.valid() && v.spec.tenant.value() < s.tenants_.size() &&
              v.spec.spread <= Spread::kZone && v.revision >= 1 && static_cast<size_t>(v.revision) <= v.templates.size();
    for (const ServiceReplica& x : v.replicas) ok &= x.job.valid() && x.job.value() < s.jobs_.size();
    if (!ok) return InvalidArgument("snapshot: service " + std::to_string(i) + " ('" + v.spec.name + "') has an id, tenant, "
                                    "spread, revision or replica job out of range");
  }
  return Status::Ok();
}

Status SnapshotCodec::Templates(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 17) return Status::Ok();  // formats 2 to 16: no templates yet
  uint64_t n = r.Count();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    JobTemplate t;
    r(t);
    if (!r.ok()) break;
    if (Status st = s.CheckTemplate(t); !st.ok()) return InvalidArgument("snapshot: " + st.message());
    auto key = std::make_pair(t.tenant.value(), t.name);
    if (!s.templates_.empty() && !(s.templates_.rbegin()->first < key)) {
      return InvalidArgument("snapshot: template '" + t.name + "' out of order or repeated");
    }
    s.templates_.emplace_hint(s.templates_.end(), std::move(key), std::move(t));
  }
  return r.ok() ? Status::Ok() : Damaged("templates", r);
}

Status SnapshotCodec::Interference(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 11) return Status::Ok();  // formats 2 to 10: none in force
  r(s.interference_);
  if (!r.ok()) return Damaged("interference responses", r);
  if (r.snapshot_format >= 14) {
    // Read before the responses are checked: a hardening names its victim's own groups.
    std::vector<codec::HardenedJob> hardened;
    r(hardened);
    if (!r.ok()) return Damaged("hardened jobs", r);
    for (size_t i = 0; i < hardened.size(); ++i) {
      codec::HardenedJob& h = hardened[i];
      if (!h.job.valid() || h.job.value() >= s.jobs_.size() || (i > 0 && hardened[i - 1].job.value() >= h.job.value())) {
        return InvalidArgument("snapshot: hardened job " + std::to_string(h.job.value()) + ": unknown, out of order or repeated");
      }
      Job& j = s.jobs_[h.job.value()];
      bool ok = h.own_groups.size() == j.spec.groups.size();
      for (const TaskGroup& g : h.own_groups) ok &= g.share <= ShareKind::kTimeslice;
      if (!ok) return InvalidArgument("snapshot: job '" + j.spec.name + "': its own task groups do not match its groups");
      j.own_groups = std::move(h.own_groups);
    }
  }
  for (size_t i = 0; i < s.interference_.size(); ++i) {
    const InterferenceResponse& x = s.interference_[i];
    if (Status st = s.CheckInterference(x); !st.ok()) return InvalidArgument("snapshot: " + st.message());
    if (i > 0) {
      const InterferenceResponse& p = s.interference_[i - 1];
      if (std::make_tuple(p.node.value(), p.gpu, p.neighbour.value(), p.neighbour_task, static_cast<int>(p.action)) >=
          std::make_tuple(x.node.value(), x.gpu, x.neighbour.value(), x.neighbour_task, static_cast<int>(x.action))) {
        return InvalidArgument("snapshot: interference responses out of order or repeated at " + std::to_string(i));
      }
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::TaskReports(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 4) return Status::Ok();  // formats 2 and 3: none recorded yet
  r(s.task_reports_);
  if (!r.ok()) return Damaged("task reports", r);
  for (const ClusterState::TaskRunReport& t : s.task_reports_) {
    if (!t.job.valid() || t.job.value() >= s.jobs_.size() || !t.node.valid() || t.node.value() >= s.fleet_.size()) {
      return InvalidArgument("snapshot: a task report names job " + std::to_string(t.job.value()) + " or node " +
                             std::to_string(t.node.value()) + ", out of range");
    }
    if (!s.task_reported_.insert({t.job.value(), t.run, t.task}).second) {
      return InvalidArgument("snapshot: task " + std::to_string(t.task) + " of job " + std::to_string(t.job.value()) +
                             " run " + std::to_string(t.run) + " is reported twice");
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::Reservations(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 8) return Status::Ok();  // formats 2 to 7: none booked yet
  r(s.reservations_);
  if (!r.ok()) return Damaged("reservations", r);
  for (const CapacityReservation& x : s.reservations_) {
    if (Status st = x.spec.Check(); !st.ok()) return InvalidArgument("snapshot: " + st.message());
    if (x.spec.tenant.value() >= s.tenants_.size() || x.state > ReservationState::kCancelled) {
      return InvalidArgument("snapshot: reservation '" + x.spec.name + "' names tenant " +
                             std::to_string(x.spec.tenant.value()) + " or state " +
                             std::to_string(static_cast<int>(x.state)) + ", out of range");
    }
    for (size_t i = 0; i < x.holds.size(); ++i) {
      if (Status st = s.CheckHolds(x.spec, i, x.holds[i], x.CountOf(i)); !st.ok()) return InvalidArgument("snapshot: " + st.message());
    }
    for (const AcceptanceRecord& a : x.acceptance) {
      if (a.window < 0 || static_cast<size_t>(a.window) >= x.spec.windows.size() || !a.node.valid() ||
          a.node.value() >= s.fleet_.size() || a.state > AcceptanceState::kReplaced ||
          (a.replaced_by.valid() && a.replaced_by.value() >= s.fleet_.size())) {
        return InvalidArgument("snapshot: reservation '" + x.spec.name + "' has an acceptance record out of range");
      }
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::SshKeys(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 9) return Status::Ok();  // formats 2 to 8: no keys yet
  r(s.ssh_keys_);
  if (!r.ok()) return Damaged("ssh keys", r);
  for (size_t i = 0; i < s.ssh_keys_.size(); ++i) {
    const SshKeyRecord& k = s.ssh_keys_[i];
    if (k.id.value() != i || k.tenant.value() >= s.tenants_.size() || k.line.empty()) {
      return InvalidArgument("snapshot: ssh key " + std::to_string(i) + " has id " + std::to_string(k.id.value()) +
                             ", tenant " + std::to_string(k.tenant.value()) + " or an empty line, out of range");
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::Floors(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 5) return Status::Ok();  // formats 2 to 4: no history kept yet
  std::vector<FloorChange>& changes = s.billing_.floor_changes_;
  r(changes);
  if (!r.ok()) return Damaged("floor changes", r);
  for (size_t i = 0; i < changes.size(); ++i) {
    const FloorChange& c = changes[i];
    if (!c.tenant.valid() || c.tenant.value() >= s.tenants_.size() || c.resource >= s.names_.size()) {
      return InvalidArgument("snapshot: floor change " + std::to_string(i) + " names tenant " +
                             std::to_string(c.tenant.value()) + " or resource " + std::to_string(c.resource) +
                             ", out of range");
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::Billing(Reader& r, ClusterState& s) {
  if (r.snapshot_format < 3) return Status::Ok();  // format 2: no budgets, no ledger yet
  BillingState& b = s.billing_;
  uint64_t n = r.Count();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    TenantId t;
    Budget budget;
    r(t); r(budget.spend_micros); r(budget.gpu_hours_milli);
    if (r.ok() && (!t.valid() || t.value() >= s.tenants_.size())) return InvalidArgument("snapshot: a budget names tenant " + std::to_string(t.value()) + ", out of range");
    b.budgets_[t] = budget;
  }
  r(b.warnings_);
  r(b.ledger_);
  r(b.closed_period_);
  if (!r.ok()) return Damaged("billing", r);
  for (const BudgetWarning& w : b.warnings_) {
    if (!w.tenant.valid() || w.tenant.value() >= s.tenants_.size()) return InvalidArgument("snapshot: a budget warning names a tenant out of range");
    b.warned_.insert({w.tenant.value(), w.period, w.what, w.percent});
  }
  return Status::Ok();
}

Status SnapshotCodec::Names(Reader& r, ClusterState& s) {
  uint64_t n = r.Count();
  std::vector<std::string> names(n);
  for (std::string& name : names) r(name);
  if (!r.ok()) return Damaged("resource names", r);
  if (n < 2 || n > kMaxResources || names[0] != "cpu" || names[1] != "memory") {
    return InvalidArgument("snapshot: resource names: expected cpu, memory and at most " +
                           std::to_string(kMaxResources - 2) + " more; have " + std::to_string(n));
  }
  for (size_t i = 2; i < n; ++i) {
    if (static_cast<size_t>(s.names_.Intern(names[i])) != i) return InvalidArgument("snapshot: resource names: '" + names[i] + "' twice");
  }
  return Status::Ok();
}

Status SnapshotCodec::Nodes(Reader& r, ClusterState& s) {
  const int names = s.names_.size();
  uint64_t n = r.Count();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    NodeSpec spec;
    NodeCondition condition{};
    bool managed = false;
    r(spec);
    r(condition);
    if (r.snapshot_format >= 3) r(managed);  // format 2: no agents yet
    if (!r.ok()) break;
    if (spec.sharing > Sharing::kTimeslice) return InvalidArgument("snapshot: node '" + spec.name + "': sharing out of range");
    auto id = s.fleet_.AddNode(spec, s.names_);
    if (!id) return InvalidArgument("snapshot: node " + std::to_string(i) + ": " + id.error().message());
    if (s.names_.size() != names || condition > NodeCondition::kRepair) {
      return InvalidArgument("snapshot: node '" + spec.name + "': condition or GPU model out of range");
    }
    if (condition != NodeCondition::kReady) s.fleet_.SetCondition(*id, condition);
    if (managed) {
      s.agent_managed_.resize(s.fleet_.size());
      s.agent_managed_[id->value()] = 1;
      s.fleet_.SetAgentManaged(*id);
    }
    if (spec.sharing != Sharing::kMig) continue;
    for (int g = 0; g < spec.gpu_count && r.ok(); ++g) {
      MigLayout layout;
      int64_t ready_ms = 0, layout_ms = 0;
      r(layout);
      r(ready_ms);
      r(layout_ms);
      if (!r.ok()) break;
      // Nothing is held yet, so this only validates the layout and sets both times.
      if (Status st = s.fleet_.Relayout(*id, g, layout, layout_ms, ready_ms); !st.ok()) {
        return InvalidArgument("snapshot: " + st.message());
      }
      MigLayout held;  // formats 2 to 6: none reported yet
      if (r.snapshot_format >= 7) r(held);
      if (!r.ok()) break;
      if (!held.empty()) {
        if (Status st = s.fleet_.SetNodeMigLayout(*id, g, held); !st.ok()) return InvalidArgument("snapshot: " + st.message());
      }
    }
  }
  return r.ok() ? Status::Ok() : Damaged("nodes", r);
}

Status SnapshotCodec::Tenants(Reader& r, ClusterState& s) {
  uint64_t n = r.Count();
  std::vector<Tenant> tenants(n);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    tenants[i].id = TenantId(static_cast<uint32_t>(i));
    r(tenants[i]);
  }
  if (!r.ok()) return Damaged("tenants", r);
  if (Status st = s.tenants_.Restore(std::move(tenants)); !st.ok()) return InvalidArgument("snapshot: " + st.message());
  return Status::Ok();
}

Status SnapshotCodec::TokensAndAudit(Reader& r, ClusterState& s) {
  uint64_t n = r.Count();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    TokenRecord t;
    r(t);
    if (!r.ok()) break;
    // Issue() would refuse a scope deleted since; the saved table holds such tokens, revoked.
    if (!t.principal.scope.valid() || t.principal.scope.value() >= s.tenants_.size()) {
      return InvalidArgument("snapshot: token of '" + t.principal.name + "': scope out of range");
    }
    if (!s.access_.tokens_.emplace(t.hash, t).second) return InvalidArgument("snapshot: a token hash appears twice");
  }
  if (!r.ok()) return Damaged("tokens", r);
  r(s.audit_);
  if (!r.ok()) return Damaged("audit records", r);
  for (size_t i = 0; i < s.audit_.size(); ++i) {
    if (s.audit_[i].prev_hash != (i == 0 ? std::string() : s.audit_[i - 1].hash)) {
      return InvalidArgument("snapshot: audit record " + std::to_string(i) + " does not follow the one before");
    }
  }
  return Status::Ok();
}

Status SnapshotCodec::Jobs(Reader& r, ClusterState& s) {
  std::vector<std::string> shapes;
  r(shapes);
  if (!r.ok()) return Damaged("job shapes", r);
  for (uint32_t i = 0; i < shapes.size(); ++i) {
    if (!s.shape_ids_.emplace(shapes[i], i).second) return InvalidArgument("snapshot: job shape " + std::to_string(i) + " twice");
  }
  uint64_t n = r.Count();
  // Room to grow, as a replayed vector has: at capacity, the first job submitted after a
  // restore would copy every job while both copies are held (+100 MB at 333,000 jobs). Pages
  // not yet written take no memory.
  s.jobs_.reserve(std::max<uint64_t>(2 * n, 1024));
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    Job& j = s.jobs_.emplace_back();
    j.id = JobId(static_cast<uint32_t>(i));
    r(j);
    if (!r.ok()) break;
    bool ok = j.spec.tenant.valid() && j.spec.tenant.value() < s.tenants_.size() && j.shape < shapes.size() &&
              j.spec.gpu_resource < s.names_.size() && j.state <= JobState::kFailed &&
              j.admission <= AdmissionClass::kReserved && j.preempt_kind <= kLastPreemptKind &&
              j.spec.topology <= Topology::kZone && static_cast<int>(j.spec.kind) < kJobKinds;
    for (const TaskGroup& g : j.spec.groups) ok &= g.share <= ShareKind::kTimeslice;
    if (!ok) return InvalidArgument("snapshot: job '" + j.spec.name + "': a tenant, shape, resource, state or kind out of range");
    if (Status r = j.spec.CheckRanges(); !r.ok()) return InvalidArgument("snapshot: " + r.message());
    j.demand = j.spec.TotalDemand();
    j.has_shares = j.spec.HasShares();
    j.best_effort = j.spec.BestEffort();
  }
  return r.ok() ? Status::Ok() : Damaged("jobs", r);
}

Status SnapshotCodec::MpsAndReservation(Reader& r, ClusterState& s) {
  uint64_t n = r.Count();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    ClusterState::MpsShape shape;
    int64_t tasks = 0;
    r(std::get<0>(shape)); r(std::get<1>(shape)); r(std::get<2>(shape)); r(std::get<3>(shape)); r(tasks);
    s.mps_shapes_.emplace(shape, tasks);
  }
  if (!r.ok()) return Damaged("MPS shapes", r);
  bool reserved = false;
  r(reserved);
  if (reserved) {
    r(s.reservation_.emplace(ClusterState::Reservation{}));  // not emplace(): clang 14 finds no default constructor
    if (r.ok() && (!s.reservation_->job.valid() || s.reservation_->job.value() >= s.jobs_.size())) {
      return InvalidArgument("snapshot: the reservation names job " + std::to_string(s.reservation_->job.value()) +
                             "; there are " + std::to_string(s.jobs_.size()));
    }
  }
  return r.ok() ? Status::Ok() : Damaged("reservation", r);
}

Status SnapshotCodec::Restore(Reader& r, ClusterState& s) {
  for (auto part : {&SnapshotCodec::Names, &SnapshotCodec::Nodes, &SnapshotCodec::Tenants,
                    &SnapshotCodec::TokensAndAudit, &SnapshotCodec::Jobs, &SnapshotCodec::MpsAndReservation,
                    &SnapshotCodec::Billing, &SnapshotCodec::TaskReports, &SnapshotCodec::Floors,
                    &SnapshotCodec::Reservations, &SnapshotCodec::SshKeys, &SnapshotCodec::Interference,
                    &SnapshotCodec::Services, &SnapshotCodec::Templates}) {
    if (Status st = part(r, s); !st.ok()) return st;
  }
  if (!r.done()) return InvalidArgument("snapshot: bytes left over after the last section at byte " + std::to_string(r.pos()));
  if (Status st = s.RebuildIndexes(); !st.ok()) return InvalidArgument("snapshot: " + st.message());
  if (Status st = s.VerifyInvariants(); !st.ok()) {
    return InvalidArgument("snapshot: the restored state fails its check: " + st.message());
  }
  return Status::Ok();
}

std::string EncodeSnapshot(const ClusterState& state) {
  Writer w;
  w.out.assign(kHeaderBytes, '\0');
  SnapshotCodec::Encode(state, w);
  std::string_view body = std::string_view(w.out).substr(kHeaderBytes);
  w.out[0] = static_cast<char>(kSnapshotFormat);
  StoreLe64(&w.out[1], body.size());
  StoreLe64(&w.out[9], SnapshotChecksum(body));
  return std::move(w.out);
}

Status RestoreSnapshot(std::string_view bytes, ClusterState& into) {
  if (!into.jobs().empty() || into.fleet().size() != 0 || into.tenants().size() != 1 || !into.audit().empty() ||
      !into.access().tokens().empty() || into.resource_names().size() != 2) {
    return FailedPrecondition("snapshot: restores into a fresh, empty state; this one has " +
                              std::to_string(into.fleet().size()) + " nodes and " + std::to_string(into.jobs().size()) +
                              " jobs");
  }
  if (bytes.empty()) return InvalidArgument("snapshot: truncated: no bytes");
  uint8_t format = static_cast<uint8_t>(bytes[0]);
  // Formats 2 (before billing), 3 (before task reports), 4 (before floor changes) and 5 (before
  // job environments) still restore.
  if (format < 2 || format > kSnapshotFormat) {
    return InvalidArgument("snapshot: format " + std::to_string(format) + " is not known; expected 2 to " +
                           std::to_string(kSnapshotFormat));
  }
  if (bytes.size() < kHeaderBytes) {
    return InvalidArgument("snapshot: truncated: " + std::to_string(bytes.size()) + " bytes, less than the " +
                           std::to_string(kHeaderBytes) + "-byte header");
  }
  uint64_t length = LoadLe64(bytes.data() + 1);
  std::string_view body = bytes.substr(kHeaderBytes);
  if (body.size() < length) {
    return InvalidArgument("snapshot: truncated: the body is " + std::to_string(body.size()) + " bytes; the header says " +
                           std::to_string(length));
  }
  if (body.size() > length) {
    return InvalidArgument("snapshot: " + std::to_string(body.size() - length) + " trailing byte(s) after the " +
                           std::to_string(length) + "-byte body");
  }
  uint64_t stored = LoadLe64(bytes.data() + 9), computed = SnapshotChecksum(body);
  if (stored != computed) {
    return InvalidArgument("snapshot: checksum " + Hex(computed) + " does not match the stored " + Hex(stored) +
                           ": the bytes are damaged");
  }
  ClusterState restored;
  // The job specs inside are in the event codec's encoding of the snapshot's time: event format
  // 3 up to snapshot format 5 (no environment), 5 up to 8 (no reservation), 6 at 9 (no labels nor
  // requirements), 7 at 10 (no interference responses), 8 at 11 (no business hours), 9 at 12 (no
  // sizing), 10 at 13 (no moves nor hardenings), 11 at 14 (no arrays nor dependencies), 12 at 15
  // (no services), 13 at 16 (no templates), the current one since.
  Reader r(body, format < 6    ? uint8_t{3}
                 : format < 9  ? uint8_t{5}
                 : format < 10 ? uint8_t{6}
                 : format < 11 ? uint8_t{7}
                 : format < 12 ? uint8_t{8}
                 : format < 13 ? uint8_t{9}
                 : format < 14 ? uint8_t{10}
                 : format < 15 ? uint8_t{11}
                 : format < 16 ? uint8_t{12}
                 : format < 17 ? uint8_t{13}
                               : kEventFormat);
  r.snapshot_format = format;
  if (Status s = SnapshotCodec::Restore(r, restored); !s.ok()) return s;
  into = std::move(restored);
  return Status::Ok();
}

}  // namespace allot
