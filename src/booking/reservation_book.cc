#include "booking/reservation_book.h"

#include <algorithm>
#include <deque>
#include <set>

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

void ReservationBook::BusyByNode::Seal(size_t nodes) {
  first_.assign(nodes + 1, 0);
  for (const auto& [n, b] : all_) {
    if (n < nodes) ++first_[n + 1];
  }
  for (size_t i = 0; i < nodes; ++i) first_[i + 1] += first_[i];
  entries_.resize(first_[nodes]);
  std::vector<uint32_t> fill(first_.begin(), first_.end() - 1);
  for (const auto& [n, b] : all_) {
    if (n < nodes) entries_[fill[n]++] = b;
  }
}

bool ReservationBook::Offered(const Node& n, ResourceId gpu_resource) {
  return n.gpu_resource == gpu_resource && n.gpu_count > 0 && !n.shared() &&
         (n.condition == NodeCondition::kReady || n.condition == NodeCondition::kAccepting);
}

int32_t ReservationBook::BookedOn(NodeId node, Window w, BookingId ignore, const BusyByNode* extra) const {
  // A sweep over the bookings that overlap `w`, clipped to it; an end at t frees before a start
  // at t takes (windows are half-open). The edges' buffer is reused: EarliestStart asks this of
  // every offered node for each start it tries.
  thread_local std::vector<std::pair<int64_t, int32_t>> edges;
  edges.clear();
  auto add = [&](std::span<const Entry> list) {
    for (const Entry& e : list) {
      if (e.id == ignore || !e.window.Overlaps(w)) continue;
      edges.emplace_back(std::max(e.window.start_ms, w.start_ms), e.gpus);
      edges.emplace_back(std::min(e.window.end_ms, w.end_ms), -e.gpus);
    }
  };
  if (node.value() < by_node_.size()) add(by_node_[node.value()]);
  if (extra) add(extra->On(node));
  if (edges.empty()) return 0;
  if (edges.size() == 2) return edges[0].second;
  std::sort(edges.begin(), edges.end());
  int32_t now = 0, most = 0;
  for (const auto& [t, d] : edges) {
    now += d;
    most = std::max(most, now);
  }
  return most;
}

std::vector<BookingId> ReservationBook::BookingsOn(NodeId node, Window w, const BusyByNode* extra) const {
  std::vector<BookingId> out;
  auto add = [&](std::span<const Entry> list) {
    for (const Entry& e : list) {
      if (e.window.Overlaps(w)) out.push_back(e.id);
    }
  };
  if (node.value() < by_node_.size()) add(by_node_[node.value()]);
  if (extra) add(extra->On(node));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ReservationBook::Fit ReservationBook::Find(const Fleet& fleet, const ResourceNames& names, const CapacityAsk& ask,
                                           Window w, BookingId ignore, const BusyByNode* extra) const {
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
    if (!Offered(fleet, n, ask)) continue;
    int32_t free = n.gpu_count - BookedOn(n.id, w, ignore, extra);
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
      if (!Offered(fleet, n, ask)) continue;
      for (BookingId id : BookingsOn(n.id, w, extra)) {
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
    if (!ask.require.empty()) reason += "; counting only the nodes that satisfy require " + FormatRequirements(ask.require);
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

int64_t ReservationBook::Counted(const Fleet& fleet, const Node& n, const CapacityAsk& ask, Window w,
                                 const BusyByNode* extra) const {
  if (!Offered(fleet, n, ask)) return 0;
  int32_t free = n.gpu_count - BookedOn(n.id, w, BookingId(), extra);
  if (free <= 0 || (ask.nodes > 0 && free < n.gpu_count)) return 0;
  return ask.nodes > 0 ? 1 : free;
}

bool ReservationBook::Fits(const Fleet& fleet, const CapacityAsk& ask, Window w, const BusyByNode* extra) const {
  const int64_t need = ask.nodes > 0 ? ask.nodes : ask.gpus;
  int64_t total = 0;
  for (const Node& n : fleet.nodes()) {
    if ((total += Counted(fleet, n, ask, w, extra)) >= need) return true;
  }
  return false;
}

namespace {

// An upper bound on what a group of nodes has free, per time bucket, from their bookings: per
// group g and bucket k, the GPUs busy at the bucket's start and those freed within it, so no
// instant of it has more free than
//   most_free = capacity[g] - busy at its start + freed in it;
// and, for whole nodes, how many may be wholly free at some instant of it (a node is not before
// the latest end of what holds it at the start). A window starting in bucket b lies within
// buckets b … b + ⌊duration / width⌋ - 1 (at least b), so the least bound over those is what the
// group could hold for all of it.
class FreeBound {
 public:
  FreeBound(size_t groups, int64_t from, int64_t span_end, int64_t buckets)
      : groups_(groups), from_(from), width_(std::max<int64_t>(1, (span_end - from + buckets - 1) / buckets)),
        nb_(static_cast<size_t>((span_end - from) / width_ + 1)), busy_(groups * (nb_ + 1), 0),
        freed_(groups * nb_, 0), nodes_(groups * (nb_ + 1), 0), capacity_(groups, 0) {}
  size_t Bucket(int64_t t) const { return static_cast<size_t>((t - from_) / width_); }
  size_t buckets() const { return nb_; }
  void AddNode(size_t g, int32_t gpus, int64_t held_until, int64_t span_end) {
    capacity_[g] += gpus;
    if (held_until < span_end) ++nodes_[g * (nb_ + 1) + Bucket(held_until)];
  }
  // GPUs busy over [s, t) within the span, clipped by the caller.
  void AddBusy(size_t g, int64_t s, int64_t t, int32_t gpus, bool frees) {
    busy_[g * (nb_ + 1) + FirstFrom(s)] += gpus;
    busy_[g * (nb_ + 1) + FirstFrom(t)] -= gpus;
    if (frees) freed_[g * nb_ + Bucket(t)] += gpus;
  }
  // may[g * (last + 1) + b]: whether group g may hold `need` GPUs (and `nodes` whole nodes) for a
  // window of `duration_ms` starting in bucket b.
  std::vector<uint8_t> May(int64_t need, int64_t nodes, int64_t duration_ms, size_t last) const {
    std::vector<uint8_t> may(groups_ * (last + 1), 0);
    const size_t span = std::max<size_t>(1, static_cast<size_t>(duration_ms / width_));
    std::vector<int64_t> most_free(nb_);
    std::deque<size_t> window;  // bucket indexes, most_free increasing
    for (size_t g = 0; g < groups_; ++g) {
      if (capacity_[g] < need) continue;
      int64_t at = 0, wholly = 0;
      for (size_t k = 0; k < nb_; ++k) {
        at += busy_[g * (nb_ + 1) + k];
        most_free[k] = capacity_[g] - at + freed_[g * nb_ + k];
      }
      window.clear();
      size_t pushed = 0;
      for (size_t b = 0; b <= last; ++b) {
        wholly += nodes_[g * (nb_ + 1) + b];  // nondecreasing: its least over the window is at b
        while (pushed < std::min(nb_, b + span)) {
          while (!window.empty() && most_free[window.back()] >= most_free[pushed]) window.pop_back();
          window.push_back(pushed++);
        }
        while (window.front() < b) window.pop_front();
        may[g * (last + 1) + b] = most_free[window.front()] >= need && (nodes == 0 || wholly >= nodes);
      }
    }
    return may;
  }

 private:
  size_t FirstFrom(int64_t t) const { return static_cast<size_t>((t - from_ + width_ - 1) / width_); }
  size_t groups_;
  int64_t from_, width_;
  size_t nb_;
  std::vector<int32_t> busy_, freed_, nodes_;
  std::vector<int64_t> capacity_;
};

}  // namespace

std::optional<int64_t> ReservationBook::EarliestStart(const Fleet& fleet, const ResourceNames&, const CapacityAsk& ask,
                                                      int64_t from, int64_t duration_ms, int64_t horizon_ms,
                                                      const BusyByNode* extra) const {
  if (duration_ms <= 0 || from > horizon_ms) return std::nullopt;
  // Two bounds: the offered nodes together in fine buckets (which stretches of time to search),
  // and, for a topology, each domain in coarse ones (which domains to search then).
  const int64_t span_end = horizon_ms + duration_ms;
  const size_t domains = ask.within ? fleet.domains(*ask.within).size() : 0;
  FreeBound fleet_bound(1, from, span_end, 4096);
  FreeBound domain_bound(std::max<size_t>(domains, 1), from, span_end, ask.within ? 256 : 1);
  std::vector<std::pair<size_t, int64_t>> ends;  // (fine bucket, instant): the starts to try
  int64_t smallest_node = INT64_MAX;
  for (const Node& n : fleet.nodes()) {
    if (!Offered(fleet, n, ask)) continue;
    const size_t d = ask.within ? fleet.DomainOf(n, *ask.within) : 0;
    smallest_node = std::min<int64_t>(smallest_node, n.gpu_count);
    std::span<const Entry> booked = n.id.value() < by_node_.size() ? std::span<const Entry>(by_node_[n.id.value()])
                                                                     : std::span<const Entry>();
    std::span<const Entry> added = extra ? extra->On(n.id) : std::span<const Entry>();
    int64_t most = 0, held_until = from;
    for (std::span<const Entry> list : {booked, added}) {
      for (const Entry& e : list) {
        if (e.window.end_ms > from && e.window.start_ms < span_end) most += e.gpus;
        if (e.window.start_ms <= from) held_until = std::max(held_until, e.window.end_ms);
      }
    }
    fleet_bound.AddNode(0, n.gpu_count, held_until, span_end);
    if (ask.within) domain_bound.AddNode(d, n.gpu_count, held_until, span_end);
    // A node whose entries add up past its GPUs at some instant (a running job still on capacity
    // booked from then) would count less than nothing free: its entries are left out of the
    // bounds (it counts as all free), which keeps them upper ones. Its ends are still starts to
    // try. Only when its entries add up past its GPUs is the busiest instant looked for.
    const bool counted = most <= n.gpu_count || BookedOn(n.id, {from, span_end}, BookingId(), extra) <= n.gpu_count;
    for (std::span<const Entry> list : {booked, added}) {
      for (const Entry& e : list) {
        if (e.window.end_ms <= from || e.window.start_ms >= span_end) continue;
        if (counted) {
          int64_t s = std::max(e.window.start_ms, from), t = std::min(e.window.end_ms, span_end);
          fleet_bound.AddBusy(0, s, t, e.gpus, e.window.end_ms < span_end);
          if (ask.within) domain_bound.AddBusy(d, s, t, e.gpus, e.window.end_ms < span_end);
        }
        if (e.window.end_ms <= horizon_ms) ends.emplace_back(fleet_bound.Bucket(e.window.end_ms), e.window.end_ms);
      }
    }
  }
  if (smallest_node == INT64_MAX) return std::nullopt;
  const int64_t need = ask.nodes > 0 ? ask.nodes * smallest_node : ask.gpus;
  const size_t last = std::min(fleet_bound.buckets() - 1, fleet_bound.Bucket(horizon_ms));
  // Without a topology the fleet's bound must hold the whole ask; with one, only some domain's.
  const std::vector<uint8_t> may = fleet_bound.May(need, ask.within ? 0 : ask.nodes, duration_ms, last);
  const size_t coarse_last = std::min(domain_bound.buckets() - 1, domain_bound.Bucket(horizon_ms));
  const std::vector<uint8_t> domain_may =
      ask.within ? domain_bound.May(need, ask.nodes, duration_ms, coarse_last) : std::vector<uint8_t>();
  // The starts to try, grouped by bucket (a counting sort), each bucket sorted once reached.
  const size_t nb = fleet_bound.buckets();
  std::vector<size_t> first(nb + 1, 0);
  for (const auto& [b, t] : ends) ++first[b + 1];
  for (size_t k = 0; k < nb; ++k) first[k + 1] += first[k];
  std::vector<int64_t> starts(ends.size());
  {
    std::vector<size_t> fill(first.begin(), first.end() - 1);
    for (const auto& [b, t] : ends) starts[fill[b]++] = t;
  }
  std::vector<uint32_t> eligible;
  for (size_t b = 0; b <= last; ++b) {
    if (!may[b]) continue;
    std::vector<int64_t> tries(starts.begin() + static_cast<std::ptrdiff_t>(first[b]),
                               starts.begin() + static_cast<std::ptrdiff_t>(first[b + 1]));
    if (b == 0) tries.push_back(from);
    std::sort(tries.begin(), tries.end());
    tries.erase(std::unique(tries.begin(), tries.end()), tries.end());
    for (int64_t t : tries) {
      if (t > horizon_ms) break;
      if (ask.within) {
        const size_t cb = domain_bound.Bucket(t);
        eligible.clear();
        for (size_t d = 0; d < domains; ++d) {
          if (domain_may[d * (coarse_last + 1) + cb]) eligible.push_back(static_cast<uint32_t>(d));
        }
        if (eligible.empty()) continue;
        if (FitsIn(fleet, ask, {t, t + duration_ms}, extra, eligible)) return t;
      } else if (Fits(fleet, ask, {t, t + duration_ms}, extra)) {
        return t;
      }
    }
  }
  return std::nullopt;
}

bool ReservationBook::FitsIn(const Fleet& fleet, const CapacityAsk& ask, Window w, const BusyByNode* extra,
                             const std::vector<uint32_t>& domains) const {
  const int64_t need = ask.nodes > 0 ? ask.nodes : ask.gpus;
  for (uint32_t d : domains) {
    int64_t total = 0;
    for (NodeId id : fleet.domains(*ask.within)[d].nodes) {
      if ((total += Counted(fleet, fleet.node(id), ask, w, extra)) >= need) return true;
    }
  }
  return false;
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
