#include "billing/zoneinfo.h"

#include <fstream>
#include <sstream>

namespace allot {

Result<TimeZone> LoadTimeZone(const std::string& name, const std::string& dir) {
  if (name == "UTC") return TimeZone::Utc();
  // A name, not a path: nothing outside the zoneinfo folder can be read through it.
  bool ok = !name.empty() && name[0] != '/' && name.find("..") == std::string::npos;
  for (char c : name) {
    ok &= (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
          c == '-' || c == '+';
  }
  if (!ok) return Err(InvalidArgument("time zone '" + name + "' is not an IANA name; expected one such as Europe/Berlin"));
  std::ifstream in(dir + "/" + name, std::ios::binary);
  if (!in) {
    return Err(InvalidArgument("time zone '" + name + "' is unknown: no " + dir + "/" + name +
                               "; expected an IANA name such as Europe/Berlin (package tzdata)"));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  return TimeZone::FromTzif(name, bytes.str());
}

}  // namespace allot
