// A job's environment as JSON, one form for the node agents' assignments and the API's job
// view: {"image", "mounts": [{"tenant", "volume", "path", "read_only"}], "env": {"NAME": "value"}},
// each key left out when empty, so an agent that predates environments sees nothing new.
#pragma once

#include <string>

#include "server/agent_wire.h"
#include "server/api_json.h"
#include "state/job_environment.h"

namespace allot {

// The keys above (not the shm size: the assignment writes it in MiB, the job view as people do).
Json EnvironmentJson(const JobEnvironment& e);

}  // namespace allot
