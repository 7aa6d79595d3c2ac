// The device cgroup: which device nodes a task's processes may open, enforced by the kernel on
// every open() whatever the task finds in its /dev or sets in its environment. A task gets the
// harmless defaults every program expects (null, zero, full, random, urandom, tty, console, ptmx,
// pseudo-terminals) plus exactly the nodes of its own GPUs; every other device is refused with
// EPERM. Two kernel interfaces, both written here:
//   cgroup v1: the `devices` controller: "a" into devices.deny, then one "c MAJ:MIN rw" per allowed
//              device into devices.allow.
//   cgroup v2: no file interface. A BPF_PROG_TYPE_CGROUP_DEVICE program generated from the same
//              rules, loaded with the raw bpf() syscall (no libbpf, no clang) and attached to the
//              task's cgroup with BPF_F_ALLOW_MULTI, so an ancestor's program (systemd's, a
//              container runtime's) still runs too: access needs every program's consent.
// On a hybrid host both are applied: the kernel consults the v2 programs and the v1 controller.
// The rules and the program are pure values (tests read them); applying them is the I/O.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

struct DeviceRule {
  char type = 'c';          // 'c' character, 'b' block
  int64_t major = -1;       // -1: any
  int64_t minor = -1;       // -1: any
  std::string access = "rwm";  // of r (read), w (write), m (mknod)
  bool operator==(const DeviceRule&) const = default;
};

// null, zero, full, random, urandom, tty, console, ptmx (rw) and /dev/pts/* (c 136:* rw).
std::vector<DeviceRule> DefaultDeviceRules();

// "c 195:0 rw", "c 136:* rw": the v1 devices.allow form.
std::string DeviceRuleText(const DeviceRule& rule);

// REQUIRES: `devices_dir` is the task's own directory in the v1 devices hierarchy, empty of
// processes. Denies everything, then allows `rules`. Fails naming the file and the refusal.
Status ApplyV1DeviceRules(const std::string& devices_dir, const std::vector<DeviceRule>& rules);

// The cgroup-device program that allows exactly `rules` (returns 1) and refuses the rest (0).
std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules);

// Loaded device programs kept open, one per distinct program: loading runs the kernel's verifier
// (a large share of a short task's start), attaching a loaded program to one more cgroup does
// not. Tasks whose rules are the same (the same GPUs) share one program; tasks whose rules differ
// get their own, since the key is the program's instructions themselves, so a shared program is
// by construction the one each task would have been given alone. At most `capacity` programs are
// held; past it the least recently used is closed (the cgroups it is attached to keep their own
// references, so closing never loosens a running task's confinement). The fds are close-on-exec
// (the kernel makes them so): no task inherits one. Not thread-safe: the runner's one thread owns it.
class DeviceProgramCache {
 public:
  explicit DeviceProgramCache(size_t capacity = 64) : capacity_(capacity) {}
  ~DeviceProgramCache();
  DeviceProgramCache(const DeviceProgramCache&) = delete;
  DeviceProgramCache& operator=(const DeviceProgramCache&) = delete;

  // The loaded program for `rules` (an fd this cache owns), loading it on first use. Fails as
  // AttachV2DeviceProgram's load does.
  Result<int> Program(const std::vector<DeviceRule>& rules);
  size_t size() const { return programs_.size(); }
  // How many programs were loaded (verified by the kernel) over the cache's life.
  int64_t loads() const { return loads_; }

 private:
  struct Entry {
    int fd = -1;
    int64_t last_use = 0;
  };
  size_t capacity_;
  std::map<std::string, Entry> programs_;  // the instructions' bytes → the loaded program
  int64_t loads_ = 0;
  int64_t uses_ = 0;
};

// Loads DeviceProgram(rules) (or takes it from `programs`, loading it there once) and attaches
// it to the v2 cgroup directory `cgroup_dir` (BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI). The
// attachment lives as long as the cgroup: nothing to undo when the task's cgroup is removed.
// Fails naming the step and the kernel's refusal (with the verifier's log when the load is
// refused).
Status AttachV2DeviceProgram(const std::string& cgroup_dir, const std::vector<DeviceRule>& rules,
                             DeviceProgramCache* programs = nullptr);

// The ids of the device programs attached directly to the v2 cgroup `cgroup_dir` (BPF_PROG_QUERY),
// and the id of a loaded program's fd: for tests and diagnostics.
Result<std::vector<uint32_t>> AttachedDeviceProgramIds(const std::string& cgroup_dir);
Result<uint32_t> DeviceProgramId(int program_fd);

}  // namespace allot
