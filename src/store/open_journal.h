// Which journal a daemon runs on, chosen by one --store value: SQLite under the data directory
// (the default), or PostgreSQL for active/passive HA.
#pragma once

#include <memory>
#include <string>

#include "store/journal.h"

namespace allot {

// `store` is "" or "sqlite" for the SQLite journal at DATA_DIR/journal.db (the directory is
// created if absent), or a libpq conninfo for PostgreSQL: a URL (postgresql://…, postgres://…)
// or key=value pairs naming host= or dbname=. Anything else is refused naming the value and
// the forms expected. A conninfo's password never appears in an error.
Result<std::unique_ptr<Journal>> OpenJournal(const std::string& store, const std::string& data_dir);

// Where the journal of OpenJournal(store, data_dir) lives, fit for a log line (no password).
std::string DescribeStore(const std::string& store, const std::string& data_dir);

}  // namespace allot
