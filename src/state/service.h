// An inference service (issue 18; docs/services.md): a name, a replica template and how many
// replicas to keep. Each replica is an ordinary job owned by the service (named NAME-r<slot>),
// so placement, preemption, metering and the node agents treat it as any job; the service
// reconciler (scheduler/service_reconciler.h) creates, restarts, replaces and removes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "state/job.h"

namespace allot {

using ServiceId = Id<struct ServiceTag>;

// How replicas of one service keep apart: none may share a node (rack, zone) with another while
// a placement that does not is possible; kNone: anywhere.
enum class Spread : uint8_t { kNone, kNode, kRack, kZone };
const char* SpreadName(Spread s);
std::optional<Spread> ParseSpread(std::string_view text);

// Scaling on the load each replica reports (ALLOT_LOAD_FILE; docs/services.md), after Knative's
// KPA: desired = ceil(average load / target) over the stable window; when the panic window's
// average asks for panic_threshold × the current replicas or more, scale up at once and do not
// scale down until a stable window has passed without that.
struct AutoscaleSpec {
  int64_t target_milli = 0;         // load per replica, thousandths; 0: not autoscaled
  int64_t stable_window_ms = 60000;
  int64_t panic_window_ms = 6000;
  int64_t panic_threshold_milli = 2000;  // 2×
  // Scale down only to the highest count recommended over this long (slowly).
  int64_t scale_down_delay_ms = 60000;
  bool operator==(const AutoscaleSpec&) const = default;
};

struct ServiceSpec {
  std::string name;
  TenantId tenant;
  // What each replica runs: tasks, GPU shape, command, environment. Its name is ignored (replicas
  // are named by slot) and it has no duration: a replica runs until removed.
  JobSpec replica;
  int32_t replicas = 1;      // wanted when not autoscaled; the first count when autoscaled
  int32_t min_replicas = 0;  // autoscaled between min and max (max 0: not autoscaled)
  int32_t max_replicas = 0;
  Spread spread = Spread::kNode;
  int32_t port = 0;          // the port every replica serves on; 0: one each from kServicePorts
  int32_t max_unavailable = 1;  // a rolling update takes down at most this many at once
  int32_t max_surge = 0;        // and starts at most this many above the count
  AutoscaleSpec autoscale;
  bool operator==(const ServiceSpec&) const = default;
  bool autoscaled() const { return max_replicas > 0 && autoscale.target_milli > 0; }
  // Every count and window in range, or what is not, naming the service and the field.
  Status Check() const;
};

// The ports given to replicas of services that declare none: the lowest port of this range no
// live replica holds, fleet-wide (so two replicas on one node never share one). ALLOT_PORT.
inline constexpr int32_t kServicePortFirst = 20000;
inline constexpr int32_t kServicePortCount = 10000;
inline constexpr int32_t kMaxServiceReplicas = 1000;
inline constexpr size_t kMaxServiceNameLength = 48;  // room for "-r999.9999" in a job name

// Restart back-off after a replica's task failed or exited: the first restart at once, then 1 s
// doubling to 5 min; a run that lasted kBackoffReset counts as healthy and resets the count.
inline constexpr int64_t kBackoffFirstMs = 1000;
inline constexpr int64_t kBackoffMaxMs = 300000;
inline constexpr int64_t kBackoffResetMs = 600000;
// The wait before restart number `crashes` + 1 of a replica that failed `crashes` times in a row.
int64_t RestartBackoffMs(int32_t crashes);

struct ServiceReplica {
  int32_t slot = 0;
  JobId job;
  int32_t revision = 1;
  int32_t port = 0;
  int32_t restarts = 0;  // restarts of this replica's job after it failed or exited
  int32_t crashes = 0;   // failures in a row (each run shorter than kBackoffResetMs)
  std::string last_exit; // why its job last ended ("exit code 1"), or empty
  bool operator==(const ServiceReplica&) const = default;
};

struct Service {
  ServiceId id;
  ServiceSpec spec;
  // Every revision's replica template, oldest first; revision r is templates[r - 1].
  std::vector<JobSpec> templates;
  int32_t revision = 1;  // the current one
  int32_t desired = 1;   // replicas wanted now (the spec's count, or the autoscaler's)
  bool deleted = false;
  int64_t created_ms = 0;
  int64_t deleted_ms = -1;
  int64_t scaled_ms = -1;  // when desired last changed
  std::string scale_reason;
  std::vector<ServiceReplica> replicas;  // linked replicas, by slot
  int32_t replaced = 0;  // replicas removed and replaced (rolling update) or restarted
  int32_t next_slot = 0; // slots are not reused within a service's life: names stay unique
  bool operator==(const Service&) const = default;

  const JobSpec& current() const { return templates[revision - 1]; }
  const ServiceReplica* ReplicaOf(JobId job) const;
};

}  // namespace allot
