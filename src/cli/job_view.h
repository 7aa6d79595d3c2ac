// `allot describe JOB` and `allot explain JOB` as people read them: one "key: value" line per
// field of the API's answer, and the job's environment as a short block.
#pragma once

#include <ostream>

#include "cli/client.h"

namespace allot::cli {

// An instant as people read it: "2026-11-24T12:00:00Z (3m ago)", "… (in 5m)", "… (now)".
std::string ShownInstant(double unix_seconds, int64_t now_ms);
// The same for an RFC 3339 time the API gave ("-" when it is not one).
std::string ShownTime(const Json& rfc3339, int64_t now_ms);
// Now, by this machine's clock, in Unix milliseconds.
int64_t NowMs();

// Every field but the placement; the job's instants (submitted, started, finished) by
// ShownInstant, never as raw Unix seconds; "environment" as
//   image: /srv/images/pytorch
//   mounts:
//     research:shared-models → /models (ro)
//   env:
//     HF_HOME=/data/hf
//   shm_size: 1Gi
void PrintJobView(std::ostream& out, const Json& job);

// `allot explain --tenant T`: the answer's sentences, then its shares, the tenants it competes
// with, what it borrows and lends, and which of its jobs reclaim takes first.
void PrintTenantExplanation(const Json& e);

}  // namespace allot::cli
