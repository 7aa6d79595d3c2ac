#include "store/sqlite_journal.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "state/event_codec.h"
#include "store/record_checksum.h"

namespace allot {
namespace {

// allot_record_checksum(seq, body): RecordChecksum inside SQL, for the upgrade of a journal
// written before checksums.
void ChecksumFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto seq = static_cast<uint64_t>(sqlite3_value_int64(argv[0]));
  const void* body = sqlite3_value_blob(argv[1]);
  std::string_view bytes(static_cast<const char*>(body), static_cast<size_t>(sqlite3_value_bytes(argv[1])));
  sqlite3_result_int64(ctx, static_cast<sqlite3_int64>(RecordChecksum(seq, bytes)));
}

// SQLite creates a database with 0644 less the umask, and its -wal and -shm files with the
// database's mode: creating the file first, 0600, keeps all three private whatever the umask.
// SQLite's names that are not files (":memory:", "" for a temporary database) are left to it.
Status CreatePrivate(const std::string& path) {
  if (path.empty() || path == ":memory:") return Status::Ok();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Ok();
    return Unavailable("journal " + path + ": cannot open: " + std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace

Status SqliteJournal::Fail(const std::string& what) const {
  return Unavailable("journal " + path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "no database"));
}

Status SqliteJournal::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Unavailable("journal " + path_ + ": " + msg + " (" + sql + ")");
  }
  return Status::Ok();
}

Result<std::unique_ptr<SqliteJournal>> SqliteJournal::Open(const std::string& path) {
  std::unique_ptr<SqliteJournal> j(new SqliteJournal());
  j->path_ = path;
  if (Status s = CreatePrivate(path); !s.ok()) return Err(s);
  if (sqlite3_open_v2(path.c_str(), &j->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return Err(j->Fail("cannot open"));
  }
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                          "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                          "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, body BLOB NOT NULL, checksum INTEGER NOT NULL)",
                          "CREATE TABLE IF NOT EXISTS snapshots (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL)"}) {
    if (Status s = j->Exec(sql); !s.ok()) return Err(s);
  }
  // The format: written on creation, checked on every open.
  std::string want = std::to_string(kEventFormat);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(j->db_, "SELECT value FROM meta WHERE key = 'event_format'", -1, &st, nullptr) != SQLITE_OK) {
    return Err(j->Fail("reading the format"));
  }
  std::string have;
  if (sqlite3_step(st) == SQLITE_ROW) have = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  // The format recorded is the newest any record has. An older one is upgraded (its records
  // still decode; new ones are written in this build's format), so an older allotd will not
  // open the journal afterwards; a newer one is refused.
  if (!have.empty() && !JournalFormatReadable(have)) {
    return Err(FailedPrecondition("journal " + path + ": written in event format " + have + "; this build reads formats " +
                                  std::to_string(kOldestEventFormat) + " to " + want + " (a newer allotd wrote it)"));
  }
  if (have != want) {
    std::string sql = "INSERT OR REPLACE INTO meta (key, value) VALUES ('event_format', '" + want + "')";
    if (Status s = j->Exec(sql.c_str()); !s.ok()) return Err(s);
  }
  auto upgraded = j->UpgradeLayout();
  if (!upgraded) return Err(upgraded.error());
  if (sqlite3_prepare_v2(j->db_, "SELECT COALESCE(MAX(seq), 0) FROM events", -1, &st, nullptr) != SQLITE_OK) {
    return Err(j->Fail("reading the last sequence number"));
  }
  if (sqlite3_step(st) == SQLITE_ROW) j->last_seq_ = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  if (*upgraded) {
    j->opened_note_ = "journal " + path + ": upgraded to journal format " + std::to_string(kJournalFormat) +
                      ": checksums added to its " + std::to_string(j->last_seq_) + " events";
  }
  // A snapshot of events the journal no longer has: restoring it would serve a state the
  // journal cannot reproduce, and appending would reuse its sequence numbers.
  if (sqlite3_prepare_v2(j->db_, "SELECT COALESCE(MAX(seq), 0) FROM snapshots", -1, &st, nullptr) != SQLITE_OK) {
    return Err(j->Fail("reading the newest snapshot"));
  }
  uint64_t newest = 0;
  if (sqlite3_step(st) == SQLITE_ROW) newest = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  if (newest > j->last_seq_) {
    return Err(Internal("journal " + path + ": a snapshot at event " + std::to_string(newest) +
                        " is newer than the last event, " + std::to_string(j->last_seq_) +
                        "; events are missing (restore the database from a backup)"));
  }
  if (sqlite3_prepare_v2(j->db_, "INSERT INTO events (seq, body, checksum) VALUES (?, ?, ?)", -1, &j->insert_, nullptr) != SQLITE_OK) {
    return Err(j->Fail("preparing the insert"));
  }
  return j;
}

// Format 1 (no journal_format key, events without a checksum column) becomes format 2 in one
// transaction; true when rows were given checksums. The table is rebuilt with the column NOT
// NULL (SQLite cannot add such a column to a table with rows), each row's checksum computed from
// what it holds now. A new journal (its table already has the column) only gets the key; a newer
// format is refused.
Result<bool> SqliteJournal::UpgradeLayout() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'journal_format'", -1, &st, nullptr) != SQLITE_OK) {
    return Err(Fail("reading the journal format"));
  }
  std::string have = sqlite3_step(st) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) : "1";
  sqlite3_finalize(st);
  const std::string want = std::to_string(kJournalFormat);
  if (have == want) return false;
  if (have != "1") {
    return Err(FailedPrecondition("journal " + path_ + ": written in journal format " + have +
                                  "; this build reads formats 1 to " + want + " (a newer allotd wrote it)"));
  }
  bool has_column = sqlite3_prepare_v2(db_, "SELECT checksum FROM events LIMIT 0", -1, &st, nullptr) == SQLITE_OK;
  sqlite3_finalize(st);
  if (sqlite3_create_function(db_, "allot_record_checksum", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, ChecksumFunction,
                              nullptr, nullptr) != SQLITE_OK) {
    return Err(Fail("registering the checksum function"));
  }
  std::string sql = "BEGIN IMMEDIATE;";
  if (!has_column) {
    sql += "CREATE TABLE events_v2 (seq INTEGER PRIMARY KEY, body BLOB NOT NULL, checksum INTEGER NOT NULL);"
           "INSERT INTO events_v2 SELECT seq, body, allot_record_checksum(seq, body) FROM events ORDER BY seq;"
           "DROP TABLE events;"
           "ALTER TABLE events_v2 RENAME TO events;";
  }
  sql += "INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_format', '" + want + "'); COMMIT";
  if (Status s = Exec(sql.c_str()); !s.ok()) {
    Exec("ROLLBACK");
    return Err(s);
  }
  return !has_column;
}

SqliteJournal::~SqliteJournal() {
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
}

Result<uint64_t> SqliteJournal::Append(const std::vector<Event>& events) {
  if (events.empty()) return last_seq_;
  if (Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return Err(s);
  uint64_t seq = last_seq_;
  for (const Event& e : events) {
    std::string bytes = EncodeEvent(e);
    sqlite3_reset(insert_);
    sqlite3_bind_int64(insert_, 1, static_cast<sqlite3_int64>(++seq));
    sqlite3_bind_blob(insert_, 2, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert_, 3, static_cast<sqlite3_int64>(RecordChecksum(seq, bytes)));
    if (sqlite3_step(insert_) != SQLITE_DONE) {
      Status s = Fail("appending event " + std::to_string(seq));
      Exec("ROLLBACK");
      return Err(s);
    }
  }
  if (Status s = Exec("COMMIT"); !s.ok()) {
    Exec("ROLLBACK");
    return Err(s);
  }
  last_seq_ = seq;
  return seq;
}

Status SqliteJournal::SaveSnapshot(uint64_t seq, std::string_view bytes) {
  if (seq == 0 || seq > last_seq_) {
    return InvalidArgument("journal " + path_ + ": snapshot at event " + std::to_string(seq) + ": expected 1 to the last event, " +
                           std::to_string(last_seq_));
  }
  sqlite3_stmt* st = nullptr;
  if (Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  Status out = Status::Ok();
  if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO snapshots (seq, bytes) VALUES (?, ?)", -1, &st, nullptr) != SQLITE_OK) {
    out = Fail("preparing the snapshot insert");
  } else {
    sqlite3_bind_int64(st, 1, static_cast<sqlite3_int64>(seq));
    sqlite3_bind_blob64(st, 2, bytes.data(), bytes.size(), SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) out = Fail("saving the snapshot at event " + std::to_string(seq));
  }
  sqlite3_finalize(st);
  if (out.ok()) out = Exec("DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT 2)");
  if (out.ok()) out = Exec("COMMIT");
  if (!out.ok()) Exec("ROLLBACK");
  return out;
}

Result<std::optional<std::pair<uint64_t, std::string>>> SqliteJournal::LoadSnapshot() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT MAX(seq) FROM snapshots", -1, &st, nullptr) != SQLITE_OK) {
    return Err(Fail("finding the newest snapshot"));
  }
  bool found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
  uint64_t seq = found ? static_cast<uint64_t>(sqlite3_column_int64(st, 0)) : 0;
  sqlite3_finalize(st);
  if (!found) return std::nullopt;
  if (seq > last_seq_) {
    return Err(Internal("journal " + path_ + ": the snapshot at event " + std::to_string(seq) +
                        " is newer than the last event, " + std::to_string(last_seq_)));
  }
  // Read straight into the string (seq is the rowid): a SELECT of the blob would hold a second
  // copy of tens of MB while it is copied out.
  sqlite3_blob* blob = nullptr;
  if (sqlite3_blob_open(db_, "main", "snapshots", "bytes", static_cast<sqlite3_int64>(seq), 0, &blob) != SQLITE_OK) {
    sqlite3_blob_close(blob);
    return Err(Fail("opening the snapshot at event " + std::to_string(seq)));
  }
  std::string bytes(static_cast<size_t>(sqlite3_blob_bytes(blob)), '\0');
  int rc = sqlite3_blob_read(blob, bytes.data(), static_cast<int>(bytes.size()), 0);
  sqlite3_blob_close(blob);
  if (rc != SQLITE_OK) return Err(Fail("reading the snapshot at event " + std::to_string(seq)));
  return std::make_pair(seq, std::move(bytes));
}

Status SqliteJournal::Replay(uint64_t after, const std::function<Status(uint64_t seq, const Event&)>& fn) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT seq, body, checksum FROM events WHERE seq > ? ORDER BY seq", -1, &st, nullptr) != SQLITE_OK) {
    return Fail("preparing the replay");
  }
  sqlite3_bind_int64(st, 1, static_cast<sqlite3_int64>(after));
  Status out = Status::Ok();
  uint64_t expect = after + 1;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    uint64_t seq = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
    if (seq != expect) {
      out = Internal("journal " + path_ + ": event " + std::to_string(expect) + " is missing (next is " +
                     std::to_string(seq) + ")");
      break;
    }
    ++expect;
    std::string_view bytes(static_cast<const char*>(sqlite3_column_blob(st, 1)),
                           static_cast<size_t>(sqlite3_column_bytes(st, 1)));
    auto e = DecodeCheckedRecord(path_, seq, bytes, static_cast<uint64_t>(sqlite3_column_int64(st, 2)));
    if (!e) {
      out = e.error();
      break;
    }
    out = fn(seq, *e);
    if (!out.ok()) break;
  }
  if (out.ok() && rc != SQLITE_DONE) out = Fail("reading events");
  sqlite3_finalize(st);
  return out;
}

}  // namespace allot
