// The journal in PostgreSQL, for active/passive HA: the state outlives the machine allotd runs
// on, and a standby allotd pointed at the same database takes over when the active one stops.
//
// One table of encoded events keyed by sequence number, each with its checksum
// (allot_journal; store/record_checksum.h) and a meta table with the event and journal formats
// (allot_meta); "allot_"-prefixed because a PostgreSQL database, unlike the
// SQLite file, is often shared with other applications. A group commits with
// synchronous_commit on: it is durable (on the primary, and on synchronous standbys where the
// server has them) before Append returns.
//
// Single writer: Open takes a session-level advisory lock and holds it for the connection's
// life; a second Open on the same database is refused while the first is open. A lost
// connection is not re-established: the lock went with it and another allotd may have taken
// over, so every later Append fails and the controller stops taking writes (fail-stop; restart
// to recover). The primary key on seq fences a writer that missed this: its insert conflicts.
#pragma once

#include <memory>
#include <string>

#include "store/journal.h"

struct pg_conn;

namespace allot {

class PgJournal : public Journal {
 public:
  // Connects with `conninfo` (a libpq URL postgresql://… or key=value string), takes the
  // writer lock, creates the tables if absent and checks the format. Fails naming the database
  // (never the password) and PostgreSQL's reason, when another allotd holds the lock, or when
  // the journal was written in a format this build does not know.
  static Result<std::unique_ptr<PgJournal>> Open(const std::string& conninfo);
  ~PgJournal() override;

  Result<uint64_t> Append(const std::vector<Event>& events) override;
  Status Replay(uint64_t after, const std::function<Status(uint64_t seq, const Event&)>& fn) override;
  uint64_t last_seq() const override { return last_seq_; }
  // Snapshots in allot_snapshots (seq, bytes); the newest two are kept.
  Status SaveSnapshot(uint64_t seq, std::string_view bytes) override;
  Result<std::optional<std::pair<uint64_t, std::string>>> LoadSnapshot() override;

  // Events per INSERT statement (3 parameters each, under PostgreSQL's 65535); a larger group
  // takes several statements in one transaction.
  static constexpr size_t kRowsPerInsert = 1000;
  // Events fetched per round trip by Replay: bounds its memory, whatever the journal's length.
  static constexpr size_t kReplayBatch = 10000;

 private:
  PgJournal() = default;
  Status Exec(const char* sql);
  Result<bool> UpgradeLayout();
  Status Fail(const std::string& what) const;
  Status Fail(const std::string& what, const std::string& reason) const;

  std::string conninfo_;  // kept to redact libpq's messages; never shown
  std::string where_;     // DescribeConninfo(conninfo_)
  pg_conn* conn_ = nullptr;
  uint64_t last_seq_ = 0;
};

}  // namespace allot
