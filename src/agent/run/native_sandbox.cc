#include "agent/run/native_sandbox.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace allot {
namespace {

// Codes of the steps that are not in the step list (EnterNativeSandbox's failure codes are
// a step's index, or one of these).
enum : int {
  kPrivate = 100000,  // making the namespace's mounts private
  kTooManyBinds,
  kReadOnlyRoot,
  kCgroupNamespace,
  kPivot,
  kLoopback,
  kNoNewPrivs,
  kBoundingSet,
};

// The child runs on a stack AddressSanitizer never saw (spawn.cc): not instrumented.
#define ALLOT_CHILD_CODE __attribute__((no_sanitize_address))

std::string Under(const std::string& root, const std::string& path) { return root + path; }

bool IsDir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

ALLOT_CHILD_CODE bool Exists(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0;
}

// mkdir -p of `path`'s parents (and of `path` itself when `self`), on a copy in `buf`.
ALLOT_CHILD_CODE int MakeParents(const char* path, bool self, int mode) {
  char buf[4096];
  const size_t n = ::strlen(path);
  if (n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  ::memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && buf[i] != '/') continue;
    if (i == n && !self) break;
    const char saved = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, static_cast<mode_t>(mode)) != 0 && errno != EEXIST) return -1;
    buf[i] = saved;
  }
  return 0;
}

ALLOT_CHILD_CODE int SetAttr(const char* path, uint64_t set, bool recursive) {
  struct mount_attr attr {};
  attr.attr_set = set;
  return static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr));
}

ALLOT_CHILD_CODE uint64_t BindAttr(const MountStep& s) {
  uint64_t set = MOUNT_ATTR_NOSUID;
  if (s.read_only) set |= MOUNT_ATTR_RDONLY;
  if (!s.devices) set |= MOUNT_ATTR_NODEV;
  return set;
}

// A detached copy of the host's `source` tree (open_tree), with the step's flags set; -1 with
// errno on failure.
ALLOT_CHILD_CODE int TakeTree(const MountStep& s) {
  const int fd = static_cast<int>(
      ::syscall(SYS_open_tree, AT_FDCWD, s.source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
  if (fd < 0) return -1;
  struct mount_attr attr {};
  attr.attr_set = BindAttr(s);
  if (::syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// `tree`: the bind's detached copy (TakeTree), or -1 for one made in place.
ALLOT_CHILD_CODE int RunStep(const MountStep& s, int tree) {
  const char* target = s.target.c_str();
  switch (s.kind) {
    case MountStep::Kind::kBind: {
      if (!s.in_place) {
        const int r = static_cast<int>(::syscall(SYS_move_mount, tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
        const int err = errno;
        ::close(tree);
        errno = err;
        return r;
      }
      if (s.optional && !Exists(s.source.c_str())) return 0;
      if (::mount(s.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
      return SetAttr(target, BindAttr(s), true);
    }
    case MountStep::Kind::kTmpfs:
      return ::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, s.source.c_str());
    case MountStep::Kind::kProc:
      return ::mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    case MountStep::Kind::kDevpts:
      return ::mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620");
    case MountStep::Kind::kMkdir:
      return MakeParents(target, true, s.mode);
    case MountStep::Kind::kFile: {
      if (MakeParents(target, false, 0755) != 0) return -1;
      if (Exists(target)) return 0;
      const int fd = ::open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
      if (fd < 0) return errno == EEXIST ? 0 : -1;
      ::close(fd);
      return 0;
    }
    case MountStep::Kind::kSymlink:
      if (MakeParents(target, false, 0755) != 0) return -1;
      return ::symlink(s.source.c_str(), target) == 0 || errno == EEXIST ? 0 : -1;
  }
  errno = EINVAL;
  return -1;
}

ALLOT_CHILD_CODE int LoopbackUp() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct ifreq req {};
  ::memcpy(req.ifr_name, "lo", 3);
  int r = ::ioctl(fd, SIOCGIFFLAGS, &req);
  if (r == 0) {
    req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
    r = ::ioctl(fd, SIOCSIFFLAGS, &req);
  }
  const int err = errno;
  ::close(fd);
  errno = err;
  return r;
}

}  // namespace

int LastCapability() {
  static const int last = [] {
    std::ifstream in("/proc/sys/kernel/cap_last_cap");
    int n = 0;
    return in >> n && n > 0 && n < 64 ? n : CAP_LAST_CAP;
  }();
  return last;
}

const std::string& NativeSandboxHostLacks() {
  static const std::string lacks = [] {
    // Each called with a descriptor that is not one: EBADF where the call exists, ENOSYS where not.
    struct mount_attr attr {};
    if (::syscall(SYS_mount_setattr, -1, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 && errno == ENOSYS)
      return std::string("mount_setattr (Linux 5.12)");
    if (::syscall(SYS_open_tree, -1, "", AT_EMPTY_PATH) < 0 && errno == ENOSYS) return std::string("open_tree (Linux 5.2)");
    if (::syscall(SYS_move_mount, -1, "", -1, "", 0) != 0 && errno == ENOSYS) return std::string("move_mount (Linux 5.2)");
    // The calls exist; whether this process may make them (root without CAP_SYS_ADMIN in a
    // container, a seccomp filter or an LSM may refuse): a child tries the first of each kind
    // in a mount namespace of its own, and says which failed in its exit code.
    const pid_t pid = ::fork();
    if (pid < 0) return "a trial of the set-up (fork: " + std::string(std::strerror(errno)) + ")";
    if (pid == 0) {
      if (::unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) != 0) ::_exit(1);
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(2);
      if (::syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE) < 0) ::_exit(3);
      if (SetAttr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true) != 0) ::_exit(4);
      ::_exit(0);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::string();
    const int step = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    static const char* const kWhat[] = {"a trial of the set-up (killed)", "the permission to make namespaces",
                                        "the permission to make its mounts private", "the permission to take a mount tree",
                                        "the permission to make a mount read-only"};
    return std::string(kWhat[step >= 1 && step <= 4 ? step : 0]) + " (a container without CAP_SYS_ADMIN, seccomp or an LSM?)";
  }();
  return lacks;
}

NativeSandbox NativeSandboxPlan(const SandboxSpec& spec, const std::string& stage, bool host_proc_driver) {
  using K = MountStep::Kind;
  NativeSandbox n;
  n.clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (spec.network ? 0 : CLONE_NEWNET);
  n.loopback = !spec.network;
  n.read_only_root = true;
  n.cap_last = LastCapability();
  std::vector<MountStep>& s = n.steps;
  auto bind = [&](const std::string& source, const std::string& target, bool read_only, bool devices) {
    // A device node's mount point is a file; only other sources are looked at (once per task each).
    s.push_back({.kind = !devices && IsDir(source) ? K::kMkdir : K::kFile, .target = target});
    s.push_back({.kind = K::kBind, .source = source, .target = target, .read_only = read_only, .devices = devices});
  };
  std::string r;  // where the task's root is while it is set up
  if (!spec.root.empty()) {
    r = spec.root;
    n.pivot_to = r;
    s.push_back({.kind = K::kBind, .source = r, .target = r, .read_only = true, .in_place = true});
  } else if (!spec.host_root.empty()) {
    r = stage;
    n.pivot_to = r;
    s.push_back({.kind = K::kTmpfs, .source = "mode=0755", .target = r});
    for (const RootEntry& e : spec.host_root) {
      if (e.link_target.empty()) bind("/" + e.name, Under(r, "/" + e.name), true, false);
      else s.push_back({.kind = K::kSymlink, .source = e.link_target, .target = Under(r, "/" + e.name)});
    }
  }
  // The rest on paths inside the task's root: with a root of its own, they run after the pivot,
  // so nothing of the image or a volume (a symlink to /etc) can lead a step onto the host.
  n.root_steps = s.size();
  r.clear();
  // /dev: bwrap's --dev, in a tmpfs of root's (so /dev/shm is open to all, sticky).
  s.push_back({.kind = K::kMkdir, .target = Under(r, "/dev")});
  s.push_back({.kind = K::kTmpfs, .source = "mode=0755", .target = Under(r, "/dev")});
  for (const char* d : {"null", "zero", "full", "random", "urandom", "tty"})
    bind(std::string("/dev/") + d, Under(r, std::string("/dev/") + d), false, true);
  for (const auto& [name, link] : {std::pair<const char*, const char*>{"stdin", "/proc/self/fd/0"},
                                   {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
                                   {"fd", "/proc/self/fd"}, {"core", "/proc/kcore"}, {"ptmx", "pts/ptmx"}})
    s.push_back({.kind = K::kSymlink, .source = link, .target = Under(r, std::string("/dev/") + name)});
  s.push_back({.kind = K::kMkdir, .target = Under(r, "/dev/pts")});
  s.push_back({.kind = K::kDevpts, .target = Under(r, "/dev/pts")});
  s.push_back({.kind = K::kMkdir, .target = Under(r, "/dev/shm"), .mode = 01777});
  for (const DeviceNode& d : spec.devices) bind(d.host_path, Under(r, d.sandbox_path), false, true);
  if (spec.shm_size_mib > 0)
    s.push_back({.kind = K::kTmpfs, .source = "mode=1777,size=" + std::to_string(spec.shm_size_mib * 1024 * 1024),
                 .target = Under(r, "/dev/shm")});
  s.push_back({.kind = K::kMkdir, .target = Under(r, "/proc")});
  s.push_back({.kind = K::kProc, .target = Under(r, "/proc")});
  // As bwrap: what would let a task reconfigure the kernel, read-only (it has no capability to
  // write there anyway).
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"})
    s.push_back({.kind = K::kBind, .source = Under(r, p), .target = Under(r, p), .read_only = true, .optional = true,
                 .in_place = true});
  if (host_proc_driver) {
    s.push_back({.kind = K::kTmpfs, .source = "mode=0755", .target = Under(r, "/proc/driver")});
    for (const auto& [host, inside] : spec.proc_driver) bind(host, Under(r, inside), true, false);
  }
  s.push_back({.kind = K::kMkdir, .target = Under(r, "/tmp")});
  s.push_back({.kind = K::kTmpfs, .source = "mode=1777", .target = Under(r, "/tmp")});
  // Later mounts stack on earlier ones: hide the roots first, then bind this task's dirs back.
  if (!spec.work_root.empty()) {
    s.push_back({.kind = K::kMkdir, .target = Under(r, spec.work_root)});
    s.push_back({.kind = K::kTmpfs, .source = "mode=0755", .target = Under(r, spec.work_root)});
  }
  for (const std::string& root : spec.hidden_roots) {
    s.push_back({.kind = K::kMkdir, .target = Under(r, root)});
    s.push_back({.kind = K::kTmpfs, .source = "mode=0755", .target = Under(r, root)});
  }
  bind(spec.work_dir, Under(r, spec.work_dir), false, false);
  if (!spec.checkpoint_dir.empty() && spec.checkpoint_dir != spec.work_dir)
    bind(spec.checkpoint_dir, Under(r, spec.checkpoint_dir), false, false);
  for (const std::string& d : spec.read_only_dirs) bind(d, Under(r, d), true, false);
  for (const auto& [host, inside] : spec.read_only_binds) bind(host, Under(r, inside), true, false);
  for (const auto& [host, inside] : spec.writable_binds) bind(host, Under(r, inside), false, false);
  return n;
}

// The trees taken and not yet mounted, [from, to), closed keeping errno (a step's failure).
static ALLOT_CHILD_CODE void CloseTrees(const int* trees, size_t from, size_t to) {
  const int err = errno;
  for (size_t i = from; i < to; ++i)
    if (trees[i] >= 0) ::close(trees[i]);
  errno = err;
}

static ALLOT_CHILD_CODE int Enter(const NativeSandbox& n) {
  // Nothing mounted here reaches the host, nor anything the host mounts later this sandbox.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kPrivate;
  if (::unshare(CLONE_NEWCGROUP) != 0) return kCgroupNamespace;
  // Every host source taken first, while no step has covered its path and before the root is
  // made read-only (a copy keeps the flags of what it copied).
  int trees[kMaxNativeSandboxBinds];
  size_t taken = 0;
  for (size_t i = 0; i < n.steps.size(); ++i) {
    const MountStep& s = n.steps[i];
    if (s.kind != MountStep::Kind::kBind || s.in_place) continue;
    if (taken == kMaxNativeSandboxBinds) {
      CloseTrees(trees, 0, taken);
      errno = E2BIG;
      return kTooManyBinds;
    }
    trees[taken] = TakeTree(s);
    if (trees[taken] < 0) {
      CloseTrees(trees, 0, taken);
      return static_cast<int>(i);
    }
    ++taken;
  }
  if (n.read_only_root && SetAttr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true) != 0) {
    CloseTrees(trees, 0, taken);
    return kReadOnlyRoot;
  }
  size_t used = 0;
  bool pivoted = n.pivot_to.empty();
  for (size_t i = 0; i <= n.steps.size(); ++i) {
    if (!pivoted && i == n.root_steps) {
      // The new root on top of the old one, the old one then detached: nothing of it stays in
      // reach, and every later step resolves inside the new root.
      if (::chdir(n.pivot_to.c_str()) != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0 ||
          ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
        CloseTrees(trees, used, taken);
        return kPivot;
      }
      pivoted = true;
    }
    if (i == n.steps.size()) break;
    const MountStep& s = n.steps[i];
    const bool taken_tree = s.kind == MountStep::Kind::kBind && !s.in_place;
    if (RunStep(s, taken_tree ? trees[used] : -1) != 0) {
      CloseTrees(trees, taken_tree ? used + 1 : used, taken);
      return static_cast<int>(i);
    }
    if (taken_tree) ++used;
  }
  if (n.loopback && LoopbackUp() != 0) return kLoopback;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return kNoNewPrivs;
  for (int cap = 0; cap <= n.cap_last; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return kBoundingSet;
  return -1;
}

ALLOT_CHILD_CODE int EnterNativeSandbox(const NativeSandbox& n) {
  // Modes as written (/dev/shm 1777), then the task's umask as it was.
  const mode_t mask = ::umask(0);
  const int err_code = Enter(n);
  const int err = errno;
  ::umask(mask);
  errno = err;
  return err_code;
}

ALLOT_CHILD_CODE int DropAllCapabilities() {
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct header {};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  struct __user_cap_data_struct data[2] {};
  return static_cast<int>(::syscall(SYS_capset, &header, data));
}

std::string NativeSandboxStepName(const NativeSandbox& n, int code) {
  switch (code) {
    case kPrivate: return "making the sandbox's mounts private";
    case kTooManyBinds: return "binding over " + std::to_string(kMaxNativeSandboxBinds) + " paths";
    case kReadOnlyRoot: return "making the host's root read-only";
    case kCgroupNamespace: return "entering a cgroup namespace";
    case kPivot: return "entering the root " + n.pivot_to;
    case kLoopback: return "bringing the loopback up";
    case kNoNewPrivs: return "setting no_new_privs";
    case kBoundingSet: return "dropping the capability bounding set";
  }
  if (code < 0 || static_cast<size_t>(code) >= n.steps.size()) return "setting up the sandbox";
  const MountStep& s = n.steps[static_cast<size_t>(code)];
  switch (s.kind) {
    case MountStep::Kind::kBind:
      return std::string("binding ") + s.source + " onto " + s.target + (s.read_only ? " read-only" : "");
    case MountStep::Kind::kTmpfs: return "mounting a tmpfs (" + s.source + ") on " + s.target;
    case MountStep::Kind::kProc: return "mounting /proc on " + s.target;
    case MountStep::Kind::kDevpts: return "mounting a devpts on " + s.target;
    case MountStep::Kind::kMkdir: return "making the directory " + s.target;
    case MountStep::Kind::kFile: return "making the mount point " + s.target;
    case MountStep::Kind::kSymlink: return "making the link " + s.target + " → " + s.source;
  }
  return "setting up the sandbox";
}

}  // namespace allot
