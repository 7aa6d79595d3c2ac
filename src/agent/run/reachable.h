// Whether the tenants' uids can reach the agent's directories. The agent (root) makes them, but a
// task runs as its tenant's uid, and bubblewrap binds the task's directories as that uid: a work
// directory below a 0700 directory (mkdtemp's, a home directory) would let the agent start and
// register, then fail every task with "Permission denied". The agent checks at start-up instead.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "core/status.h"

namespace allot {

struct Unsearchable {
  std::string dir;
  mode_t mode = 0;   // permission bits
  uid_t owner = 0;
  gid_t group = 0;
};

// The first directory on the way from "/" to `path` (symlinks resolved; `path` included) that
// `uid`, with primary group `gid` and no other groups, may not search: by the owner's bits when it
// owns it, else the group's when `gid` is its group, else the others' (POSIX; ACLs not read).
// Nothing when every existing one can be entered.
std::optional<Unsearchable> FirstUnsearchable(const std::string& path, uid_t uid, gid_t gid);

// FailedPrecondition naming `flag`, the directory, its mode and owner, and the uid, e.g.
// "--work-dir /tmp/x.AbC/agent: tasks run as uid 200000, which cannot enter /tmp/x.AbC (mode
// 0700, owner 0)"; Ok when `uid` reaches `path`. `shown` is the path as the operator gave it.
Status CheckTaskUidReaches(const std::string& flag, const std::string& shown, const std::string& path, uid_t uid);

}  // namespace allot
