// `allot describe JOB` and `allot explain JOB` as people read them: one "key: value" line per
// field of the API's answer, and the job's environment as a short block.
#pragma once

#include <ostream>

#include "cli/client.h"

namespace allot::cli {

// Every field but the placement; "environment" as
//   image: /srv/images/pytorch
//   mounts:
//     research:shared-models → /models (ro)
//   env:
//     HF_HOME=/data/hf
//   shm_size: 1Gi
void PrintJobView(std::ostream& out, const Json& job);

}  // namespace allot::cli
