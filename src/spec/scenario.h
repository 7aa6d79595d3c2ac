// A scenario: the fleet, the tenant tree, the jobs, and scheduler settings — what `allot sim`
// runs, and (its fleet:, tenants: and scheduler: parts) what seeds allotd. The file format is a
// spec like a job's (docs/scenario.md); the seeded generator that can fill one is the
// simulator's (sim/generate.h).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "spec/job_spec.h"
#include "spec/job_template.h"
#include "spec/reservation_spec.h"
#include "spec/service_reader.h"
#include "spec/tenant_spec.h"
#include "fleet/fleet.h"
#include "scheduler/config.h"
#include "state/billing_state.h"
#include "state/job.h"
#include "tenancy/quota_tree.h"

namespace YAML {
class Node;
}

namespace allot {

// A budget as written: a tenant path and its caps per billing month (kNoCap: none), applied as
// a BudgetSet once the tenants exist, as allotd's POST /v1/budgets would (needs --rates).
struct ScenarioBudget {
  std::string tenant;
  int64_t spend_micros = kNoCap;     // in the rate card's currency
  int64_t gpu_hours_milli = kNoCap;  // thousandths of a GPU-hour
  int line = 0;
};

// A reservation as written (start and end in virtual time), booked at time 0 in file order after
// the budgets, as allotd's POST /v1/reservations would; `refused` says why one was not.
struct ScenarioReservation {
  ReservationRequest request;
  std::vector<Window> windows;  // the recurrence expanded (BuildInitialState)
  std::string refused;          // empty when confirmed
};

// Something that happens to the fleet at a virtual time (simulator only): a node lost (its
// agent silent: NodeFailed down), or a running job's task failing (JobFailed with `reason`).
struct ScenarioIncident {
  int64_t at_ms = 0;
  std::string node_lost;  // a node's name, or empty
  std::string fail;       // a job's name, or empty
  std::string tenant;     // the failing job's tenant (empty: the only job of that name)
  std::string reason = "exit code 1";
  int line = 0;
};

struct GenerateSpec {
  uint64_t seed = 1;
  int nodes = 64;
  std::string gpu_model = "H100-80GB";
  int gpus_per_node = 8;
  int64_t node_cpu = 96 * kMilli;
  int64_t node_memory = 1024 * 1024;  // MiB
  int nodes_per_rack = 32;
  int racks_per_zone = 50;
  int orgs = 2;
  int teams = 6;
  int64_t guarantee_permille = 700;  // guarantees sum to this share of the fleet
  int64_t jobs_per_day = 1000;
  int64_t days_ms = 86400000;
  int64_t load_permille = 850;       // offered GPU-time over capacity
};

struct Scenario {
  std::string file;  // for error messages
  std::vector<NodeSpec> nodes;
  std::vector<ScenarioTenant> tenants;
  // Sorted by (submit, position) when run; a deque so the simulator frees jobs as it submits them.
  std::deque<ScenarioJob> jobs;
  // `jobs_file:` (or `allot sim --jobs`): JSON Lines or CSV jobs read after `jobs:` as a stream
  // (spec/job_stream.h) when the scenario is run; empty: none. Relative to the scenario's folder.
  std::string jobs_file;
  bool jobs_file_read = false;
  std::vector<ScenarioBudget> budgets;  // in file order
  std::vector<ScenarioReservation> reservations;  // in file order
  std::vector<ScenarioService> services;          // in file order (created at their submit time)
  std::vector<ScenarioIncident> incidents;        // by time, then file order
  // `templates:` (spec/job_template.h), in file order: the jobs' `template:` names them, and
  // BuildInitialState saves them in the state as allotd's POST /v1/templates would.
  std::vector<TemplateDef> templates;
  SchedulerConfig scheduler;
  std::optional<GenerateSpec> generate;
};

// Reads and validates the file's syntax and fields. Errors read
// "FILE:LINE: FIELD.PATH: what was wrong; expected what".
Result<Scenario> LoadScenario(const std::string& path);
Result<Scenario> ParseScenario(const std::string& yaml_text, const std::string& file_name);
// Streams sc.jobs_file into sc.jobs (after the jobs already there), once; job names stay
// unique within a tenant across both. Errors read "JOBS_FILE:LINE: FIELD: …".
Status ReadScenarioJobsFile(Scenario& sc);
// Only the `tenants:` list (when `read_tenants`) and the `scheduler:` section of a file that
// holds other settings too (allotd's config file); the rest of the file is the caller's.
Result<Scenario> ParseTenantsAndScheduler(const std::string& yaml_text, const std::string& file_name, bool read_tenants);

}  // namespace allot
