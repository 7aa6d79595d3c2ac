#include "booking/reservation_book.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace allot {
namespace {

const char* DomainName(DomainKind k) {
  switch (k) {
    case DomainKind::kNvlink: return "NVLink domain";
    case DomainKind::kRack: return "rack";
    case DomainKind::kZone: return "zone";
  }
  return "domain";
}

std::string ModelOf(const ResourceNames& names, ResourceId r) {
  std::string n = names.Name(r);
  return n.rfind("gpu/", 0) == 0 ? n.substr(4) : n;
}

}  // namespace

bool ReservationBook::Offered(const Node& n, ResourceId gpu_resource) {
  return n.gpu_resource == gpu_resource && n.gpu_count > 0 && !n.shared() &&
         (n.condition == NodeCondition::kReady || n.condition == NodeCondition::kAccepting);
}

int32_t ReservationBook::BookedOn(NodeId node, Window w, BookingId ignore) const {
  if (node.value() >= by_node_.size()) return 0;
  // A sweep over the bookings that overlap `w`, clipped to it; an end at t frees before a start
  // at t takes (windows are half-open).
  std::vector<std::pair<int64_t, int32_t>> edges;
  for (const Entry& e : by_node_[node.value()]) {
    if (e.id == ignore || !e.window.Overlaps(w)) continue;
    edges.emplace_back(std::max(e.window.start_ms, w.start_ms), e.gpus);
    edges.emplace_back(std::min(e.window.end_ms, w.end_ms), -e.gpus);
  }
  if (edges.size() == 2) return edges[0].second;
  std::sort(edges.begin(), edges.end());
  int32_t now = 0, most = 0;
  for (const auto& [t, d] : edges) {
    now += d;
    most = std::max(most, now);
  }
  return most;
}

std::vector<BookingId> ReservationBook::BookingsOn(NodeId node, Window w) const {
  std::vector<BookingId> out;
  if (node.value() >= by_node_.size()) return out;
  for (const Entry& e : by_node_[node.value()]) {
    if (e.window.Overlaps(w)) out.push_back(e.id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ReservationBook::Fit ReservationBook::Find(const Fleet& fleet, const ResourceNames& names, const CapacityAsk& ask,
                                           Window w, BookingId ignore) const {
  Fit fit;
  const bool by_node = ask.nodes > 0;
  const int64_t need = by_node ? ask.nodes : ask.gpus;
  if (need < 1 || w.end_ms <= w.start_ms) {
    fit.shortfall = Shortfall{"nothing to book: expected at least one GPU or node for a window of some length", {}};
    return fit;
  }
  // Per domain (one group without a topology): what each offered node has free for all of `w`.
  struct Group {
    int64_t total = 0;
    std::set<std::pair<int32_t, uint32_t>> free;  // (free GPUs, node id)
  };
  std::map<uint32_t, Group> groups;
  for (const Node& n : fleet.nodes()) {
    if (!Offered(n, ask.gpu_resource)) continue;
    int32_t free = n.gpu_count - BookedOn(n.id, w, ignore);
    if (free <= 0 || (by_node && free < n.gpu_count)) continue;
    Group& g = groups[ask.within ? fleet.DomainOf(n, *ask.within) : 0];
    g.total += by_node ? 1 : free;
    g.free.emplace(free, n.id.value());
  }
  // The domain that fits most tightly (lowest index on ties), then its nodes: the one that
  // covers what is left most tightly, else the freest (lowest id on ties), and again.
  Group* best = nullptr;
  int64_t most = 0;
  uint32_t most_at = 0;
  for (auto& [key, g] : groups) {
    if (g.total > most) most = g.total, most_at = key;
    if (g.total >= need && (best == nullptr || g.total < best->total)) best = &g;
  }
  if (best == nullptr) {
    // Only a refusal names the model and the bookings it collides with: EarliestStart calls
    // Find once per candidate start, and most of them fit or are passed over.
    const std::string model = ModelOf(names, ask.gpu_resource);
    const std::string unit = by_node ? "whole nodes" : "GPUs";
    std::set<BookingId> colliding;
    for (const Node& n : fleet.nodes()) {
      if (!Offered(n, ask.gpu_resource)) continue;
      for (BookingId id : BookingsOn(n.id, w)) {
        if (id != ignore) colliding.insert(id);
      }
    }
    std::string reason;
    if (ask.within && most > 0) {
      reason = std::string("no single ") + DomainName(*ask.within) + " has " + std::to_string(need) + " " + unit +
               " of " + model + " free for the whole window; the most is " + std::to_string(most) + " (" +
               DomainName(*ask.within) + " '" + fleet.domains(*ask.within)[most_at].name + "')";
    } else {
      reason = "only " + std::to_string(most) + " of " + std::to_string(need) + " " + unit + " of " + model +
               " are free for the whole window (ready, whole-GPU nodes less other bookings)";
    }
    fit.shortfall = Shortfall{std::move(reason), {colliding.begin(), colliding.end()}};
    return fit;
  }
  std::set<std::pair<int32_t, uint32_t>> free = std::move(best->free);
  int64_t left = need;
  while (left > 0 && !free.empty()) {
    auto it = by_node ? free.begin() : free.lower_bound({static_cast<int32_t>(std::min<int64_t>(left, INT32_MAX)), 0});
    if (it == free.end()) it = free.lower_bound({free.rbegin()->first, 0});  // the freest, lowest id
    const Node& n = fleet.node(NodeId(it->second));
    int32_t take = by_node ? n.gpu_count : static_cast<int32_t>(std::min<int64_t>(it->first, left));
    fit.holds.push_back({n.id, take});
    left -= by_node ? 1 : take;
    free.erase(it);
  }
  std::sort(fit.holds.begin(), fit.holds.end(), [](const NodeHold& a, const NodeHold& b) { return a.node < b.node; });
  return fit;
}

std::optional<int64_t> ReservationBook::EarliestStart(const Fleet& fleet, const ResourceNames& names,
                                                      const CapacityAsk& ask, int64_t from, int64_t duration_ms,
                                                      int64_t horizon_ms) const {
  if (duration_ms <= 0 || from > horizon_ms) return std::nullopt;
  std::set<int64_t> starts = {from};
  for (const Node& n : fleet.nodes()) {
    if (!Offered(n, ask.gpu_resource) || n.id.value() >= by_node_.size()) continue;
    for (const Entry& e : by_node_[n.id.value()]) {
      if (e.window.end_ms > from && e.window.end_ms <= horizon_ms) starts.insert(e.window.end_ms);
    }
  }
  for (int64_t t : starts) {
    if (Find(fleet, names, ask, {t, t + duration_ms}).ok()) return t;
  }
  return std::nullopt;
}

Status ReservationBook::CheckHolds(const Fleet& fleet, BookingId id, Window w,
                                   const std::vector<NodeHold>& holds) const {
  if (w.end_ms <= w.start_ms) {
    return InvalidArgument("window: ends at or before it starts; expected an end after the start");
  }
  if (holds.empty()) return InvalidArgument("holds: none; expected at least one node");
  std::set<NodeId> seen;
  for (const NodeHold& h : holds) {
    if (!h.node.valid() || h.node.value() >= fleet.size()) {
      return InvalidArgument("holds: node " + std::to_string(h.node.value()) + " does not exist");
    }
    const Node& n = fleet.node(h.node);
    if (!seen.insert(h.node).second) return InvalidArgument("holds: node '" + n.name + "' twice; expected each node once");
    if (n.shared() || h.gpus < 1 || h.gpus > n.gpu_count) {
      return InvalidArgument("holds: " + std::to_string(h.gpus) + " GPUs on node '" + n.name +
                             "'; expected 1 to its " + std::to_string(n.gpu_count) + " whole GPUs");
    }
    int32_t booked = BookedOn(h.node, w, id);
    if (booked + h.gpus > n.gpu_count) {
      return FailedPrecondition("node '" + n.name + "' has " + std::to_string(n.gpu_count - booked) +
                                " GPUs not booked for the whole window; " + std::to_string(h.gpus) + " asked");
    }
  }
  return Status::Ok();
}

Status ReservationBook::Book(const Fleet& fleet, BookingId id, Window w, std::vector<NodeHold> holds) {
  if (!id.valid() || bookings_.count(id)) return InvalidArgument("reservation " + std::to_string(id.value()) + " is already booked");
  if (Status s = CheckHolds(fleet, id, w, holds); !s.ok()) return s;
  if (by_node_.size() < fleet.size()) by_node_.resize(fleet.size());
  for (const NodeHold& h : holds) by_node_[h.node.value()].push_back({w, h.gpus, id});
  bookings_.emplace(id, Booking{w, std::move(holds)});
  return Status::Ok();
}

void ReservationBook::AddBusy(const Fleet& fleet, BookingId id, Window w, std::vector<NodeHold> holds) {
  if (by_node_.size() < fleet.size()) by_node_.resize(fleet.size());
  for (const NodeHold& h : holds) by_node_[h.node.value()].push_back({w, h.gpus, id});
  bookings_[id] = Booking{w, std::move(holds)};
}

Status ReservationBook::SetEnd(const Fleet& fleet, BookingId id, int64_t end_ms) {
  auto it = bookings_.find(id);
  if (it == bookings_.end()) return NotFound("reservation " + std::to_string(id.value()) + " is not booked");
  Booking& b = it->second;
  if (end_ms <= b.window.start_ms) return InvalidArgument("end: at or before the start; expected a later end");
  if (end_ms > b.window.end_ms) {
    if (Status s = CheckHolds(fleet, id, {b.window.end_ms, end_ms}, b.holds); !s.ok()) return s;
  }
  b.window.end_ms = end_ms;
  for (const NodeHold& h : b.holds) {
    for (Entry& e : by_node_[h.node.value()]) {
      if (e.id == id) e.window.end_ms = end_ms;
    }
  }
  return Status::Ok();
}

void ReservationBook::Cancel(BookingId id) {
  auto it = bookings_.find(id);
  if (it == bookings_.end()) return;
  for (const NodeHold& h : it->second.holds) {
    auto& entries = by_node_[h.node.value()];
    entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.id == id; }),
                  entries.end());
  }
  bookings_.erase(it);
}

}  // namespace allot
