// What may be said about a PostgreSQL connection string in logs and errors. A conninfo can
// carry a password (postgresql://user:secret@host/db, password=secret), and libpq echoes parts
// of a malformed one back in its messages, so nothing from libpq reaches a person unfiltered.
#pragma once

#include <string>

namespace allot {

// The non-secret fields of `conninfo` (a libpq URL or key=value string) as
// "host=H port=P dbname=D user=U", only those that are set; "libpq defaults" when none is,
// "an unparseable conninfo" when libpq cannot parse it. Never the password.
std::string DescribeConninfo(const std::string& conninfo);

// `message` with every password written in `conninfo` (raw and as libpq decodes it) replaced
// by "***".
std::string RedactPasswords(std::string message, const std::string& conninfo);

}  // namespace allot
