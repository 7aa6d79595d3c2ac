// The API's wire forms: a job and resource amounts as JSON, and times as the API writes and
// reads them (Unix seconds with milliseconds; RFC 3339 UTC for windows).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/controller.h"

namespace allot {

using Json = nlohmann::json;

// Milliseconds since the epoch as Unix seconds.
double Seconds(int64_t ms);
// RFC 3339 ("2026-11-01T00:00:00Z", an offset, a fraction: ParseRfc3339) or Unix seconds → ms since the epoch.
std::optional<int64_t> ParseApiTime(const std::string& v);
// ms since the epoch → "2026-11-01T00:00:00Z" (whole seconds, rounded down).
std::string FormatApiTime(int64_t ms);

// At least the simulator report's per-job fields, with why it waits.
Json JobJson(const Controller::View& v, const Job& j);
// What one task of group `g` holds: "a whole H100-80GB GPU", "a 3g.40gb MIG instance of H100-80GB".
std::string GroupHolds(const ClusterState& st, ResourceId res, const TaskGroup& g);
// An array (docs/arrays.md): its count, parallel limit, state and progress (done, running,
// failed, pending, retries); with `elements`, each element's name, index, frame, state and reason.
Json ArrayJson(const Controller::View& v, TenantId tenant, const std::string& name, bool elements);
// Every resource's amount as people write it; `skip_unlimited` leaves out unset maxes.
Json AmountsJson(const ClusterState& st, const Resources& r, bool skip_unlimited);

}  // namespace allot
