#include "allotd/data_dir.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace allot {
namespace {

namespace fs = std::filesystem;

std::string Octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// Takes the group and other bits off `path` (not a link). Returns whether it changed anything.
Result<bool> Tighten(const fs::path& path, std::vector<std::string>* lines) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;  // gone meanwhile (a log rotated away)
    return Err(Unavailable(path.string() + ": " + std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode) || (st.st_mode & 077) == 0) return false;
  mode_t want = st.st_mode & 07700;
  if (::chmod(path.c_str(), want) != 0) {
    return Err(FailedPrecondition(path.string() + ": mode " + Octal(st.st_mode) +
                                  " lets other users read allotd's data and cannot be tightened (" + std::strerror(errno) +
                                  "); run allotd as the directory's owner, or chmod -R go= it"));
  }
  if (lines) lines->push_back(path.string() + ": mode " + Octal(st.st_mode) + " -> " + Octal(want));
  return true;
}

}  // namespace

Result<std::vector<std::string>> MakeDataDirPrivate(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return Err(Unavailable("--data: cannot create '" + dir + "': " + ec.message()));
  }
  std::vector<std::string> lines;
  auto top = Tighten(dir, &lines);
  if (!top) return Err(top.error());
  size_t deeper = 0;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) return Err(Unavailable("--data: cannot list '" + dir + "': " + ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) return Err(Unavailable("--data: cannot list '" + dir + "': " + ec.message()));
    auto changed = Tighten(it->path(), it.depth() == 0 ? &lines : nullptr);
    if (!changed) return Err(changed.error());
    if (*changed && it.depth() > 0) ++deeper;
  }
  if (deeper > 0) lines.push_back(std::to_string(deeper) + " more entries below " + dir + " made owner-only");
  return lines;
}

std::vector<std::string> SignsOfUse(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path d(dir);
  for (const char* name : {"admin-token", "ledger-key", "cluster-key"}) {
    if (fs::exists(d / name, ec)) found.push_back(name);
  }
  if (fs::is_directory(d / "logs", ec) && !fs::is_empty(d / "logs", ec)) found.push_back("logs/");
  if (!fs::exists(d / "journal.db", ec) && fs::exists(d / "journal.db-wal", ec)) found.push_back("journal.db-wal");
  return found;
}

Result<std::string> LoadOrCreateClusterKey(const std::string& dir) {
  constexpr size_t kBytes = 32;
  const std::string file = (fs::path(dir) / "cluster-key").string();
  auto parse = [&](const std::string& hex) -> Result<std::string> {
    std::string key;
    for (size_t i = 0; hex.size() == 2 * kBytes && i < hex.size(); i += 2) {
      unsigned value = 0;
      if (std::sscanf(hex.c_str() + i, "%2x", &value) != 1 || !std::isxdigit(static_cast<unsigned char>(hex[i])) ||
          !std::isxdigit(static_cast<unsigned char>(hex[i + 1])))
        break;
      key += static_cast<char>(value);
    }
    if (key.size() != kBytes)
      return Err(FailedPrecondition(file + ": not 64 hex digits; restore it from a backup (running dedicated clusters' "
                                           "munge keys are derived from it), or remove it while none runs"));
    return key;
  };
  if (std::ifstream in(file); in) {
    std::string hex;
    std::getline(in, hex);
    return parse(hex);
  }
  unsigned char raw[kBytes];
  for (size_t done = 0; done < kBytes;) {
    ssize_t got = ::getrandom(raw + done, kBytes - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Err(Unavailable("getrandom for " + file + ": " + std::strerror(errno)));
    done += static_cast<size_t>(got);
  }
  std::string line;
  for (unsigned char c : raw) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", c);
    line += two;
  }
  line += "\n";
  // Created 0600 from the start, as the admin token; O_EXCL: never over another's key.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) return Err(Unavailable("cannot write " + file + ": " + std::strerror(error)));
  return parse(line.substr(0, 2 * kBytes));
}

Status CheckFreshStart(const FreshStart& f) {
  if (f.events > 0) {
    if (!f.init_fresh) return Status::Ok();
    return FailedPrecondition("--init-fresh: the journal " + f.journal + " holds " + std::to_string(f.events) +
                              " events; --init-fresh only starts an empty journal and never discards one (drop it to go on "
                              "with the state it holds)");
  }
  if (f.signs.empty() || f.init_fresh) return Status::Ok();
  std::string found;
  for (const std::string& s : f.signs) found += (found.empty() ? "" : ", ") + s;
  return FailedPrecondition("the journal " + f.journal + (f.journal_missing ? " is missing" : " holds no events") +
                            ", but the data directory " + f.data_dir + " has been used before (found " + found +
                            "): starting would serve an empty state and replace admin-token. Restore the journal from a "
                            "backup (or name the --store it is in); to start an empty journal here on purpose, pass "
                            "--init-fresh");
}

}  // namespace allot
