// The agent heartbeat read straight from its bytes into a Heartbeat (wire/agent_messages.h) by a
// SAX handler, with no JSON tree in between: allotd reads 6,250 of them a second, and building
// the tree (a map per object, a node per value) was most of the reading's cost and allocations.
//
// It reads the heartbeat every agent sends every second (telemetry with its xids and per-task
// activity, task reports, loads, scrubs) and declines — nullopt — anything else: a body that is
// not strict JSON (malformed, a key twice in one object), one with any error ParseHeartbeat
// would name (a type, a range, a missing field, an element that is not an object), and one with
// a part it leaves to the tree reader ("health", "mig", "clusters", "acceptance": a value other
// than null). The caller then reads the body the strict way (ParseStrictJson, then
// ParseHeartbeat), which words the error: so a refused heartbeat is refused exactly as before,
// and a heartbeat read here equals what ParseHeartbeat reads from the same body
// (HeartbeatReaderTest compares the two on valid and invalid bodies). Unknown fields are
// ignored, as ParseHeartbeat ignores them.
#pragma once

#include <optional>
#include <string_view>

#include "wire/agent_messages.h"

namespace allot {

std::optional<Heartbeat> ReadPlainHeartbeat(std::string_view body);

}  // namespace allot
