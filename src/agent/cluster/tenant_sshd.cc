#include "agent/cluster/tenant_sshd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include "agent/cluster/tenant_user.h"
#include "agent/run/command.h"
#include "agent/run/proc_tree.h"
#include "agent/run/reachable.h"
#include "agent/run/spawn.h"
#include "agent/run/sys_files.h"
#include "core/names.h"
#include "wire/ssh_public_key.h"

namespace allot {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHostKey = "ssh_host_ed25519_key";
constexpr const char* kPidRecord = "sshd.pid";

// A path sshd_config can hold unquoted: no spaces, quotes or '#', and no '%' (sshd expands %u, %h,
// … in AuthorizedKeysFile).
bool SafeDir(const std::string& dir) {
  if (dir.size() < 2 || dir[0] != '/' || dir.back() == '/' || dir.find("//") != std::string::npos) return false;
  for (char c : dir)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
          c == '_' || c == '-'))
      return false;
  for (const auto& part : fs::path(dir))
    if (part == "." || part == "..") return false;
  return true;
}

// The address to connect to when checking that sshd listens: a wildcard's loopback.
bool Connects(const std::string& listen, int port) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, listen == "0.0.0.0" ? "127.0.0.1" : listen.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, listen == "::" ? "::1" : listen.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v6;
  } else {
    return false;
  }
  int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0;
  ::close(fd);
  return ok;
}

// Writes `text` to a new file beside `path`, owned and moded before it is renamed over `path`,
// so sshd reads the old or the new file whole, never one it may not open.
Status WriteOwned(const std::string& path, const std::string& text, mode_t mode, uid_t uid, gid_t gid) {
  const std::string tmp = path + ".new";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("creating " + tmp + ": " + ErrnoText(errno));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fchown(fd, uid, gid) == 0 && ::fchmod(fd, mode) == 0;
  int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    return Unavailable("writing " + path + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

std::string Tail(const std::string& path, size_t bytes) {
  auto text = ReadText(path);
  if (!text || text->empty()) return "(empty)";
  return EscapeText(text->size() > bytes ? text->substr(text->size() - bytes) : *text, bytes);
}

// Running (not a zombie), by /proc/PID/stat's state.
bool Alive(pid_t pid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z' &&
         (*stat)[close + 2] != 'X';
}

// Whether `pid` is still the sshd a record names: that binary (or the one it replaced, after a
// package upgrade), run by that uid. A pid reused since by anything else is left alone.
bool IsSshdOf(pid_t pid, const std::string& binary, uid_t uid) {
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
  if (ec) return false;
  const std::string want = fs::weakly_canonical(binary, ec).string();
  if (exe != want && exe != want + " (deleted)") return false;
  struct stat st{};
  return ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0 && st.st_uid == uid;
}

// Stops every process of the trees under `roots`, repeating until no new one appears (a stopped
// process forks nothing more), then SIGKILLs them all. Returns what it killed.
std::set<pid_t> KillTrees(const std::vector<pid_t>& roots) {
  std::set<pid_t> stopped;
  for (int round = 0; round < 100; ++round) {
    bool more = false;
    for (pid_t root : roots) {
      std::vector<pid_t> tree = Descendants(root);
      tree.insert(tree.begin(), root);
      for (pid_t p : tree)
        if (stopped.insert(p).second) {
          ::kill(p, SIGSTOP);
          more = true;
        }
    }
    if (!more) break;
  }
  for (pid_t p : stopped) ::kill(p, SIGKILL);
  return stopped;
}

std::string DescribeWait(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

Result<std::string> KeysText(const std::vector<std::string>& keys) {
  if (keys.empty())
    return Err(InvalidArgument("authorized_keys: empty: expected at least one registered key (allot keys add)"));
  std::string text;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto key = ParseSshPublicKey(keys[i]);
    if (!key) return Err(InvalidArgument("authorized_keys[" + std::to_string(i) + "]: " + key.error().message()));
    text += key->Line() + "\n";
  }
  return text;
}

}  // namespace

Status CheckTenantSshdSpec(const TenantSshdSpec& s) {
  if (!SafeDir(s.dir))
    return InvalidArgument("dir '" + EscapeText(s.dir) +
                           "': expected an absolute path of A-Z a-z 0-9 / . _ - without '.' or '..' parts "
                           "(it is written into sshd_config)");
  if (s.uid == 0 || s.gid == 0)
    return InvalidArgument("uid " + std::to_string(s.uid) + " gid " + std::to_string(s.gid) +
                           ": expected the tenant's (the sshd never runs as root)");
  if (!IsValidTenantUserName(s.user))
    return InvalidArgument("user '" + EscapeText(s.user) +
                           "': expected 1 to 32 of a-z 0-9 _ -, starting with a-z or _");
  if (s.port < 1024 || s.port > 65535)
    return InvalidArgument("port " + std::to_string(s.port) +
                           ": expected 1024..65535 (the sshd runs as the tenant's uid, which binds no "
                           "privileged port)");
  unsigned char addr[sizeof(in6_addr)];
  if (::inet_pton(AF_INET, s.listen.c_str(), addr) != 1 && ::inet_pton(AF_INET6, s.listen.c_str(), addr) != 1)
    return InvalidArgument("listen '" + EscapeText(s.listen) + "': expected an IPv4 or IPv6 address");
  if (s.sshd_binary.empty() || s.sshd_binary[0] != '/')
    return InvalidArgument("sshd_binary '" + EscapeText(s.sshd_binary) +
                           "': expected an absolute path (sshd re-executes itself by it)");
  if (s.keygen_binary.empty()) return InvalidArgument("keygen_binary: empty: expected ssh-keygen's name or path");
  if (s.start_timeout_ms <= 0)
    return InvalidArgument("start_timeout_ms " + std::to_string(s.start_timeout_ms) + ": expected more than 0");
  auto keys = KeysText(s.authorized_keys);
  return keys ? Status::Ok() : keys.error();
}

std::string TenantSshdConfig(const TenantSshdSpec& s) {
  const std::string d = s.dir + "/";
  return "# allot-agent: one tenant's sshd for one booking (agent/cluster/tenant_sshd.h); rewritten at each start.\n"
         "Port " + std::to_string(s.port) + "\n"
         "ListenAddress " + s.listen + "\n"
         "HostKey " + d + kHostKey + "\n"
         "PidFile none\n"
         "AuthorizedKeysFile " + d + "authorized_keys\n"
         "AuthorizedKeysCommand none\n"
         "AuthorizedPrincipalsFile none\n"
         "AllowUsers " + s.user + "\n"
         "AuthenticationMethods publickey\n"
         "PubkeyAuthentication yes\n"
         "PasswordAuthentication no\n"
         "KbdInteractiveAuthentication no\n"
         "HostbasedAuthentication no\n"
         "GSSAPIAuthentication no\n"
         "PermitRootLogin no\n"
         "UsePAM no\n"
         // Every file sshd reads here is the agent's, written root-owned; sshd's own check of the
         // directories above would refuse an agent work directory under /tmp (mode 1777).
         "StrictModes no\n"
         "PermitUserEnvironment no\n"
         "X11Forwarding no\n"
         "AllowAgentForwarding no\n"
         // -L reaches only what a shell on the node reaches; no listener is opened on the node.
         "AllowTcpForwarding local\n"
         "AllowStreamLocalForwarding no\n"
         "GatewayPorts no\n"
         "PermitTunnel no\n"
         "PrintMotd no\n"
         "PrintLastLog no\n"
         "MaxAuthTries 3\n"
         "LoginGraceTime 30\n"
         "ClientAliveInterval 60\n"
         "ClientAliveCountMax 3\n"
         "Subsystem sftp internal-sftp\n";
}

bool TenantSshd::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;  // reaped: the pid is no longer ours to signal
  return false;
}

Status TenantSshd::WriteKeys(const std::vector<std::string>& keys) {
  auto text = KeysText(keys);
  if (!text) return text.error();
  return WriteOwned(KeysPath(), *text, 0640, 0, spec_.gid);
}

Status TenantSshd::SetAuthorizedKeys(const std::vector<std::string>& keys) {
  if (!Exists(ConfigPath())) return FailedPrecondition("no sshd started in " + spec_.dir);
  if (Status s = WriteKeys(keys); !s.ok()) return s;
  spec_.authorized_keys = keys;
  return Status::Ok();
}

Status TenantSshd::Prepare() {
  const std::string& dir = spec_.dir;
  auto blocked = FirstUnsearchable(dir, spec_.uid, spec_.gid);
  if (blocked) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(blocked->mode));
    return FailedPrecondition("dir " + dir + ": the sshd runs as uid " + std::to_string(spec_.uid) +
                              ", which cannot enter " + blocked->dir + " (mode " + mode + ", owner " +
                              std::to_string(blocked->owner) + ")");
  }
  const std::string key = dir + "/" + kHostKey;
  CommandSpec keygen;
  keygen.argv = {spec_.keygen_binary, "-q", "-t", "ed25519", "-N", "", "-C", "allot tenant sshd " + spec_.user,
                 "-f", key};
  auto made = RunCommand(keygen);
  if (!made) return made.error();
  if (made->timed_out || made->signal != 0 || made->exit_code != 0)
    return Unavailable("ssh-keygen " + DescribeEnd(*made, keygen.timeout_ms) + "; output: " + made->output_tail);
  if (::chown(key.c_str(), spec_.uid, spec_.gid) != 0 || ::chmod(key.c_str(), 0600) != 0)
    return Unavailable("giving " + key + " to uid " + std::to_string(spec_.uid) + ": " + ErrnoText(errno));
  if (Status s = WriteKeys(spec_.authorized_keys); !s.ok()) return s;
  return WriteOwned(ConfigPath(), TenantSshdConfig(spec_), 0644, 0, 0);
}

Status TenantSshd::WaitListening() {
  const std::string where = spec_.listen + " port " + std::to_string(spec_.port);
  const int64_t deadline = WallMillis() + spec_.start_timeout_ms;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Unavailable("sshd " + DescribeWait(status) + " before listening on " + where + "; its log: " +
                         Tail(LogPath(), 600));
    }
    // sshd says so once it has bound and listens; a connection alone could be another process's.
    auto log = ReadText(LogPath());
    if (log && log->find("Server listening on " + where + ".") != std::string::npos &&
        Connects(spec_.listen, spec_.port))
      return Status::Ok();
    if (WallMillis() > deadline)
      return Unavailable("sshd did not listen on " + where + " within " + std::to_string(spec_.start_timeout_ms) +
                         " ms; its log: " + Tail(LogPath(), 600));
    SleepMillis(20);
  }
}

Status TenantSshd::Start() {
  if (Status s = CheckTenantSshdSpec(spec_); !s.ok()) return s;
  if (pid_ > 0)
    return FailedPrecondition("sshd in " + spec_.dir + " is already started (pid " + std::to_string(pid_) + ")");
  if (Status s = CheckTenantUser(spec_.user, spec_.uid, spec_.gid); !s.ok()) return s;
  auto sshd = ResolveCommand(spec_.sshd_binary, kTaskPath);
  if (!sshd) return sshd.error();
  std::error_code ec;
  if (fs::symlink_status(spec_.dir, ec).type() != fs::file_type::not_found)
    return FailedPrecondition("dir " + spec_.dir + " exists: an earlier sshd's? Stop it first");
  fs::create_directories(fs::path(spec_.dir).parent_path(), ec);
  if (ec || ::mkdir(spec_.dir.c_str(), 0711) != 0 || ::chmod(spec_.dir.c_str(), 0711) != 0)
    return Unavailable("making " + spec_.dir + ": " + (ec ? ec.message() : ErrnoText(errno)));

  // From here a failure removes what was made.
  Status started = Prepare();
  if (started.ok()) {
    SpawnPlan plan;
    plan.argv = {*sshd, "-D", "-e", "-f", ConfigPath()};
    plan.env = {{"PATH", kTaskPath}, {"LANG", "C.UTF-8"}};
    plan.log_path = LogPath();
    plan.drop_ids = true;
    plan.uid = spec_.uid;
    plan.gid = spec_.gid;
    auto pid = Spawn(plan);
    if (!pid) {
      started = pid.error();
    } else {
      pid_ = *pid;
      started = ReplaceFile(spec_.dir + "/" + kPidRecord, std::to_string(pid_) + "\n", 0644);
      if (started.ok()) started = WaitListening();
    }
  }
  if (!started.ok()) (void)Stop();
  return started;
}

Status TenantSshd::Stop() {
  std::string problems;
  // 1. Revoke first: whatever fails below, no key logs in any more.
  if (::unlink(KeysPath().c_str()) != 0 && errno != ENOENT)
    problems += "removing " + KeysPath() + ": " + ErrnoText(errno) + "; ";
  // 2. The listener and everything below it: per-connection sshds and their sessions.
  std::vector<pid_t> roots;
  if (pid_ > 0) {
    roots.push_back(pid_);
  } else if (auto record = ReadText(spec_.dir + "/" + kPidRecord)) {
    pid_t recorded = static_cast<pid_t>(std::atoi(record->c_str()));
    if (recorded > 0 && IsSshdOf(recorded, spec_.sshd_binary, spec_.uid)) roots.push_back(recorded);
  }
  std::set<pid_t> killed = KillTrees(roots);
  if (pid_ > 0) {
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // A recorded listener is not our child: wait for it (and the rest) to be gone, so the port is
  // closed when Stop returns.
  for (int64_t deadline = WallMillis() + 5000; WallMillis() < deadline;) {
    bool any = false;
    for (pid_t p : killed) any = any || Alive(p);
    if (!any) break;
    SleepMillis(10);
  }
  // 3. The directory: host key, config, log, record.
  std::error_code ec;
  fs::remove_all(spec_.dir, ec);
  if (ec) problems += "removing " + spec_.dir + ": " + ec.message() + "; ";
  if (!problems.empty())
    return Unavailable("stopping the sshd in " + spec_.dir + ": " + problems.substr(0, problems.size() - 2));
  return Status::Ok();
}

}  // namespace allot
