#include "agent/run/device_cgroup.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/run/sys_files.h"

namespace allot {
namespace {

// The instruction forms the program needs (the kernel's BPF_* macros are not exported to user
// space headers in a usable form).
bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}
bpf_insn LoadWord(uint8_t dst, uint8_t src, int16_t off) { return Insn(BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0); }
bpf_insn Mov32(uint8_t dst, uint8_t src) { return Insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0); }
bpf_insn MovImm(uint8_t dst, int32_t imm) { return Insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
bpf_insn And32(uint8_t dst, int32_t imm) { return Insn(BPF_ALU | BPF_AND | BPF_K, dst, 0, 0, imm); }
bpf_insn Rsh32(uint8_t dst, int32_t imm) { return Insn(BPF_ALU | BPF_RSH | BPF_K, dst, 0, 0, imm); }
bpf_insn JumpIfNot(uint8_t dst, int32_t imm, int16_t off) { return Insn(BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm); }
bpf_insn Exit() { return Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

// Registers: r1 the context; r2 access_type; r3 device type; r4 access wanted; r5 major; r6 minor.
constexpr uint8_t kCtx = 1, kAccessType = 2, kType = 3, kAccess = 4, kMajor = 5, kMinor = 6, kScratch = 7;

int32_t AccessBits(const std::string& access) {
  int32_t bits = 0;
  for (char c : access) {
    if (c == 'r') bits |= BPF_DEVCG_ACC_READ;
    if (c == 'w') bits |= BPF_DEVCG_ACC_WRITE;
    if (c == 'm') bits |= BPF_DEVCG_ACC_MKNOD;
  }
  return bits;
}

constexpr int32_t kAllAccess = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;

long Bpf(int cmd, bpf_attr* attr) { return ::syscall(SYS_bpf, cmd, attr, sizeof(*attr)); }

}  // namespace

std::vector<DeviceRule> DefaultDeviceRules() {
  return {
      {'c', 1, 3, "rw"},   // /dev/null
      {'c', 1, 5, "rw"},   // /dev/zero
      {'c', 1, 7, "rw"},   // /dev/full
      {'c', 1, 8, "rw"},   // /dev/random
      {'c', 1, 9, "rw"},   // /dev/urandom
      {'c', 5, 0, "rw"},   // /dev/tty
      {'c', 5, 1, "rw"},   // /dev/console
      {'c', 5, 2, "rw"},   // /dev/ptmx
      {'c', 136, -1, "rw"},  // /dev/pts/*
  };
}

std::string DeviceRuleText(const DeviceRule& r) {
  auto num = [](int64_t v) { return v < 0 ? std::string("*") : std::to_string(v); };
  return std::string(1, r.type) + " " + num(r.major) + ":" + num(r.minor) + " " + r.access;
}

Status ApplyV1DeviceRules(const std::string& dir, const std::vector<DeviceRule>& rules) {
  if (Status s = WriteText(dir + "/devices.deny", "a", IfMissing::kFail); !s.ok()) return s;
  // The kernel takes one rule per write(2); the file is opened once for all of them.
  const std::string allow = dir + "/devices.allow";
  int fd = ::open(allow.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Unavailable("opening " + allow + ": " + ErrnoText(errno));
  Status status;
  for (const DeviceRule& r : rules) {
    const std::string text = DeviceRuleText(r);
    ssize_t n;
    do n = ::write(fd, text.data(), text.size());
    while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(text.size())) {
      status = Unavailable("writing '" + text + "' to " + allow + ": " + (n < 0 ? ErrnoText(errno) : "short write"));
      break;
    }
  }
  ::close(fd);
  return status;
}

std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules) {
  // The context is struct bpf_cgroup_dev_ctx {u32 access_type; u32 major; u32 minor;}, where
  // access_type = access << 16 | device type.
  std::vector<bpf_insn> p = {
      LoadWord(kAccessType, kCtx, 0), Mov32(kType, kAccessType),   And32(kType, 0xffff),
      Mov32(kAccess, kAccessType),    Rsh32(kAccess, 16),          LoadWord(kMajor, kCtx, 4),
      LoadWord(kMinor, kCtx, 8),
  };
  // One block per rule: every test that fails jumps past the block's end to the next rule.
  for (const DeviceRule& r : rules) {
    std::vector<bpf_insn> block;
    std::vector<size_t> jumps;
    auto test = [&](uint8_t reg, int32_t value) {
      jumps.push_back(block.size());
      block.push_back(JumpIfNot(reg, value, 0));
    };
    test(kType, r.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
    if (r.major >= 0) test(kMajor, static_cast<int32_t>(r.major));
    if (r.minor >= 0) test(kMinor, static_cast<int32_t>(r.minor));
    const int32_t allowed = AccessBits(r.access);
    if (allowed != kAllAccess) {  // the access wanted must hold no bit outside the allowed ones
      block.push_back(Mov32(kScratch, kAccess));
      block.push_back(And32(kScratch, ~allowed & kAllAccess));
      test(kScratch, 0);
    }
    block.push_back(MovImm(0, 1));
    block.push_back(Exit());
    for (size_t j : jumps) block[j].off = static_cast<int16_t>(block.size() - j - 1);
    p.insert(p.end(), block.begin(), block.end());
  }
  p.push_back(MovImm(0, 0));
  p.push_back(Exit());
  return p;
}

namespace {

// Loads `program` (BPF_PROG_LOAD); its fd, or the kernel's refusal with the verifier's log.
Result<int> LoadDeviceProgram(const std::vector<bpf_insn>& program) {
  static const char kLicense[] = "Apache-2.0";
  auto load = [&](char* log, uint32_t log_size) {
    bpf_attr attr{};
    attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    attr.insns = reinterpret_cast<uint64_t>(program.data());
    attr.insn_cnt = static_cast<uint32_t>(program.size());
    attr.license = reinterpret_cast<uint64_t>(kLicense);
    if (log != nullptr) {
      attr.log_level = 1;
      attr.log_buf = reinterpret_cast<uint64_t>(log);
      attr.log_size = log_size;
    }
    return static_cast<int>(Bpf(BPF_PROG_LOAD, &attr));
  };
  int prog = load(nullptr, 0);
  if (prog < 0 && errno == EPERM) {
    // Kernels before 5.11 charge BPF programs to RLIMIT_MEMLOCK.
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    ::setrlimit(RLIMIT_MEMLOCK, &unlimited);
    prog = load(nullptr, 0);
  }
  if (prog < 0) {
    const int load_errno = errno;
    std::string log(1 << 16, '\0');
    if (int again = load(log.data(), static_cast<uint32_t>(log.size())); again < 0) {
      log.resize(std::strlen(log.c_str()));
    } else {
      ::close(again);
      log.clear();
    }
    return Err(Unavailable("loading the device cgroup program (bpf BPF_PROG_LOAD): " + ErrnoText(load_errno) +
                           (log.empty() ? "" : "; verifier: " + log)));
  }
  return prog;
}

std::string ProgramKey(const std::vector<bpf_insn>& program) {
  return std::string(reinterpret_cast<const char*>(program.data()), program.size() * sizeof(bpf_insn));
}

}  // namespace

DeviceProgramCache::~DeviceProgramCache() {
  for (auto& [key, entry] : programs_) ::close(entry.fd);
}

Result<int> DeviceProgramCache::Program(const std::vector<DeviceRule>& rules) {
  const std::vector<bpf_insn> program = DeviceProgram(rules);
  std::string key = ProgramKey(program);
  if (auto it = programs_.find(key); it != programs_.end()) {
    it->second.last_use = ++uses_;
    return it->second.fd;
  }
  auto fd = LoadDeviceProgram(program);
  if (!fd) return fd;
  ++loads_;
  if (programs_.size() >= capacity_ && !programs_.empty()) {
    auto oldest = programs_.begin();
    for (auto it = programs_.begin(); it != programs_.end(); ++it)
      if (it->second.last_use < oldest->second.last_use) oldest = it;
    ::close(oldest->second.fd);
    programs_.erase(oldest);
  }
  programs_.emplace(std::move(key), Entry{*fd, ++uses_});
  return *fd;
}

Status AttachV2DeviceProgram(const std::string& cgroup_dir, const std::vector<DeviceRule>& rules,
                             DeviceProgramCache* programs) {
  auto prog = programs != nullptr ? programs->Program(rules) : LoadDeviceProgram(DeviceProgram(rules));
  if (!prog) return prog.error();
  const bool owned = programs == nullptr;  // a cached program stays open for the next task
  int cgroup = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) {
    const int e = errno;
    if (owned) ::close(*prog);
    return Unavailable("opening cgroup " + cgroup_dir + ": " + ErrnoText(e));
  }
  bpf_attr attr{};
  attr.target_fd = static_cast<uint32_t>(cgroup);
  attr.attach_bpf_fd = static_cast<uint32_t>(*prog);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  long r = Bpf(BPF_PROG_ATTACH, &attr);
  const int e = errno;
  ::close(cgroup);
  if (owned) ::close(*prog);  // the attachment holds its own reference
  // A cgroup left from a task's earlier life may hold this very program already (the kernel
  // refuses attaching one program twice, EINVAL or EEXIST by version): then its rules are in
  // force, which is what was asked. Read back, not inferred from the errno.
  if (r != 0 && !owned) {
    auto attached = AttachedDeviceProgramIds(cgroup_dir);
    auto id = DeviceProgramId(*prog);
    if (attached && id && std::find(attached->begin(), attached->end(), *id) != attached->end()) r = 0;
  }
  if (r != 0) return Unavailable("attaching the device cgroup program to " + cgroup_dir + ": " + ErrnoText(e));
  return Status::Ok();
}

Result<std::vector<uint32_t>> AttachedDeviceProgramIds(const std::string& cgroup_dir) {
  int cgroup = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) return Err(Unavailable("opening cgroup " + cgroup_dir + ": " + ErrnoText(errno)));
  std::vector<uint32_t> ids(64);
  bpf_attr attr{};
  attr.query.target_fd = static_cast<uint32_t>(cgroup);
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = reinterpret_cast<uint64_t>(ids.data());
  attr.query.prog_cnt = static_cast<uint32_t>(ids.size());
  const long r = Bpf(BPF_PROG_QUERY, &attr);
  const int e = errno;
  ::close(cgroup);
  if (r != 0) return Err(Unavailable("querying the device programs of " + cgroup_dir + ": " + ErrnoText(e)));
  ids.resize(attr.query.prog_cnt);
  return ids;
}

Result<uint32_t> DeviceProgramId(int program_fd) {
  bpf_prog_info info{};
  bpf_attr attr{};
  attr.info.bpf_fd = static_cast<uint32_t>(program_fd);
  attr.info.info_len = sizeof(info);
  attr.info.info = reinterpret_cast<uint64_t>(&info);
  if (Bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) != 0)
    return Err(Unavailable("reading a device program's id: " + ErrnoText(errno)));
  return info.id;
}

}  // namespace allot
