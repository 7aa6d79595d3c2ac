// The journal in an embedded SQLite database (WAL mode, synchronous=FULL: a committed group
// is on disk before Append returns). One table of encoded events keyed by sequence number, each
// with its checksum (store/record_checksum.h), a meta table with the event and journal formats,
// and a table of the newest two state snapshots. The file and its -wal and -shm are 0600.
#pragma once

#include <memory>
#include <string>

#include "store/journal.h"

struct sqlite3;
struct sqlite3_stmt;

namespace allot {

class SqliteJournal : public Journal {
 public:
  // Opens or creates the journal at `path`. Fails naming the path and SQLite's reason, a
  // journal written in a format this build does not know, or a snapshot newer than the last
  // event (events the snapshot saw are missing: the store is damaged).
  static Result<std::unique_ptr<SqliteJournal>> Open(const std::string& path);
  ~SqliteJournal() override;

  Result<uint64_t> Append(const std::vector<Event>& events) override;
  Status Replay(uint64_t after, const std::function<Status(uint64_t seq, const Event&)>& fn) override;
  uint64_t last_seq() const override { return last_seq_; }
  // Keeps the newest two (the older is a spare an operator can fall back to by deleting the
  // newer row); refuses a seq beyond the last event.
  Status SaveSnapshot(uint64_t seq, std::string_view bytes) override;
  Result<std::optional<std::pair<uint64_t, std::string>>> LoadSnapshot() override;

 private:
  SqliteJournal() = default;
  Status Exec(const char* sql);
  Result<bool> UpgradeLayout();
  Status Fail(const std::string& what) const;

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  uint64_t last_seq_ = 0;
};

}  // namespace allot
