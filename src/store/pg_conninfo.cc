#include "store/pg_conninfo.h"

#include <libpq-fe.h>

#include <cctype>
#include <vector>

namespace allot {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Passwords as written in `conninfo`, before any decoding: libpq quotes the raw text when it
// refuses a percent-encoding, so the raw form must go too. Scans rather than parses, so that a
// string libpq cannot parse is still scrubbed.
std::vector<std::string> RawPasswords(const std::string& conninfo) {
  std::vector<std::string> out;
  if (StartsWith(conninfo, "postgresql://") || StartsWith(conninfo, "postgres://")) {
    size_t start = conninfo.find("://") + 3;
    size_t end = conninfo.find_first_of("/?", start);
    std::string authority = conninfo.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t at = authority.rfind('@');
    if (at != std::string::npos) {
      size_t colon = authority.find(':');
      if (colon < at) out.push_back(authority.substr(colon + 1, at - colon - 1));
    }
    // ?password=... (and any other parameter spelled so) in the query.
    size_t q = conninfo.find('?');
    while (q != std::string::npos) {
      size_t amp = conninfo.find('&', q + 1);
      std::string param = conninfo.substr(q + 1, amp == std::string::npos ? std::string::npos : amp - q - 1);
      if (StartsWith(param, "password=")) out.push_back(param.substr(9));
      q = amp;
    }
    return out;
  }
  // key = value pairs; a value is 'quoted' (with \ escapes) or runs to the next space.
  for (size_t i = conninfo.find("password"); i != std::string::npos; i = conninfo.find("password", i + 1)) {
    if (i > 0 && !std::isspace(static_cast<unsigned char>(conninfo[i - 1]))) continue;
    size_t j = i + 8;
    while (j < conninfo.size() && std::isspace(static_cast<unsigned char>(conninfo[j]))) ++j;
    if (j >= conninfo.size() || conninfo[j] != '=') continue;
    ++j;
    while (j < conninfo.size() && std::isspace(static_cast<unsigned char>(conninfo[j]))) ++j;
    size_t begin = j;
    if (j < conninfo.size() && conninfo[j] == '\'') {
      for (++j; j < conninfo.size() && conninfo[j] != '\''; ++j) {
        if (conninfo[j] == '\\') ++j;
      }
      out.push_back(conninfo.substr(begin + 1, j - begin - 1));
    } else {
      while (j < conninfo.size() && !std::isspace(static_cast<unsigned char>(conninfo[j]))) j += conninfo[j] == '\\' ? 2 : 1;
      out.push_back(conninfo.substr(begin, j - begin));
    }
  }
  return out;
}

}  // namespace

std::string DescribeConninfo(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &err);
  if (!options) {
    PQfreemem(err);  // may quote the password; see RedactPasswords
    return "an unparseable conninfo";
  }
  std::string out;
  for (const char* key : {"host", "hostaddr", "port", "dbname", "user"}) {
    for (PQconninfoOption* o = options; o->keyword; ++o) {
      if (std::string(o->keyword) == key && o->val && *o->val) {
        out += (out.empty() ? "" : " ") + std::string(key) + "=" + o->val;
      }
    }
  }
  PQconninfoFree(options);
  return out.empty() ? "libpq defaults" : out;
}

std::string RedactPasswords(std::string message, const std::string& conninfo) {
  std::vector<std::string> secrets = RawPasswords(conninfo);
  if (PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), nullptr)) {
    for (PQconninfoOption* o = options; o->keyword; ++o) {
      if (std::string(o->keyword) == "password" && o->val) secrets.emplace_back(o->val);
    }
    PQconninfoFree(options);
  }
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t i = message.find(secret); i != std::string::npos; i = message.find(secret, i + 3)) {
      message.replace(i, secret.size(), "***");
    }
  }
  return message;
}

}  // namespace allot
