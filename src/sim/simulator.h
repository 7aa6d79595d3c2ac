// The simulator: runs the real scheduling core in virtual time over a scenario. Simulated nodes
// "run" each job for its declared duration; a preempted job exits at its grace deadline and
// keeps the work up to its last periodic checkpoint.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/scenario.h"
#include "scheduler/failed_attempts.h"
#include "state/cluster_state.h"

namespace allot {

struct BillingSetup;  // metering/billing.h

struct SimOptions {
  int64_t until_ms = -1;  // stop at this virtual time; -1: when nothing is left to happen
  bool verify = false;    // check state invariants after every pass (on in debug builds)
  std::function<void(const Event&)> on_event;  // sees every event applied, in order
  // Sees every event the simulator applies with the state just after it (the metering what-if).
  std::function<void(const Event&, const ClusterState&)> on_applied;
  // The rate card and its zones (`--rates`): set, the pass gets allotd's budget gate
  // (metering/budget_gate.h). A scenario with budgets needs it.
  std::shared_ptr<const BillingSetup> billing;
  // `--jobs`: jobs read from this JSON Lines or CSV file, in place of the scenario's jobs_file.
  std::string jobs_file;
  // `--load-only`: stop once the scenario is read and the state built, before the first pass.
  bool load_only = false;
  // Passes skip the gangs remembered to fail until capacity comes back where they could use it
  // (scheduler/failed_attempts.h); false (`--retry-every-pass`) tries every one every pass.
  bool remember_failed_attempts = true;
};

struct TenantStats {
  std::string path;
  __int128 gpu_unit_ms = 0;   // GPU-time held by the subtree
  std::vector<int64_t> waits;  // first start - submit, per started job, ms
};

// What each tenant's subtree cost over the run under a rate card (`allot sim --rates`).
struct SimCost {
  std::string currency;
  std::string mode;            // the card's default billing mode
  std::vector<int64_t> micros;  // by tenant id
};

struct SimResult {
  int64_t end_ms = 0;
  int64_t fleet_gpus = 0;
  __int128 allocated_unit_ms = 0;  // GPU-time held by any job
  std::vector<TenantStats> tenants;  // by tenant id (0 is the root)
  std::vector<std::string> reasons;  // per job id: last pending reason, or empty
  JobId reserved;                    // the job holding the backfill reservation after the last pass
  int64_t reserved_start_ms = -1;
  int64_t passes = 0;
  int64_t decisions = 0;
  double wall_seconds = 0;  // time spent planning
  // Reading the scenario and its jobs file, generating, ordering and building the state (the
  // file's own parse included when run from a file). Not in the report.
  double load_seconds = 0;
  int64_t jobs_loaded = 0;
  std::optional<SimCost> cost;
  // The scenario's reservations that were not booked, as written, with why.
  struct RefusedReservation {
    std::string name, tenant;
    std::vector<Window> windows;
    std::string reason;
  };
  std::vector<RefusedReservation> refused_reservations;
  // Per confirmed reservation (by id), per window: GPU-time of other work on its holds before the
  // window opened (lent), and when its holds were first free of that work from the start (-1:
  // not within the run).
  struct WindowOutcome {
    __int128 lent_unit_ms = 0;  // GPUs × ms
    int64_t free_at_ms = -1;
  };
  std::vector<std::vector<WindowOutcome>> reservation_windows;
  // Every change of a service's wanted replicas by its autoscaler, in order.
  struct ServiceScale {
    ServiceId service;
    int64_t time_ms = 0;
    int32_t desired = 0;
    std::string why;
  };
  std::vector<ServiceScale> service_scales;
};

class Simulator {
 public:
  // REQUIRES: BuildInitialState(scenario, state) succeeded.
  Simulator(Scenario scenario, ClusterState& state, SimOptions options);
  Result<SimResult> Run();

 private:
  struct Pending;
  const SchedulerConfig config_;
  Scenario scenario_;
  ClusterState& state_;
  SimOptions options_;
  FailedAttempts failed_attempts_;
};

// Loads, validates and runs a scenario file. `seed` overrides the generator's seed when set.
// A scenario with budgets and no options.billing is refused (invalid argument) before it runs.
struct SimRun {
  ClusterState state;
  SimResult result;
};
Result<SimRun> RunScenarioFile(const std::string& path, const SimOptions& options, std::optional<uint64_t> seed);
Result<SimRun> RunScenario(Scenario scenario, const SimOptions& options, std::optional<uint64_t> seed);

}  // namespace allot
