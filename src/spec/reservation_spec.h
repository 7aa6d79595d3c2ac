// A reservation as an API body or a scenario's `reservations:` entry writes it — name, tenant,
// model, gpus or nodes, topology, a window, a recurrence — read and checked with the field
// reader, then resolved against the state (tenant, model) into a ReservationSpec whose windows
// are the recurrence expanded.
//
//   {name: nightly-eval, tenant: research/nlp, model: H100-80GB, gpus: 16, topology: rack,
//    start: "2026-12-01T22:00:00+01:00", duration: 6h, every: 24h, until: "2026-12-31T00:00:00Z",
//    drain_before: 30m}
//   {name: own-slurm, tenant: research/nlp, model: H100-80GB, nodes: 2, orchestrator: slurm, …}
//
// `orchestrator` (none, slurm or hook; default none) goes with `nodes` only.
//
// Times: in the API, RFC 3339 with an offset (or Z); in a scenario, virtual time as jobs'
// `submit` ("2h", "7200"). `end` or `duration`, not both; `every` (a duration of at least the
// window, or `daily`/`weekly`) needs `until`, and a window starts before `until`.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "spec/field_reader.h"
#include "spec/job_spec.h"
#include "state/cluster_state.h"
#include "state/reservation.h"

namespace allot {

struct ReservationRequest {
  std::string name, tenant, model;
  int32_t gpus = 0, nodes = 0;
  Topology topology = Topology::kNone;
  int64_t start_ms = 0, end_ms = 0;  // the first window
  int64_t every_ms = 0, until_ms = 0;
  int64_t drain_before_ms = -1;
  Orchestrator orchestrator = Orchestrator::kNone;
  Requirements require;  // node labels every held node satisfies
  int line = 0;
};

// How the reader reads an instant: kWallClock (the API: RFC 3339 with an offset) or kVirtual
// (a scenario: a duration from 0).
enum class ReservationClock { kWallClock, kVirtual };

Result<ReservationRequest> ReadReservation(const YamlReader& rd, const YAML::Node& n, const std::string& path,
                                           ReservationClock clock);
// An API body (already parsed by server/body_reader.h), errors "body: FIELD: …".
Result<ReservationRequest> ReadReservationObject(const YAML::Node& root, const std::string& source);

// How far past a window's asked start allotd looks for the earliest window that fits.
inline constexpr int64_t kReservationSearchHorizonMs = int64_t{366} * 24 * 3600 * 1000;

// Every window of `spec` placed against the state's book (ReservationBook::Find), all or none:
// the event allotd journals and the simulator applies, or the first window that does not fit and
// why. The state checks the holds again as the event applies.
struct ReservationPlan {
  ReservationBooked booking;
  size_t refused_window = 0;
  std::optional<Shortfall> shortfall;  // set when a window does not fit
};
ReservationPlan PlanReservation(const ClusterState& state, const ReservationSpec& spec);

// The tenant path and GPU model against `state`, and the recurrence expanded into windows (at
// most kMaxReservationWindows). Errors read "<where>FIELD: …".
Result<ReservationSpec> ResolveReservation(const ReservationRequest& r, const ClusterState& state,
                                           const std::string& where);

}  // namespace allot
