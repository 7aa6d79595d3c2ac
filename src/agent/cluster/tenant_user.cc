#include "agent/cluster/tenant_user.h"

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <optional>
#include <type_traits>
#include <vector>

#include "agent/run/command.h"

namespace allot {
namespace {

struct Entry {
  std::string name;
  uint32_t id = 0;   // uid or gid
  gid_t gid = 0;     // a user's primary group
};

// getpw*_r / getgr*_r with a buffer that grows, as glibc asks (ERANGE).
template <class Record, class Lookup>
std::optional<Entry> Find(Lookup lookup, uint32_t Record::*id) {
  std::vector<char> buf(4096);
  for (;;) {
    Record record{};
    Record* found = nullptr;
    int err = lookup(&record, buf.data(), buf.size(), &found);
    if (err == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (err != 0 || found == nullptr) return std::nullopt;
    Entry e;
    if constexpr (std::is_same_v<Record, passwd>) {
      e.name = found->pw_name;
      e.gid = found->pw_gid;
    } else {
      e.name = found->gr_name;
    }
    e.id = found->*id;
    return e;
  }
}

std::optional<Entry> UserById(uid_t uid) {
  return Find<passwd>([&](passwd* r, char* b, size_t n, passwd** f) { return ::getpwuid_r(uid, r, b, n, f); },
                      &passwd::pw_uid);
}
std::optional<Entry> UserByName(const std::string& name) {
  return Find<passwd>(
      [&](passwd* r, char* b, size_t n, passwd** f) { return ::getpwnam_r(name.c_str(), r, b, n, f); },
      &passwd::pw_uid);
}
std::optional<Entry> GroupById(gid_t gid) {
  return Find<group>([&](group* r, char* b, size_t n, group** f) { return ::getgrgid_r(gid, r, b, n, f); },
                     &group::gr_gid);
}
std::optional<Entry> GroupByName(const std::string& name) {
  return Find<group>(
      [&](group* r, char* b, size_t n, group** f) { return ::getgrnam_r(name.c_str(), r, b, n, f); },
      &group::gr_gid);
}

Status Run(std::vector<std::string> argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_ms = 30000;  // useradd waits for the passwd lock another tool may hold
  auto r = RunCommand(spec);
  if (!r) return r.error();
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return Unavailable(spec.argv[0] + " " + spec.argv.back() + " " + DescribeEnd(*r, spec.timeout_ms) +
                       "; output: " + r->output_tail);
  return Status::Ok();
}

}  // namespace

std::string TenantUserName(uint32_t uid) { return "allot-" + std::to_string(uid); }

bool IsValidTenantUserName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

Status CheckTenantUser(const std::string& name, uid_t uid, gid_t gid) {
  auto entry = UserByName(name);
  if (!entry)
    return FailedPrecondition("user '" + name + "': no passwd entry on this node; expected one with uid " +
                              std::to_string(uid) + " (EnsureTenantUser makes it)");
  if (entry->id != uid || entry->gid != gid)
    return FailedPrecondition("user '" + name + "': has uid " + std::to_string(entry->id) + " gid " +
                              std::to_string(entry->gid) + "; expected uid " + std::to_string(uid) + " gid " +
                              std::to_string(gid));
  return Status::Ok();
}

Status EnsureTenantUser(const TenantUser& user) {
  if (!IsValidTenantUserName(user.name))
    return InvalidArgument("user '" + user.name + "': expected 1 to 32 of a-z 0-9 _ -, starting with a-z or _");
  if (user.uid == 0 || user.gid == 0)
    return InvalidArgument("user '" + user.name + "': uid " + std::to_string(user.uid) + " gid " +
                           std::to_string(user.gid) + ": expected a tenant's, never root's");
  if (user.home.empty() || user.home[0] != '/' || user.shell.empty() || user.shell[0] != '/')
    return InvalidArgument("user '" + user.name + "': home '" + user.home + "' and shell '" + user.shell +
                           "': expected absolute paths");
  const std::string who = "user '" + user.name + "' (uid " + std::to_string(user.uid) + ")";
  auto by_uid = UserById(user.uid);
  auto by_name = UserByName(user.name);
  if (by_uid && by_uid->name != user.name)
    return FailedPrecondition(who + ": uid " + std::to_string(user.uid) + " already belongs to '" + by_uid->name +
                              "'; expected it to be free or this user's");
  if (by_name && (by_name->id != user.uid || by_name->gid != user.gid))
    return FailedPrecondition(who + ": '" + user.name + "' already exists with uid " + std::to_string(by_name->id) +
                              " gid " + std::to_string(by_name->gid) + "; expected uid " + std::to_string(user.uid) +
                              " gid " + std::to_string(user.gid));
  if (by_name) return Status::Ok();

  if (!GroupById(user.gid)) {
    if (auto named = GroupByName(user.name))
      return FailedPrecondition(who + ": group '" + user.name + "' already exists with gid " +
                                std::to_string(named->id) + "; expected gid " + std::to_string(user.gid));
    if (Status s = Run({"groupadd", "--system", "--gid", std::to_string(user.gid), user.name}); !s.ok()) return s;
  }
  return Run({"useradd", "--system", "--no-create-home", "--uid", std::to_string(user.uid), "--gid",
              std::to_string(user.gid), "--home-dir", user.home, "--shell", user.shell, "--password", "*",
              "--comment", "allot tenant", user.name});
}

Status RemoveTenantUser(const std::string& name) {
  if (!IsValidTenantUserName(name)) return InvalidArgument("user '" + name + "': not a user name useradd makes");
  if (UserByName(name))
    if (Status s = Run({"userdel", name}); !s.ok()) return s;
  // Debian's userdel takes the user's own group along; another system's may not.
  if (GroupByName(name))
    if (Status s = Run({"groupdel", name}); !s.ok()) return s;
  return Status::Ok();
}

}  // namespace allot
