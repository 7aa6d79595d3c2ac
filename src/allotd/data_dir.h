// allotd's data directory (--data): the admin token, the ledger key, task logs and the SQLite
// journal. A guard rail for it:
//
// - An empty journal over a used directory is an accident, not a new cluster: a journal.db
//   deleted or truncated, a restore that missed it, the wrong --store. Starting would serve an
//   empty state and replace admin-token, so allotd refuses unless told --init-fresh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

// What in `dir` shows an allotd has used it: "admin-token", "ledger-key", "logs/" (when not
// empty), "journal.db-wal". Empty for a new directory.
std::vector<std::string> SignsOfUse(const std::string& dir);

struct FreshStart {
  std::string data_dir;
  std::string journal;                // DescribeStore's words for it
  bool journal_missing = false;       // SQLite: journal.db did not exist before this start
  uint64_t events = 0;                // in the journal as opened
  std::vector<std::string> signs;     // SignsOfUse(data_dir), taken before the journal opened
  bool init_fresh = false;            // --init-fresh given
};

// Whether allotd may start on this journal. Refuses (FailedPrecondition, saying what is missing,
// what was found and what to do) an empty or missing journal in a used data directory without
// --init-fresh, and --init-fresh on a journal that has events (it never discards any).
Status CheckFreshStart(const FreshStart& f);

}  // namespace allot
