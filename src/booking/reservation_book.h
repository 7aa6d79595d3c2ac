// The reservation book: which whole GPUs of which nodes are booked for which windows, and where a
// new booking fits. Pure and deterministic (no clock): the state keeps one, the scheduler, the
// API's availability and the simulator read it.
//
// A confirmed reservation holds GPUs on named nodes (Slurm's reservations do the same), so "at
// every instant of the window the fleet can place it" is checked per node: a node's GPUs minus
// the most any other booking holds there at one time in the window. Only exclusive (whole-GPU)
// nodes that are ready or being accepted are booked; cordoned, draining, down and repairing
// nodes are not offered.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "core/status.h"
#include "fleet/fleet.h"

namespace allot {

using BookingId = Id<struct BookingTag>;

// A window of time, [start_ms, end_ms).
struct Window {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  bool Overlaps(const Window& o) const { return start_ms < o.end_ms && o.start_ms < end_ms; }
  int64_t duration_ms() const { return end_ms - start_ms; }
  bool operator==(const Window&) const = default;
};

// What a booking asks for: `gpus` whole GPUs of `gpu_resource`, or (`nodes` > 0) that many whole
// nodes of it; all within one domain of `within` when set (an NVLink domain, a rack, a zone).
struct CapacityAsk {
  ResourceId gpu_resource = kCpu;
  int32_t gpus = 0;
  int32_t nodes = 0;
  std::optional<DomainKind> within;
  Requirements require;  // node labels every held node satisfies (fleet/labels.h); empty: any
  // An untrusted tenant's ask: only nodes whose agent confines tasks in every way are offered,
  // not those labelled isolation=partial (Fleet::partial_isolation).
  bool confined_only = false;
  bool operator==(const CapacityAsk&) const = default;
};

// What a booking holds on one node for its window.
struct NodeHold {
  NodeId node;
  int32_t gpus = 0;
  bool operator==(const NodeHold&) const = default;
};

// Why an ask does not fit a window: the text names the model, the numbers and the domain.
struct Shortfall {
  std::string reason;
  std::vector<BookingId> colliding;  // bookings on the ask's nodes that overlap the window
};

class ReservationBook {
 public:
  // GPUs busy on one node for a window: a booking's hold, or (in an overlay) a running job's GPUs
  // until its expected end.
  struct Busy {
    Window window;
    int32_t gpus = 0;
    BookingId id;
  };
  // By node: what a query adds to the book without copying it (GET /v1/availability adds the
  // running jobs, then the queued jobs ahead). Add entries, then Seal (a counting sort of all
  // entries so far into one array, rather than a vector per node); more may be added and sealed
  // again. Several entries may share an id.
  class BusyByNode {
   public:
    void Add(NodeId node, Busy b) { all_.push_back({node.value(), b}); }
    void Seal(size_t nodes);
    // REQUIRES: sealed. Nothing for a node past the sealed count.
    std::span<const Busy> On(NodeId node) const {
      if (node.value() + 1 >= first_.size()) return {};
      return {entries_.data() + first_[node.value()], entries_.data() + first_[node.value() + 1]};
    }

   private:
    std::vector<std::pair<uint32_t, Busy>> all_;
    std::vector<uint32_t> first_;
    std::vector<Busy> entries_;
  };

  // Where `ask` fits for the whole of `w` beside every booking (except `ignore`, for a change of
  // that booking): the holds, fewest nodes first, lowest node ids on ties; or why not.
  // `names` names the model in the reason.
  struct Fit {
    std::vector<NodeHold> holds;
    std::optional<Shortfall> shortfall;
    bool ok() const { return !shortfall.has_value(); }
  };
  Fit Find(const Fleet& fleet, const ResourceNames& names, const CapacityAsk& ask, Window w,
           BookingId ignore = BookingId(), const BusyByNode* extra = nullptr) const;

  // The earliest start ≥ `from` of a window of `duration_ms` where `ask` fits (beside `extra` too),
  // looking no later than `horizon_ms` for a start; nullopt when none does. Starts tried: `from`
  // and each instant a booking on the ask's nodes ends, in order — but only in stretches of time
  // where the GPUs free in total could hold the ask (a bound kept per time bucket), so a fleet
  // busy for weeks is passed over in one sweep rather than start by start.
  std::optional<int64_t> EarliestStart(const Fleet& fleet, const ResourceNames& names, const CapacityAsk& ask,
                                       int64_t from, int64_t duration_ms, int64_t horizon_ms,
                                       const BusyByNode* extra = nullptr) const;

  // Books `holds` for `w` under `id`. Refuses, changing nothing, a known id, an empty or
  // backwards window, a hold on a node that is not exclusive or has fewer GPUs, and any hold
  // that would take a node past its GPUs at some instant of `w` (the book never double-books).
  Status Book(const Fleet& fleet, BookingId id, Window w, std::vector<NodeHold> holds);
  // Moves booking `id`'s end to `end_ms` (later: only where its holds stay free; earlier: always,
  // above its start). Refuses, changing nothing, otherwise.
  Status SetEnd(const Fleet& fleet, BookingId id, int64_t end_ms);
  // For a what-if copy (availability): `holds` busy for `w` under `id` without the check Book
  // makes, since a running job on capacity booked later stays until reclaimed. Never on the
  // state's book.
  void AddBusy(const Fleet& fleet, BookingId id, Window w, std::vector<NodeHold> holds);
  // Drops booking `id` (nothing if unknown).
  void Cancel(BookingId id);

  // Whether `n` may be booked for an ask of `gpu_resource`: a whole-GPU node of that model, ready or
  // being accepted.
  static bool Offered(const Node& n, ResourceId gpu_resource);
  // Offered, its labels satisfy the ask's `require`, and it can confine an untrusted tenant's
  // tasks when the ask is `confined_only`.
  static bool Offered(const Fleet& fleet, const Node& n, const CapacityAsk& ask) {
    return Offered(n, ask.gpu_resource) && (ask.require.empty() || Satisfies(fleet.labels(n.id), ask.require)) &&
           !(ask.confined_only && fleet.partial_isolation().Test(n.id.value()));
  }

  // GPUs booked on `node` at the busiest instant of `w` (with `extra`), bookings other than `ignore`.
  int32_t BookedOn(NodeId node, Window w, BookingId ignore = BookingId(), const BusyByNode* extra = nullptr) const;
  // Bookings (and `extra`'s entries) holding GPUs on `node` during `w`, by id.
  std::vector<BookingId> BookingsOn(NodeId node, Window w, const BusyByNode* extra = nullptr) const;

  struct Booking {
    Window window;
    std::vector<NodeHold> holds;
    bool operator==(const Booking&) const = default;
  };
  const std::map<BookingId, Booking>& bookings() const { return bookings_; }
  const Booking* Get(BookingId id) const {
    auto it = bookings_.find(id);
    return it == bookings_.end() ? nullptr : &it->second;
  }

 private:
  using Entry = Busy;
  // What node `n` adds towards the ask for all of `w`: its free GPUs, 1 when wholly free for a
  // whole-node ask, else 0.
  int64_t Counted(const Fleet& fleet, const Node& n, const CapacityAsk& ask, Window w, const BusyByNode* extra) const;
  // Whether Find would succeed for an ask without a topology, without choosing nodes.
  bool Fits(const Fleet& fleet, const CapacityAsk& ask, Window w, const BusyByNode* extra) const;
  // The same for a topology ask, within the listed domains of its kind only.
  bool FitsIn(const Fleet& fleet, const CapacityAsk& ask, Window w, const BusyByNode* extra,
              const std::vector<uint32_t>& domains) const;
  Status CheckHolds(const Fleet& fleet, BookingId id, Window w, const std::vector<NodeHold>& holds) const;

  std::map<BookingId, Booking> bookings_;
  std::vector<std::vector<Entry>> by_node_;  // by node id, in booking order
};

}  // namespace allot
