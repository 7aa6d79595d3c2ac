// A passwd and group entry for a tenant's uid on a node. Tasks need none: the runner sets a bare
// uid from agent/run/tenant_uids.h (200000 and up) and nothing looks it up. sshd does: it finds
// the user it logs in by name (getpwnam) for its uid, shell and home, and answers "Invalid user"
// when there is none. So before a tenant's sshd starts (tenant_sshd.h), the agent gives the uid an
// account of its own: a system account (no aging, no mail spool), no home directory made, the
// password "*" (nothing matches it, and sshd does not take it for a locked account), a group of
// the same name and number. It is made with the distribution's groupadd and useradd, which lock
// /etc/passwd, /etc/group and /etc/shadow as every other tool on the node expects; an entry from
// NSS (LDAP, sssd) with the same name, uid and gid is taken as it is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/status.h"

namespace allot {

struct TenantUser {
  std::string name;               // TenantUserName(uid) unless the operator names it otherwise
  uid_t uid = 0;
  gid_t gid = 0;                  // the runner's tenants have gid == uid
  std::string home = "/";         // not made; sessions start there
  std::string shell = "/bin/bash";
};

// "allot-200000": a valid user name for any uid, unique as the uid is.
std::string TenantUserName(uint32_t uid);

// Pure: 1 to 32 of a-z 0-9 _ -, starting with a-z or _ (Debian's useradd NAME_REGEX, less the '$'
// of machine accounts). Such a name is also a literal, not a pattern, in sshd's AllowUsers.
bool IsValidTenantUserName(const std::string& name);

// Ok when `name` has a passwd entry with this uid and primary gid; FailedPrecondition saying what
// it has instead, or that there is none.
Status CheckTenantUser(const std::string& name, uid_t uid, gid_t gid);

// Ok at once when `user.name` already has this uid and primary gid (an earlier booking made it).
// Otherwise makes the group (when no group has the gid) and the user. FailedPrecondition naming
// the clash when the uid belongs to another name, the name to another uid or gid, or the group's
// name to another gid; InvalidArgument for a name useradd would refuse, uid or gid 0, or a home or
// shell that is not absolute; Unavailable, with the tool's output, when groupadd or useradd fails.
// REQUIRES: root.
Status EnsureTenantUser(const TenantUser& user);

// Removes the user, and its group when one of the same name is left; Ok when there is neither.
// userdel refuses while a process runs as the user. REQUIRES: root.
Status RemoveTenantUser(const std::string& name);

}  // namespace allot
