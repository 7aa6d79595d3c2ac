#include "agent/run/reachable.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace allot {

std::optional<Unsearchable> FirstUnsearchable(const std::string& path, uid_t uid, gid_t gid) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) real = fs::absolute(path).lexically_normal();
  fs::path dir = "/";
  auto check = [&](const fs::path& d) -> std::optional<Unsearchable> {
    struct stat st {};
    if (::stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
    mode_t bit = st.st_uid == uid ? S_IXUSR : st.st_gid == gid ? S_IXGRP : S_IXOTH;
    if (st.st_mode & bit) return std::nullopt;
    return Unsearchable{d.string(), static_cast<mode_t>(st.st_mode & 07777), st.st_uid, st.st_gid};
  };
  if (auto u = check(dir)) return u;
  for (const fs::path& part : real.relative_path()) {
    dir /= part;
    if (auto u = check(dir)) return u;
  }
  return std::nullopt;
}

Status CheckTaskUidReaches(const std::string& flag, const std::string& shown, const std::string& path, uid_t uid) {
  auto blocked = FirstUnsearchable(path, uid, uid);
  if (!blocked) return Status::Ok();
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(blocked->mode));
  return FailedPrecondition(flag + " " + shown + ": tasks run as uid " + std::to_string(uid) + ", which cannot enter " +
                            blocked->dir + " (mode " + mode + ", owner " + std::to_string(blocked->owner) + ")");
}

}  // namespace allot
