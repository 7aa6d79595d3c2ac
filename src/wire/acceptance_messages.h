// The acceptance part of the agent protocol (issue 16): allotd asks a booked node's agent to run
// its checks before a reservation's window opens (the assignments' optional "acceptance"; an agent
// older than it ignores the field), and the agent reports how they went (the heartbeat's optional
// "acceptance"; allotd ignores none it does not ask about).
//
//   assignments.acceptance[i]: {"reservation", "reservation_id", "window", "start", "end"} (Unix ms)
//   heartbeat.acceptance[i]:   {"reservation_id", "window", "state": "running|passed|failed",
//                               "failures": [{"name", "detail"}], "at_ms"}
//
// The agent runs each (reservation_id, window) once while it is asked, and again only when asked
// again after the ask went away.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

using Json = nlohmann::json;

struct AcceptanceAsk {
  std::string reservation;      // its name, for the agent's log
  uint32_t reservation_id = 0;  // with `window`, the key of the run on the node
  int window = 0;
  int64_t start_ms = 0, end_ms = 0;
  bool operator==(const AcceptanceAsk&) const = default;
  std::string key() const { return "r" + std::to_string(reservation_id) + "w" + std::to_string(window); }
};
Json AcceptanceAsksJson(const std::vector<AcceptanceAsk>& asks);
// The answer's "acceptance" (none when absent); errors name the field.
Result<std::vector<AcceptanceAsk>> ParseAcceptanceAsks(const Json& body);

struct AcceptanceFailure {
  std::string name;    // the check: "nvml.ecc", "cmd:dcgmi diag -r 3"
  std::string detail;  // what it found: "exited with code 1: …"
  bool operator==(const AcceptanceFailure&) const = default;
};

struct AcceptanceReport {
  uint32_t reservation_id = 0;
  int window = 0;
  std::string state;  // running, passed, failed
  std::vector<AcceptanceFailure> failures;  // failed: every failing check
  int64_t at_ms = 0;                        // when it settled (agent's clock)
  bool operator==(const AcceptanceReport&) const = default;
  // "name: detail; …" of the failures.
  std::string Why() const;
};
Json AcceptanceReportsJson(const std::vector<AcceptanceReport>& reports);
Result<std::vector<AcceptanceReport>> ParseAcceptanceReports(const Json& heartbeat);

}  // namespace allot
