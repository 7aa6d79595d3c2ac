#include "billing/zoneinfo.h"

#include <date/tz.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>


namespace allot {
namespace {

// The POSIX rule a TZif file (version 2 or later) ends with, between its last two newlines
// ("CET-1CEST,M3.5.0,M10.5.0/3"), or "" when there is none.
std::string FooterRule(const std::string& name) {
  std::ifstream in(std::string(kZoneinfoDir) + "/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string s = bytes.str();
  if (s.size() < 6 || s.compare(0, 4, "TZif") != 0 || s[4] < '2' || s.back() != '\n') return "";
  const size_t start = s.rfind('\n', s.size() - 2);
  return start == std::string::npos ? "" : s.substr(start + 1, s.size() - start - 2);
}

}  // namespace

Result<TimeZone> LoadTimeZone(const std::string& name) {
  if (name == "UTC") return TimeZone::Utc();
  // A name, not a path: nothing outside the tz database can be read through it.
  bool ok = !name.empty() && name[0] != '/' && name.find("..") == std::string::npos;
  for (char c : name) {
    ok &= (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
          c == '-' || c == '+';
  }
  if (!ok) return Err(InvalidArgument("time zone '" + name + "' is not an IANA name; expected one such as Europe/Berlin"));
  try {
    const date::time_zone* zone = date::locate_zone(name);
    // date/tz reads a zone's table at its first use: here, so metering/ never reads a file.
    (void)zone->get_info(date::sys_seconds{});
    return TimeZone::Of(zone, FooterRule(name));
  } catch (const std::exception& e) {
    return Err(InvalidArgument("time zone '" + name + "' is unknown (" + e.what() + "); expected an IANA name such as " +
                               "Europe/Berlin from " + kZoneinfoDir + " (package tzdata)"));
  }
}

}  // namespace allot
