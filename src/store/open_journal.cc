#include "store/open_journal.h"

#include <filesystem>

#include "store/pg_conninfo.h"
#include "store/pg_journal.h"
#include "store/sqlite_journal.h"

namespace allot {
namespace {

bool IsSqlite(const std::string& store) { return store.empty() || store == "sqlite"; }

bool IsPostgres(const std::string& store) {
  return store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0 ||
         store.find("host=") != std::string::npos || store.find("dbname=") != std::string::npos;
}

std::string SqlitePath(const std::string& data_dir) { return (std::filesystem::path(data_dir) / "journal.db").string(); }

}  // namespace

Result<std::unique_ptr<Journal>> OpenJournal(const std::string& store, const std::string& data_dir) {
  if (IsSqlite(store)) {
    std::error_code ec;
    std::filesystem::create_directories(data_dir, ec);
    if (ec) return Err(Unavailable("journal directory '" + data_dir + "': cannot create: " + ec.message()));
    auto j = SqliteJournal::Open(SqlitePath(data_dir));
    if (!j) return Err(j.error());
    return std::unique_ptr<Journal>(std::move(*j));
  }
  if (IsPostgres(store)) {
    auto j = PgJournal::Open(store);
    if (!j) return Err(j.error());
    return std::unique_ptr<Journal>(std::move(*j));
  }
  // Quoted back only when it cannot be a mistyped conninfo carrying a password.
  std::string shown = store.find('@') == std::string::npos && store.find("password") == std::string::npos
                          ? "'" + store + "'"
                          : "the value given";
  return Err(InvalidArgument("store: " + shown +
                             " is not known; expected sqlite (the default), a PostgreSQL URL such as "
                             "postgresql://allot@db1/allot, or libpq key=value pairs such as 'host=db1 dbname=allot'"));
}

std::string DescribeStore(const std::string& store, const std::string& data_dir) {
  if (IsSqlite(store)) return SqlitePath(data_dir);
  return "postgresql (" + DescribeConninfo(store) + ")";
}

}  // namespace allot
