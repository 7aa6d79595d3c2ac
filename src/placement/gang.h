// Gang placement: every task of a job or none, honouring the job's topology constraint.
//
//   none    preferred, not required: one node, then one NVLink domain (if any spans nodes),
//           one rack, the fewest racks of one zone; else each task on its own best-fit node
//           (fewest free GPUs that still fit).
//   nvlink  the whole gang inside one NVLink domain (a node, unless a wider domain is declared).
//   rack    the whole gang inside one rack.
//   zone    the whole gang inside one zone: one rack if any can hold it, else the fewest racks.
// Constrained gangs try one node first (the tightest locality), then domains of their kind in
// best-fit order (fewest free GPUs that could hold the gang, then domain id). On a node that
// declares GPU groups (NVLink bridges, PCIe switches), a task's GPUs come from one group when
// one can hold them. Tasks that share a GPU (MIG, MPS, time-slice) go to PlaceShare.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/resources.h"
#include "placement/fleet_view.h"
#include "state/job.h"

namespace allot {

// On success returns one TaskPlacement per task (in task order) and leaves them taken in
// `view`; on failure returns nullopt and leaves `view` unchanged.
std::optional<std::vector<TaskPlacement>> PlaceGang(FleetView& view, const JobSpec& spec);

// Whole GPUs a gang may take on one node: a reservation's hold less what its jobs use there.
struct GpuCap {
  NodeId node;
  int gpus = 0;
};
// PlaceGang within `caps` only: each task on the node with the least of its cap left that holds
// it, no node giving more than its cap; with a topology, all on one domain of its kind. Whole
// GPUs only (a reservation books whole GPUs); nullopt, and `view` unchanged, when it does not fit.
std::optional<std::vector<TaskPlacement>> PlaceGangOn(FleetView& view, const JobSpec& spec, const std::vector<GpuCap>& caps);

// Why the gang does not fit now: "needs 8 GPUs in one NVLink domain; largest free block is 4".
// May try placements in `view`; leaves it as it was.
std::string ExplainNoFit(FleetView& view, const JobSpec& spec, const ResourceNames& names);

// A cheap necessary condition for the gang to fit `view` now, given that it did not fit before
// `freed` was given back to the view: some node or domain the freed tasks touched can now hold
// it (or, for an unconstrained multi-node gang, the fleet has the GPUs in total). False means
// PlaceGang would certainly fail; true means it may succeed.
bool MayFitAfterFreeing(const FleetView& view, const JobSpec& spec, const std::vector<TaskPlacement>& freed);

// A cheap necessary condition for a whole-GPU rack or zone gang to fit `view` once every task
// in `freed` (held in the view) is given back: some domain of its kind has room for its tasks,
// Σ ⌊free GPUs / s⌋ over its nodes for each task size s, read from the domains' counts and
// what giving the tasks back would change in them (the view is not changed). False means
// PlaceGang would fail with all of them freed; true that it may fit. True for any other gang
// (no topology, NVLink, shares, a `require`).
bool MayFitWithFreed(const FleetView& view, const JobSpec& spec,
                     const std::vector<const std::vector<TaskPlacement>*>& freed);
// Whether MayFitWithFreed may say no for `spec` (a rack or zone gang without shares): for any
// other job it says yes without looking, so a caller need not gather the freed tasks.
bool MayFitWithFreedLooks(const JobSpec& spec);

// MayFitAfterFreeing over a walk that only gives back (the backfill reservation's): the same
// answer for everything freed since the last Tried(), at the cost of what was freed since the
// last MayFit(). Sound because giving back only grows what is free: a node or domain found
// short stays short until something on it is given back again.
class FreedSinceTry {
 public:
  FreedSinceTry(const FleetView& view, const JobSpec& spec);
  // `p` was just given back on the view.
  void Add(const TaskPlacement& p);
  bool MayFit();
  // A placement was tried: what was freed so far no longer counts.
  void Tried();

 private:
  enum class Mode { kAlways, kTotal, kNode, kDomain };
  const FleetView& view_;
  const JobSpec& spec_;
  const Bitset* eligible_;
  Mode mode_;
  int64_t gpus_ = 0;
  bool any_eligible_ = false;         // an eligible node was freed (since Tried)
  std::vector<NodeId> nodes_;         // kNode: freed since the last MayFit
  DomainKind kind_ = DomainKind::kRack;
  std::vector<uint8_t> armed_;        // kDomain: holds an eligible node freed since Tried
  std::vector<uint8_t> dirty_;        // kDomain: given GPUs since the last MayFit
  std::vector<uint32_t> check_;       // kDomain: dirty domains, to look at in MayFit
};

// Why the gang can never fit this fleet, even empty; nullopt when it could.
std::optional<std::string> NeverFits(const Fleet& fleet, const JobSpec& spec, const ResourceNames& names);

}  // namespace allot
