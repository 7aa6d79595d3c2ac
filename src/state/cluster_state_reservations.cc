// ClusterState::Apply for reservations (state/reservation.h): booked, cancelled, a window's end
// moved. The holds arrive planned (ReservationBook::Find at the API, or the simulator); the book
// takes them only if no GPU would be booked twice, so a replay rebuilds the same book.
#include <algorithm>
#include <bit>
#include <set>

#include "state/cluster_state.h"

namespace allot {
namespace {

// Whole GPUs a window holds.
int64_t GpusOf(const std::vector<NodeHold>& holds) {
  int64_t n = 0;
  for (const NodeHold& h : holds) n += h.gpus;
  return n;
}

// The booking cap: at no window may the booking tenant, or any tenant above it, have more GPUs of
// the model booked in its subtree than its guarantee plus its max_reserved of the model, nor more
// than its max (the ceiling of what it could ever hold); with no max_reserved set, its max alone.
// Each other reservation counts once per window it overlaps at its largest, so the sum bounds
// what is booked at any one instant. `gpus[i]` is what window i asks; `ignore` is the
// reservation being changed.
Status CheckBookingCap(const ClusterState& st, const ReservationSpec& spec, const std::vector<Window>& windows,
                       const std::vector<int64_t>& gpus, ReservationId ignore) {
  const QuotaTree& tree = st.tenants();
  const std::string model = st.resource_names().Name(spec.gpu_resource).substr(4);
  for (TenantId t = spec.tenant; t.valid() && t != tree.root(); t = tree.tenant(t).parent) {
    const Tenant& tt = tree.tenant(t);
    const ResourceId res = spec.gpu_resource;
    int64_t limit = tt.max[res];
    std::string why = "its max of ";
    if (tt.max_reserved[res] < kUnlimited) {
      int64_t guarantee = tt.has_guarantee(res) ? tt.guarantee[res] : 0;
      if (guarantee + tt.max_reserved[res] < limit) {
        limit = guarantee + tt.max_reserved[res];
        why = "its guarantee (" + std::to_string(guarantee / kGpuUnit) + ") plus max_reserved (" +
              std::to_string(tt.max_reserved[res] / kGpuUnit) + "): ";
      }
    }
    if (limit >= kUnlimited) continue;
    const int64_t cap = limit / kGpuUnit;
    for (size_t i = 0; i < windows.size(); ++i) {
      int64_t booked = 0;
      for (const CapacityReservation& r : st.reservations()) {
        if (r.id == ignore || r.state != ReservationState::kConfirmed || r.spec.gpu_resource != spec.gpu_resource ||
            !InSubtree(tree, r.spec.tenant, t)) {
          continue;
        }
        int64_t most = 0;
        for (size_t j = 0; j < r.spec.windows.size(); ++j) {
          if (r.spec.windows[j].Overlaps(windows[i])) most = std::max(most, GpusOf(r.holds[j]));
        }
        booked += most;
      }
      if (booked + gpus[i] > cap) {
        return FailedPrecondition("reservation '" + spec.name + "' windows[" + std::to_string(i) + "]: tenant '" +
                                  tree.tenant(t).path + "' may have at most " + why + std::to_string(cap) +
                                  " GPUs of " + model + " booked at once; " + std::to_string(booked) +
                                  " are booked then and " + std::to_string(gpus[i]) + " asked");
      }
    }
  }
  return Status::Ok();
}

// Window `w` of `r` holds `holds` instead: its booking is taken off and booked again through the
// book's own check. Refused, the old holds are booked back (they were booked a moment ago, so
// they fit) and nothing changes.
Status Rebook(ReservationBook& book, const Fleet& fleet, CapacityReservation& r, size_t w, std::vector<NodeHold> holds) {
  const BookingId b = r.bookings[w];
  book.Cancel(b);
  if (Status s = book.Book(fleet, b, r.spec.windows[w], holds); !s.ok()) {
    Status back = book.Book(fleet, b, r.spec.windows[w], r.holds[w]);
    ALLOT_CHECK(back.ok());
    return Status(s.code(), "reservation '" + r.spec.name + "' windows[" + std::to_string(w) + "]: " + s.message());
  }
  r.holds[w] = std::move(holds);
  return Status::Ok();
}

}  // namespace

ReservationId ClusterState::FindReservation(TenantId tenant, std::string_view name) const {
  auto it = reservation_by_name_.find({tenant.value(), std::string(name)});
  return it == reservation_by_name_.end() ? ReservationId() : it->second;
}

int32_t ClusterState::GpusInReservationOn(ReservationId r, NodeId node) const {
  const CapacityReservation& x = reservations_[r.value()];
  int32_t gpus = 0;
  for (JobId id : JobsOn(node)) {
    const Job& j = jobs_[id.value()];
    if (!x.Holds(j)) continue;
    for (const TaskPlacement& p : j.placement) {
      if (p.node == node) gpus += std::popcount(p.gpu_mask);
    }
  }
  return gpus;
}

int64_t ClusterState::LentGpus(ReservationId r, size_t window) const {
  int64_t lent = 0;
  for (const NodeHold& h : reservations_[r.value()].holds[window]) {
    const Node& n = fleet_.node(h.node);
    int64_t others = n.gpu_count - n.free.gpus() - GpusInReservationOn(r, h.node);
    lent += std::clamp<int64_t>(others - (n.gpu_count - h.gpus), 0, h.gpus);
  }
  return lent;
}

std::string ClusterState::ReservationMisfit(const JobSpec& spec) const {
  ReservationId id = FindReservation(spec.tenant, spec.reservation);
  const std::string& path = tenants_.tenant(spec.tenant).path;
  if (!id.valid()) {
    return "reservation: '" + spec.reservation + "' is not a confirmed reservation of tenant '" + path +
           "'; expected the name of one (allot reservations)";
  }
  const CapacityReservation& r = reservations_[id.value()];
  const std::string model = names_.Name(r.spec.gpu_resource).substr(4);
  for (const TaskGroup& g : spec.groups) {
    if (g.shared() || g.gpu == 0 || spec.gpu_resource != r.spec.gpu_resource) {
      return "reservation: '" + spec.reservation + "' holds whole GPUs of " + model +
             "; expected every task to ask whole GPUs of " + model;
    }
  }
  int64_t held = r.holds.empty() ? 0 : GpusOf(r.holds.back());  // the last window: after any shrink
  int64_t asked = spec.TotalDemand().gpu / kGpuUnit;
  if (asked > held) {
    return "reservation: '" + spec.reservation + "' holds " + std::to_string(held) + " GPUs of " + model + "; the job asks " +
           std::to_string(asked) + ", expected at most " + std::to_string(held);
  }
  return "";
}

CapacityAsk ClusterState::AskOf(const ReservationSpec& spec) const {
  CapacityAsk ask = spec.Ask();
  ask.confined_only = spec.tenant.valid() && spec.tenant.value() < tenants_.size() && Untrusted(spec.tenant);
  return ask;
}

Status ClusterState::CheckHolds(const ReservationSpec& spec, size_t window, const std::vector<NodeHold>& holds,
                                std::optional<int32_t> count) const {
  const std::string at = "reservation '" + spec.name + "' windows[" + std::to_string(window) + "]: ";
  int64_t gpus = 0;
  std::set<uint32_t> domains;
  // The ask without its tenant's trust (not AskOf): a hold booked before its node turned
  // isolation=partial stays valid on replay and in snapshots; acceptance moves it instead.
  const CapacityAsk ask = spec.Ask();
  for (const NodeHold& h : holds) {
    if (!h.node.valid() || h.node.value() >= fleet_.size()) {
      return InvalidArgument(at + "node " + std::to_string(h.node.value()) + " does not exist");
    }
    const Node& n = fleet_.node(h.node);
    if (n.gpu_resource != spec.gpu_resource) {
      return InvalidArgument(at + "node '" + n.name + "' has no GPUs of the reservation's model");
    }
    if (spec.nodes > 0 && h.gpus != n.gpu_count) {
      return InvalidArgument(at + "node '" + n.name + "' is not held whole");
    }
    if (!Satisfies(fleet_.labels(h.node), spec.require)) {
      return InvalidArgument(at + "node '" + n.name + "' (labels: " + FormatLabels(fleet_.labels(h.node)) +
                             ") does not satisfy require " + FormatRequirements(spec.require));
    }
    if (ask.within) domains.insert(fleet_.DomainOf(n, *ask.within));
    gpus += h.gpus;
  }
  const bool by_node = spec.nodes > 0;
  const int32_t expected = count.value_or(by_node ? spec.nodes : spec.gpus);
  if (by_node ? holds.size() != static_cast<size_t>(expected) : gpus != expected) {
    return InvalidArgument(at + "the holds give " + std::to_string(by_node ? static_cast<int64_t>(holds.size()) : gpus) +
                           (by_node ? " nodes" : " GPUs") + "; expected " + std::to_string(expected));
  }
  if (domains.size() > 1) {
    return InvalidArgument(at + "the holds span " + std::to_string(domains.size()) + " domains; expected one " +
                           TopologyName(spec.topology) + " domain");
  }
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ReservationBooked& e) {
  const ReservationSpec& spec = e.spec;
  if (Status s = spec.Check(); !s.ok()) return s;
  if (spec.tenant.value() >= tenants_.size() || tenants_.tenant(spec.tenant).removed ||
      spec.tenant == tenants_.root()) {
    return NotFound("reservation '" + spec.name + "': its tenant does not exist");
  }
  if (FindReservation(spec.tenant, spec.name).valid()) {
    return Conflict("reservation '" + spec.name + "' already exists in tenant '" + tenants_.tenant(spec.tenant).path + "'");
  }
  if (e.holds.size() != spec.windows.size()) {
    return InvalidArgument("reservation '" + spec.name + "': " + std::to_string(e.holds.size()) + " sets of holds for " +
                           std::to_string(spec.windows.size()) + " windows");
  }
  std::vector<int64_t> gpus;
  for (size_t i = 0; i < e.holds.size(); ++i) {
    if (Status s = CheckHolds(spec, i, e.holds[i]); !s.ok()) return s;
    gpus.push_back(GpusOf(e.holds[i]));
  }
  if (Status s = CheckBookingCap(*this, spec, spec.windows, gpus, ReservationId()); !s.ok()) return s;
  CapacityReservation r;
  r.id = ReservationId(static_cast<uint32_t>(reservations_.size()));
  r.spec = spec;
  r.holds = e.holds;
  r.booked_ms = now;
  // All windows or none: a window that collides undoes the ones booked before it.
  for (size_t i = 0; i < e.holds.size(); ++i) {
    BookingId b = BookingOf(r.id, i);
    if (Status s = book_.Book(fleet_, b, spec.windows[i], e.holds[i]); !s.ok()) {
      for (BookingId done : r.bookings) book_.Cancel(done);
      return Status(s.code(), "reservation '" + spec.name + "' windows[" + std::to_string(i) + "]: " + s.message());
    }
    r.bookings.push_back(b);
  }
  reservation_by_name_[{spec.tenant.value(), spec.name}] = r.id;
  reservations_.push_back(std::move(r));
  return Status::Ok();
}

Result<CapacityReservation*> ClusterState::MutableReservation(ReservationId id) {
  if (!id.valid() || id.value() >= reservations_.size()) {
    return Err(NotFound("reservation id " + std::to_string(id.value()) + " does not exist"));
  }
  CapacityReservation& r = reservations_[id.value()];
  if (r.state != ReservationState::kConfirmed) {
    return Err(FailedPrecondition("reservation '" + r.spec.name + "' is " + ReservationStateName(r.state)));
  }
  return &r;
}

Status ClusterState::Apply(int64_t now, const ReservationCancelled& e) {
  auto r = MutableReservation(e.id);
  if (!r) return r.error();
  for (BookingId b : (*r)->bookings) book_.Cancel(b);
  (*r)->state = ReservationState::kCancelled;
  (*r)->cancelled_ms = now;
  reservation_by_name_.erase({(*r)->spec.tenant.value(), (*r)->spec.name});
  return Status::Ok();
}

Status ClusterState::Apply(int64_t, const ReservationEndSet& e) {
  auto r = MutableReservation(e.id);
  if (!r) return r.error();
  std::vector<Window>& windows = (*r)->spec.windows;
  const std::string where = "reservation '" + (*r)->spec.name + "' windows[" + std::to_string(e.window) + "]";
  if (e.window < 0 || static_cast<size_t>(e.window) >= windows.size()) {
    return InvalidArgument(where + ": no such window; it has " + std::to_string(windows.size()));
  }
  size_t i = static_cast<size_t>(e.window);
  if (i + 1 < windows.size() && e.end_ms > windows[i + 1].start_ms) {
    return InvalidArgument(where + ": the new end is after the next window starts; expected windows apart");
  }
  if (e.end_ms > windows[i].end_ms) {
    if (Status s = CheckBookingCap(*this, (*r)->spec, {{windows[i].end_ms, e.end_ms}}, {GpusOf((*r)->holds[i])}, e.id);
        !s.ok()) {
      return s;
    }
  }
  if (Status s = book_.SetEnd(fleet_, (*r)->bookings[i], e.end_ms); !s.ok()) {
    return Status(s.code(), where + ": " + s.message());
  }
  windows[i].end_ms = e.end_ms;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ReservationShrunk& e) {
  auto r = MutableReservation(e.id);
  if (!r) return r.error();
  CapacityReservation& x = **r;
  const bool by_node = x.spec.nodes > 0;
  const int32_t count = by_node ? x.spec.nodes : x.spec.gpus;
  const char* unit = by_node ? " nodes" : " GPUs";
  const std::string where = "reservation '" + x.spec.name + "'";
  if (e.count < 1 || e.count >= count) {
    return InvalidArgument(where + ": " + std::to_string(e.count) + unit + "; expected from 1 to " +
                           std::to_string(count - 1) + " (it holds " + std::to_string(count) + "; to grow it, book another)");
  }
  const size_t first = x.spec.CurrentWindow(now);
  if (first == x.spec.windows.size()) return FailedPrecondition(where + ": every window is over");
  const bool open = x.spec.windows[first].start_ms <= now;
  if (open && x.spec.orchestrator != Orchestrator::kNone) {
    return FailedPrecondition(where + " windows[" + std::to_string(first) + "] is open and its " +
                              OrchestratorName(x.spec.orchestrator) +
                              " cluster runs on all its nodes; shrink it after this window, or cancel it");
  }
  // New holds for every window from `first`: cut from the last hold back, never what the
  // reservation's jobs hold now (they run only in the open window).
  std::vector<std::vector<NodeHold>> cut(x.holds.begin() + static_cast<std::ptrdiff_t>(first), x.holds.end());
  for (size_t k = 0; k < cut.size(); ++k) {
    std::vector<NodeHold>& holds = cut[k];
    const bool this_open = open && k == 0;
    int64_t excess = by_node ? static_cast<int64_t>(holds.size()) - e.count : GpusOf(holds) - e.count;
    int64_t in_use = 0;  // GPUs, or nodes, its jobs hold in this window
    for (size_t i = holds.size(); i-- > 0;) {
      const int32_t used = this_open ? GpusInReservationOn(x.id, holds[i].node) : 0;
      in_use += by_node ? (used > 0 ? 1 : 0) : used;
      if (excess == 0) continue;
      const int32_t take = by_node ? (used == 0 ? holds[i].gpus : 0)
                                   : static_cast<int32_t>(std::min<int64_t>(excess, holds[i].gpus - used));
      holds[i].gpus -= take;
      excess -= by_node ? (take > 0 ? 1 : 0) : take;
    }
    if (excess > 0) {
      return FailedPrecondition(where + " windows[" + std::to_string(first + k) + "]: its jobs hold " +
                                std::to_string(in_use) + unit + " there now; expected at most " +
                                std::to_string(e.count) + " (stop some of its jobs first)");
    }
    std::erase_if(holds, [](const NodeHold& h) { return h.gpus == 0; });
  }
  ReservationShrink record{static_cast<int32_t>(first), count, now, 0, 0};
  if (open) {
    record.gpus_before = static_cast<int32_t>(GpusOf(x.holds[first]));
    record.gpus_after = static_cast<int32_t>(GpusOf(cut.front()));
  }
  for (size_t k = 0; k < cut.size(); ++k) {
    // A subset of holds that were booked fits again; a failure here is a broken book.
    if (Status s = Rebook(book_, fleet_, x, first + k, std::move(cut[k])); !s.ok()) return Internal(s.message());
  }
  (by_node ? x.spec.nodes : x.spec.gpus) = e.count;
  x.shrinks.push_back(record);
  return Status::Ok();
}

// Acceptance (scheduler/acceptance.h plans these): the window must be one of the reservation's
// and the node one of its holds there.
namespace {
Result<size_t> HeldIn(const CapacityReservation& r, int32_t window, NodeId node, const Fleet& fleet) {
  const std::string where = "reservation '" + r.spec.name + "' windows[" + std::to_string(window) + "]";
  if (window < 0 || static_cast<size_t>(window) >= r.spec.windows.size()) {
    return Err(InvalidArgument(where + ": no such window; it has " + std::to_string(r.spec.windows.size())));
  }
  const std::vector<NodeHold>& holds = r.holds[static_cast<size_t>(window)];
  for (size_t i = 0; i < holds.size(); ++i) {
    if (holds[i].node == node) return i;
  }
  const std::string name = node.valid() && node.value() < fleet.size() ? fleet.node(node).name : std::to_string(node.value());
  return Err(FailedPrecondition(where + ": node '" + name + "' holds nothing there"));
}
}  // namespace

Status ClusterState::Apply(int64_t now, const ReservationNodeAccepted& e) {
  auto r = MutableReservation(e.id);
  if (!r) return r.error();
  auto held = HeldIn(**r, e.window, e.node, fleet_);
  if (!held) return held.error();
  (*r)->acceptance.push_back(AcceptanceRecord{e.window, e.node, e.passed ? AcceptanceState::kPassed : AcceptanceState::kFailed,
                                              e.why, NodeId(), now});
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ReservationHoldMoved& e) {
  auto r = MutableReservation(e.id);
  if (!r) return r.error();
  auto held = HeldIn(**r, e.window, e.from, fleet_);
  if (!held) return held.error();
  const size_t w = static_cast<size_t>(e.window);
  const std::string where = "reservation '" + (*r)->spec.name + "' windows[" + std::to_string(w) + "]";
  if (!e.to.valid() || e.to.value() >= fleet_.size()) return InvalidArgument(where + ": the new node does not exist");
  const Node& to = fleet_.node(e.to);
  std::vector<NodeHold> holds = (*r)->holds[w];
  NodeHold& moved = holds[*held];
  for (const NodeHold& h : holds) {
    if (h.node == e.to) return FailedPrecondition(where + ": node '" + to.name + "' already holds GPUs there");
  }
  if ((*r)->spec.nodes > 0 && to.gpu_count != moved.gpus) {
    return FailedPrecondition(where + ": node '" + to.name + "' has " + std::to_string(to.gpu_count) + " GPUs; expected " +
                              std::to_string(moved.gpus) + ", as the node it replaces");
  }
  moved.node = e.to;
  if (Status s = CheckHolds((*r)->spec, w, holds, (*r)->CountOf(w)); !s.ok()) return s;
  if (Status s = Rebook(book_, fleet_, **r, w, std::move(holds)); !s.ok()) return s;
  (*r)->acceptance.push_back(AcceptanceRecord{e.window, e.from, AcceptanceState::kReplaced, e.why, e.to, now});
  return Status::Ok();
}

Status ClusterState::RebuildReservations() {
  for (const CapacityReservation& r : reservations_) {
    if (r.id.value() >= reservations_.size() || &reservations_[r.id.value()] != &r) {
      return Internal("reservation '" + r.spec.name + "' is not at its id");
    }
    if (r.state != ReservationState::kConfirmed) continue;
    if (r.bookings.size() != r.spec.windows.size() || r.holds.size() != r.spec.windows.size()) {
      return Internal("reservation '" + r.spec.name + "' has windows without bookings");
    }
    if (!reservation_by_name_.emplace(std::pair{r.spec.tenant.value(), r.spec.name}, r.id).second) {
      return Internal("reservation '" + r.spec.name + "' appears twice in its tenant");
    }
    for (size_t i = 0; i < r.bookings.size(); ++i) {
      if (Status s = book_.Book(fleet_, r.bookings[i], r.spec.windows[i], r.holds[i]); !s.ok()) {
        return Internal("reservation '" + r.spec.name + "': " + s.message());
      }
    }
  }
  return Status::Ok();
}

}  // namespace allot
