// Reservations (issue 16): a tenant's booking of whole GPUs (or whole nodes) of one model for one
// or more windows. The state records what was confirmed and the holds each window got; the book
// (booking/reservation_book.h) keeps them conflict-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "booking/reservation_book.h"
#include "core/ids.h"
#include "core/resources.h"
#include "core/status.h"
#include "state/job.h"

namespace allot {

using ReservationId = Id<struct ReservationTag>;

// The most windows one reservation books (a recurring one is expanded at booking), and the
// furthest ahead a window may end: ten years.
inline constexpr size_t kMaxReservationWindows = 1'000;
inline constexpr int64_t kMaxReservationAheadMs = int64_t{3650} * 24 * 3600 * 1000;

// What runs on a reservation's whole nodes in its windows (issue 16, dedicated clusters): nothing
// of the tenant's own (kNone: allot jobs that name the reservation), a tenant-private Slurm the
// booked nodes' agents start (kSlurm), or the operator's provisioning hook (kHook). Only a booking
// by whole nodes may ask for one. The simulator ignores it.
enum class Orchestrator : uint8_t { kNone, kSlurm, kHook };
const char* OrchestratorName(Orchestrator o);  // "none", "slurm", "hook"
std::optional<Orchestrator> ParseOrchestrator(std::string_view name);

struct ReservationSpec {
  std::string name;             // unique among the tenant's reservations that are not cancelled
  TenantId tenant;
  ResourceId gpu_resource = kCpu;
  int32_t gpus = 0;             // whole GPUs, when booked by GPU
  int32_t nodes = 0;            // whole nodes, when booked by node (then gpus is 0)
  Topology topology = Topology::kNone;
  std::vector<Window> windows;  // one per occurrence, in time order, not overlapping
  int64_t drain_before_ms = -1;  // lead time before each window; -1: the longest grace on it
  Orchestrator orchestrator = Orchestrator::kNone;  // not kNone only with nodes (event format 6)
  Requirements require;  // node labels every held node satisfies (event format 7); empty: any
  bool operator==(const ReservationSpec&) const = default;

  CapacityAsk Ask() const;
  // The first window not ended at `now` (open, or the next), or windows.size() when all are.
  size_t CurrentWindow(int64_t now) const;
  // Names the first field out of its range or shape ("reservation 'x' windows[2]: …").
  Status Check() const;
};

enum class ReservationState : uint8_t { kConfirmed, kCancelled };
const char* ReservationStateName(ReservationState s);

// A reservation made smaller (PATCH {"gpus"} or {"nodes"}, event ReservationShrunk): from window
// `first_window` on its holds were cut from `count_before` GPUs or nodes. When that window was
// open at `at_ms`, it held `gpus_before` GPUs until then and `gpus_after` since: billed so.
struct ReservationShrink {
  int32_t first_window = 0;
  int32_t count_before = 0;
  int64_t at_ms = 0;
  int32_t gpus_before = 0;  // 0 when first_window had not opened
  int32_t gpus_after = 0;
  bool operator==(const ReservationShrink&) const = default;
};

// Acceptance of a booked node before its window opens (issue 16; scheduler/acceptance.h): the
// node's agent runs its checks; a node that fails them (or is lost, cordoned or in repair, or
// gives no answer by the start) is replaced from free capacity, or the failure is kept for the
// tenant to see. No record: pending.
enum class AcceptanceState : uint8_t { kPending, kPassed, kFailed, kReplaced };
const char* AcceptanceStateName(AcceptanceState s);  // "pending", "passed", "failed", "replaced"

struct AcceptanceRecord {
  int32_t window = 0;
  NodeId node;
  AcceptanceState state = AcceptanceState::kPending;
  std::string why;     // kFailed, kReplaced: the failing checks, or the node's condition
  NodeId replaced_by;  // kReplaced: the node that took its hold
  int64_t at_ms = 0;
  bool operator==(const AcceptanceRecord&) const = default;
};

struct CapacityReservation {
  ReservationId id;
  ReservationSpec spec;
  std::vector<std::vector<NodeHold>> holds;  // per window
  std::vector<BookingId> bookings;       // the book's key of each window
  ReservationState state = ReservationState::kConfirmed;
  int64_t booked_ms = 0;
  int64_t cancelled_ms = 0;
  std::vector<ReservationShrink> shrinks;  // in time order (snapshot format 10)
  // How each booked node's acceptance settled, in the order it did (snapshot format 10).
  std::vector<AcceptanceRecord> acceptance;
  bool operator==(const CapacityReservation&) const = default;
  // The GPUs (spec.gpus) or nodes (spec.nodes) window `window` was booked with after every
  // shrink that reached it: windows before a shrink keep what they held.
  int32_t CountOf(size_t window) const;
  // The newest acceptance record of `node` in window `window`, or nullptr (pending).
  const AcceptanceRecord* AcceptanceOf(size_t window, NodeId node) const;
  // GPU units × ms it holds over its windows within [from, to), until it was cancelled: what is
  // billed, and shown as reserved time.
  __int128 BookedUnitMs(int64_t from, int64_t to) const;
  // Whether `job` runs in this reservation: it names it, in its tenant.
  bool Holds(const Job& job) const { return job.spec.tenant == spec.tenant && job.spec.reservation == spec.name; }
};

}  // namespace allot
