#include "store/pg_journal.h"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstring>
#include <thread>

#include "state/event_codec.h"
#include "store/pg_conninfo.h"
#include "store/record_checksum.h"

namespace allot {
namespace {

// Type oids from PostgreSQL's catalog (pg_type.dat), fixed since 7.x; the server headers that
// define them are not part of libpq-dev.
constexpr Oid kInt8Oid = 20;
constexpr Oid kByteaOid = 17;
constexpr int kBinary = 1;

// The writer lock's key: advisory locks are per database, and this key ("allotjnl" as eight
// ASCII bytes) only has to differ from other applications' keys in it.
constexpr const char* kLockSql = "SELECT pg_try_advisory_lock(7020105145114062444)";
constexpr int kLockAttempts = 5;
constexpr int kLockRetryMs = 200;
constexpr const char* kUnlockSql = "SELECT pg_advisory_unlock(7020105145114062444)";

// bigint parameters and results travel in network byte order.
void PutInt64(uint64_t v, char out[8]) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}
uint64_t GetInt64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(in[i]);
  return v;
}

// libpq's messages end in a newline and continue on tab-indented lines; errors here are one line.
std::string OneLine(const char* text) {
  std::string out;
  for (const char* p = text ? text : ""; *p; ++p) {
    if (std::isspace(static_cast<unsigned char>(*p))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += *p;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "unknown error" : out;
}

// Frees a PGresult on every path out of a scope.
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

}  // namespace

Status PgJournal::Fail(const std::string& what) const {
  return Fail(what, conn_ ? PQerrorMessage(conn_) : "out of memory");
}

Status PgJournal::Fail(const std::string& what, const std::string& reason) const {
  return Unavailable("journal " + where_ + ": " + what + ": " + RedactPasswords(OneLine(reason.c_str()), conninfo_));
}

Status PgJournal::Exec(const char* sql) {
  PgResult r(PQexec(conn_, sql));
  ExecStatusType st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return Fail(std::string("running '") + sql + "'", r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
  }
  return Status::Ok();
}

Result<std::unique_ptr<PgJournal>> PgJournal::Open(const std::string& conninfo) {
  std::unique_ptr<PgJournal> j(new PgJournal());
  j->conninfo_ = conninfo;
  j->where_ = "postgresql (" + DescribeConninfo(conninfo) + ")";
  // Defaults the conninfo may override (it is expanded after them): a bounded wait for a
  // server that does not answer, and a name in pg_stat_activity.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {"10", "allotd", conninfo.c_str(), nullptr};
  j->conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!j->conn_ || PQstatus(j->conn_) != CONNECTION_OK) return Err(j->Fail("cannot connect"));
  // Durable on return whatever the database's default; no NOTICE chatter on stderr (CREATE
  // TABLE IF NOT EXISTS sends one on every open).
  if (Status s = j->Exec("SET synchronous_commit = on; SET client_min_messages = warning"); !s.ok()) return Err(s);

  // The lock first: a standby that starts while the active allotd creates the tables waits
  // here rather than racing it.
  // A writer that went without closing (killed, its host lost) holds the lock until the
  // server notices its backend's socket closed, a moment later: a few tries over about a second
  // let a restart right after such an exit through, while a live holder is still refused.
  bool locked = false;
  for (int attempt = 0; attempt < kLockAttempts && !locked; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(kLockRetryMs));
    PgResult lock(PQexec(j->conn_, kLockSql));
    if (PQresultStatus(lock.get()) != PGRES_TUPLES_OK) {
      return Err(j->Fail("taking the writer lock", lock ? PQresultErrorMessage(lock.get()) : PQerrorMessage(j->conn_)));
    }
    locked = std::strcmp(PQgetvalue(lock.get(), 0, 0), "t") == 0;
  }
  if (!locked) {
    return Err(Unavailable("another allotd holds the journal lock on " + j->where_ +
                           "; one writer at a time: this one can start once that one has stopped"));
  }

  // The format: written on creation, checked on every open. One implicit transaction.
  std::string want = std::to_string(kEventFormat);
  std::string schema =
      "CREATE TABLE IF NOT EXISTS allot_meta (key text PRIMARY KEY, value text NOT NULL);"
      "CREATE TABLE IF NOT EXISTS allot_journal (seq bigint PRIMARY KEY, record bytea NOT NULL, checksum bigint NOT NULL);"
      "CREATE TABLE IF NOT EXISTS allot_snapshots (seq bigint PRIMARY KEY, bytes bytea NOT NULL);"
      "INSERT INTO allot_meta (key, value) VALUES ('event_format', '" + want + "') ON CONFLICT (key) DO NOTHING";
  if (Status s = j->Exec(schema.c_str()); !s.ok()) return Err(s);
  PgResult format(PQexec(j->conn_, "SELECT value FROM allot_meta WHERE key = 'event_format'"));
  if (PQresultStatus(format.get()) != PGRES_TUPLES_OK || PQntuples(format.get()) != 1) {
    return Err(j->Fail("reading the format", format ? PQresultErrorMessage(format.get()) : PQerrorMessage(j->conn_)));
  }
  std::string have = PQgetvalue(format.get(), 0, 0);
  // As SqliteJournal: an older format is upgraded (its records still decode), a newer refused.
  if (!JournalFormatReadable(have)) {
    return Err(FailedPrecondition("journal " + j->where_ + ": written in event format " + have + "; this build reads formats " +
                                  std::to_string(kOldestEventFormat) + " to " + want + " (a newer allotd wrote it)"));
  }
  if (have != want) {
    std::string sql = "UPDATE allot_meta SET value = '" + want + "' WHERE key = 'event_format'";
    if (Status s = j->Exec(sql.c_str()); !s.ok()) return Err(s);
  }
  auto upgraded = j->UpgradeLayout();
  if (!upgraded) return Err(upgraded.error());
  PgResult last(PQexec(j->conn_, "SELECT COALESCE(MAX(seq), 0) FROM allot_journal"));
  if (PQresultStatus(last.get()) != PGRES_TUPLES_OK) {
    return Err(j->Fail("reading the last sequence number", last ? PQresultErrorMessage(last.get()) : PQerrorMessage(j->conn_)));
  }
  j->last_seq_ = std::stoull(PQgetvalue(last.get(), 0, 0));
  if (*upgraded) {
    j->opened_note_ = "journal " + j->where_ + ": upgraded to journal format " + std::to_string(kJournalFormat) +
                      ": checksums added to its " + std::to_string(j->last_seq_) + " events";
  }
  // A snapshot past the last event means events were lost: the journal is not intact.
  PgResult newest(PQexec(j->conn_, "SELECT COALESCE(MAX(seq), 0) FROM allot_snapshots"));
  if (PQresultStatus(newest.get()) != PGRES_TUPLES_OK) {
    return Err(j->Fail("reading the newest snapshot", newest ? PQresultErrorMessage(newest.get()) : PQerrorMessage(j->conn_)));
  }
  if (uint64_t snap = std::stoull(PQgetvalue(newest.get(), 0, 0)); snap > j->last_seq_) {
    return Err(Internal("journal " + j->where_ + ": a snapshot at event " + std::to_string(snap) +
                        " is newer than the last event, " + std::to_string(j->last_seq_) + "; events are missing"));
  }
  return j;
}

// As SqliteJournal::UpgradeLayout: format 1 (no journal_format key, no checksum column) gets
// the column, every row's checksum, then NOT NULL, in one transaction; true when it did.
Result<bool> PgJournal::UpgradeLayout() {
  PgResult format(PQexec(conn_, "SELECT value FROM allot_meta WHERE key = 'journal_format'"));
  if (PQresultStatus(format.get()) != PGRES_TUPLES_OK) {
    return Err(Fail("reading the journal format", format ? PQresultErrorMessage(format.get()) : PQerrorMessage(conn_)));
  }
  const std::string have = PQntuples(format.get()) == 1 ? PQgetvalue(format.get(), 0, 0) : "1";
  const std::string want = std::to_string(kJournalFormat);
  if (have == want) return false;
  if (have != "1") {
    return Err(FailedPrecondition("journal " + where_ + ": written in journal format " + have +
                                  "; this build reads formats 1 to " + want + " (a newer allotd wrote it)"));
  }
  PgResult column(PQexec(conn_,
                         "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                         "AND table_name = 'allot_journal' AND column_name = 'checksum'"));
  if (PQresultStatus(column.get()) != PGRES_TUPLES_OK) {
    return Err(Fail("reading the journal's columns", column ? PQresultErrorMessage(column.get()) : PQerrorMessage(conn_)));
  }
  const bool has_column = PQntuples(column.get()) == 1;
  if (Status s = Exec("BEGIN"); !s.ok()) return Err(s);
  auto abandon = [&](Status s) {
    Exec("ROLLBACK");
    return Err(std::move(s));
  };
  if (!has_column) {
    if (Status s = Exec("ALTER TABLE allot_journal ADD COLUMN checksum bigint"); !s.ok()) return abandon(s);
    // A batch at a time along the primary key, so memory stays bounded and each read is an
    // index range; the values are integers this code formats.
    for (uint64_t after = 0;;) {
      PgResult rows(PQexecParams(conn_, ("SELECT seq, record FROM allot_journal WHERE seq > " + std::to_string(after) +
                                         " ORDER BY seq LIMIT " + std::to_string(kReplayBatch)).c_str(),
                                 0, nullptr, nullptr, nullptr, nullptr, kBinary));
      if (PQresultStatus(rows.get()) != PGRES_TUPLES_OK) {
        return abandon(Fail("reading events to checksum", rows ? PQresultErrorMessage(rows.get()) : PQerrorMessage(conn_)));
      }
      int n = PQntuples(rows.get());
      if (n == 0) break;
      std::string sql = "UPDATE allot_journal AS j SET checksum = v.c::bigint FROM (VALUES ";
      for (int i = 0; i < n; ++i) {
        uint64_t seq = GetInt64(PQgetvalue(rows.get(), i, 0));
        after = seq;
        std::string_view record(PQgetvalue(rows.get(), i, 1), static_cast<size_t>(PQgetlength(rows.get(), i, 1)));
        sql += (i ? ",(" : "(") + std::to_string(seq) + "," +
               std::to_string(static_cast<int64_t>(RecordChecksum(seq, record))) + ")";
      }
      sql += ") AS v(s, c) WHERE j.seq = v.s";
      if (Status s = Exec(sql.c_str()); !s.ok()) return abandon(s);
    }
    if (Status s = Exec("ALTER TABLE allot_journal ALTER COLUMN checksum SET NOT NULL"); !s.ok()) return abandon(s);
  }
  std::string sql = "INSERT INTO allot_meta (key, value) VALUES ('journal_format', '" + want +
                    "') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";
  if (Status s = Exec(sql.c_str()); !s.ok()) return abandon(s);
  if (Status s = Exec("COMMIT"); !s.ok()) return abandon(s);
  return !has_column;
}

Status PgJournal::SaveSnapshot(uint64_t seq, std::string_view bytes) {
  if (seq == 0 || seq > last_seq_) {
    return InvalidArgument("journal " + where_ + ": snapshot at event " + std::to_string(seq) +
                           ": expected 1 to the last event, " + std::to_string(last_seq_));
  }
  // One statement (its own transaction): insert, then keep the newest two.
  static const char* kSql =
      "WITH saved AS (INSERT INTO allot_snapshots (seq, bytes) VALUES ($1, $2) "
      "ON CONFLICT (seq) DO UPDATE SET bytes = EXCLUDED.bytes RETURNING seq) "
      "DELETE FROM allot_snapshots WHERE seq < (SELECT MIN(seq) FROM "
      "(SELECT seq FROM allot_snapshots UNION SELECT seq FROM saved ORDER BY seq DESC LIMIT 2) AS newest)";
  char at[8];
  PutInt64(seq, at);
  const char* values[] = {at, bytes.data()};
  const int lengths[] = {8, static_cast<int>(bytes.size())};
  const int formats[] = {kBinary, kBinary};
  const Oid types[] = {kInt8Oid, kByteaOid};
  PgResult r(PQexecParams(conn_, kSql, 2, types, values, lengths, formats, kBinary));
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
    return Fail("saving the snapshot at event " + std::to_string(seq), r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
  }
  return Status::Ok();
}

Result<std::optional<std::pair<uint64_t, std::string>>> PgJournal::LoadSnapshot() {
  PgResult r(PQexecParams(conn_, "SELECT seq, bytes FROM allot_snapshots ORDER BY seq DESC LIMIT 1", 0, nullptr, nullptr,
                          nullptr, nullptr, kBinary));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    return Err(Fail("loading the newest snapshot", r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_)));
  }
  if (PQntuples(r.get()) == 0) return std::nullopt;
  uint64_t seq = GetInt64(PQgetvalue(r.get(), 0, 0));
  if (seq > last_seq_) {
    return Err(Internal("journal " + where_ + ": the snapshot at event " + std::to_string(seq) +
                        " is newer than the last event, " + std::to_string(last_seq_)));
  }
  return std::make_pair(seq, std::string(PQgetvalue(r.get(), 0, 1), static_cast<size_t>(PQgetlength(r.get(), 0, 1))));
}

// The lock is released explicitly before the connection closes: the server drops a session's
// advisory locks only once its backend has exited, which is after PQfinish returns, so a
// successor opening at once (a restart, a standby taking over) could otherwise find it held.
PgJournal::~PgJournal() {
  if (conn_ && PQstatus(conn_) == CONNECTION_OK) {
    PgResult unlock(PQexec(conn_, kUnlockSql));
  }
  PQfinish(conn_);
}

Result<uint64_t> PgJournal::Append(const std::vector<Event>& events) {
  if (events.empty()) return last_seq_;
  // One statement is a transaction of its own (one round trip); a group that needs several
  // wraps them in BEGIN/COMMIT.
  bool several = events.size() > kRowsPerInsert;
  if (several) {
    if (Status s = Exec("BEGIN"); !s.ok()) return Err(s);
  }
  auto abandon = [&](Status s) {
    if (several) Exec("ROLLBACK");  // if the connection is gone, so is the transaction
    return Err(std::move(s));
  };
  uint64_t seq = last_seq_;
  for (size_t begin = 0; begin < events.size(); begin += kRowsPerInsert) {
    size_t n = std::min(kRowsPerInsert, events.size() - begin);
    std::string sql = "INSERT INTO allot_journal (seq, record, checksum) VALUES ";
    std::vector<char> seqs(8 * n), sums(8 * n);
    std::vector<std::string> records(n);
    std::vector<const char*> values(3 * n);
    std::vector<int> lengths(3 * n), formats(3 * n, kBinary);
    std::vector<Oid> types(3 * n);
    for (size_t i = 0; i < n; ++i) {
      PutInt64(++seq, &seqs[8 * i]);
      records[i] = EncodeEvent(events[begin + i]);
      PutInt64(RecordChecksum(seq, records[i]), &sums[8 * i]);
      values[3 * i] = &seqs[8 * i];
      lengths[3 * i] = 8;
      types[3 * i] = kInt8Oid;
      values[3 * i + 1] = records[i].data();
      lengths[3 * i + 1] = static_cast<int>(records[i].size());
      types[3 * i + 1] = kByteaOid;
      values[3 * i + 2] = &sums[8 * i];
      lengths[3 * i + 2] = 8;
      types[3 * i + 2] = kInt8Oid;
      sql += (i ? ",($" : "($") + std::to_string(3 * i + 1) + ",$" + std::to_string(3 * i + 2) + ",$" +
             std::to_string(3 * i + 3) + ")";
    }
    PgResult r(PQexecParams(conn_, sql.c_str(), static_cast<int>(3 * n), types.data(), values.data(), lengths.data(),
                            formats.data(), kBinary));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      return abandon(Fail("appending events " + std::to_string(seq - n + 1) + " to " + std::to_string(seq),
                          r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_)));
    }
  }
  if (several) {
    // COMMIT of a transaction the server has aborted answers ROLLBACK, not an error.
    PgResult r(PQexec(conn_, "COMMIT"));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK || std::strcmp(PQcmdStatus(r.get()), "COMMIT") != 0) {
      return abandon(Fail("committing events " + std::to_string(last_seq_ + 1) + " to " + std::to_string(seq),
                          r && *PQresultErrorMessage(r.get()) ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_)));
    }
  }
  last_seq_ = seq;
  return seq;
}

Status PgJournal::Replay(uint64_t after, const std::function<Status(uint64_t seq, const Event&)>& fn) {
  static const std::string kSelect =
      "SELECT seq, record, checksum FROM allot_journal WHERE seq > $1 ORDER BY seq LIMIT " + std::to_string(kReplayBatch);
  uint64_t expect = after + 1;
  for (;;) {
    char from[8];
    PutInt64(expect - 1, from);
    const char* values[] = {from};
    const int lengths[] = {8};
    const int formats[] = {kBinary};
    const Oid types[] = {kInt8Oid};
    PgResult r(PQexecParams(conn_, kSelect.c_str(), 1, types, values, lengths, formats, kBinary));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return Fail("reading events after " + std::to_string(expect - 1), r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
    }
    int rows = PQntuples(r.get());
    for (int i = 0; i < rows; ++i) {
      if (PQgetlength(r.get(), i, 0) != 8) {
        return Internal("journal " + where_ + ": allot_journal.seq is " + std::to_string(PQgetlength(r.get(), i, 0)) +
                        " bytes wide; expected a bigint (8)");
      }
      uint64_t seq = GetInt64(PQgetvalue(r.get(), i, 0));
      if (seq != expect) {
        return Internal("journal " + where_ + ": event " + std::to_string(expect) + " is missing (next is " +
                        std::to_string(seq) + ")");
      }
      ++expect;
      std::string_view bytes(PQgetvalue(r.get(), i, 1), static_cast<size_t>(PQgetlength(r.get(), i, 1)));
      if (PQgetlength(r.get(), i, 2) != 8) {
        return Internal("journal " + where_ + ": allot_journal.checksum of event " + std::to_string(seq) +
                        " is not a bigint");
      }
      auto e = DecodeCheckedRecord(where_, seq, bytes, GetInt64(PQgetvalue(r.get(), i, 2)));
      if (!e) return e.error();
      if (Status s = fn(seq, *e); !s.ok()) return s;
    }
    if (static_cast<size_t>(rows) < kReplayBatch) return Status::Ok();
  }
}

}  // namespace allot
