// GET /metrics: allotd's state, its node agents' telemetry and its own measurements in the
// Prometheus text format (metrics/exposition.h). Label values are bounded: models, zones,
// pools, node names, tenant paths, admission classes, route patterns — never job names.
#pragma once

#include <string>

#include "daemon/agent_registry.h"
#include "daemon/alert_monitor.h"
#include "daemon/controller.h"
#include "metrics/histogram.h"

namespace allot {

// The whole page. Reads the state once under the controller's shared lock. With `alerts`, also
// the alerts raised by kind and their webhook deliveries.
std::string RenderMetrics(const Controller& ctl, const AgentRegistry& agents, const DaemonMetrics& own,
                          const AlertMonitor* alerts = nullptr);

}  // namespace allot
