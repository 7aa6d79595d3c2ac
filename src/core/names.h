// The one rule for names that people choose and other people see: jobs, tenant path segments,
// nodes, volumes, budgets (tenant paths), principals. A name is 1 to kMaxNameBytes of
// [A-Za-z0-9._-] starting with a letter or digit: it is never "." or "..", holds no '/', no
// space, no control character and nothing a shell, a URL path or a terminal reads specially,
// so it can be addressed in a URL, used as a file name and printed as it is.
//
// Every entry point (the API, job and scenario files, allotd's config, the agent protocol)
// checks what it is given here. The state does not: a journal written before the rule must
// still replay.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

inline constexpr size_t kMaxNameBytes = 63;
// A tenant path: at most this many bytes in all ("org/team/project").
inline constexpr size_t kMaxTenantPathBytes = 255;
// A principal may be an e-mail address: at most this many bytes.
inline constexpr size_t kMaxPrincipalBytes = 254;

// What the rules expect, for messages that list it.
inline constexpr const char* kNameExpected =
    "1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit";

bool IsValidName(std::string_view s);

// "<field>: '<value, escaped>' is not valid; expected …" naming what is wrong, or Ok.
Status CheckName(std::string_view field, std::string_view value);
// A tenant path: one or more names joined by single '/' ("org/team"); no empty, "." or ".."
// segment.
Status CheckTenantPath(std::string_view field, std::string_view value);
// A token's principal: a name, or NAME@NAME for an e-mail address (a "+" allowed before the @).
Status CheckPrincipal(std::string_view field, std::string_view value);

// `s` safe to print on a terminal or in a message: printable ASCII and well-formed UTF-8 text
// are kept; control characters (C0, DEL, C1), bidirectional overrides and bytes that are not
// UTF-8 become \xNN per byte ("\x1b[31m" for an ESC sequence). At most `max_bytes` of `s` are
// shown, then "…(N bytes)".
std::string EscapeText(std::string_view s, size_t max_bytes = 200);

}  // namespace allot
