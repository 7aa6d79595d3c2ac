// allotd's data directory (--data): the admin token, the ledger key, task logs and the SQLite
// journal. Two guard rails for it:
//
// - It is private. Its files hold every tenant's jobs, commands, audit log and ledger, so the
//   directory is 0700 and everything in it owner-only; a directory left looser (by an older
//   allotd, a restore, a copy) is tightened at start, one log line per thing changed.
// - An empty journal over a used directory is an accident, not a new cluster: a journal.db
//   deleted or truncated, a restore that missed it, the wrong --store. Starting would serve an
//   empty state and replace admin-token, so allotd refuses unless told --init-fresh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

// Creates `dir` (0700) if absent, then takes group and other bits off it and everything under it
// (symbolic links are not followed). Returns a line for each thing it changed, for the log
// ("DIR/journal.db: mode 0644 -> 0600"; entries below the first level are counted, not listed).
// Fails naming the path when a mode cannot be changed (the directory is another user's).
Result<std::vector<std::string>> MakeDataDirPrivate(const std::string& dir);

// What in `dir` shows an allotd has used it: "admin-token", "ledger-key", "cluster-key", "logs/"
// (when not empty), "journal.db-wal". Empty for a new directory.
std::vector<std::string> SignsOfUse(const std::string& dir);

struct FreshStart {
  std::string data_dir;
  std::string journal;                // DescribeStore's words for it
  bool journal_missing = false;       // SQLite: journal.db did not exist before this start
  uint64_t events = 0;                // in the journal as opened
  std::vector<std::string> signs;     // SignsOfUse(data_dir), taken before the journal opened
  bool init_fresh = false;            // --init-fresh given
};

// The secret dedicated clusters' munge keys are derived from (server/cluster_wire.h): 32 bytes
// kept as 64 hex digits in DIR/cluster-key, made on first use (0600 from the start, as the
// admin token), so every window's key outlives a restart. Fails naming the file when it cannot
// be read, written, or is not 64 hex digits (it is never replaced: running clusters use it).
Result<std::string> LoadOrCreateClusterKey(const std::string& dir);

// Whether allotd may start on this journal. Refuses (FailedPrecondition, saying what is missing,
// what was found and what to do) an empty or missing journal in a used data directory without
// --init-fresh, and --init-fresh on a journal that has events (it never discards any).
Status CheckFreshStart(const FreshStart& f);

}  // namespace allot
