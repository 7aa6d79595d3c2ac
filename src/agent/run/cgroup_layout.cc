#include "agent/run/cgroup_layout.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "agent/run/sys_files.h"
#include "core/strings.h"

namespace allot {
namespace {

struct Mount {
  std::string dir;
  std::vector<std::string> options;
};

std::string JoinPath(const std::string& mount, const std::string& rel) {
  if (rel.empty() || rel == "/") return mount;
  return mount + (rel.front() == '/' ? "" : "/") + rel;
}

// /proc/self/mounts escapes spaces and tabs in paths as octal (\040).
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool octal = s[i] == '\\' && i + 3 < s.size();
    for (size_t k = 1; octal && k <= 3; ++k) octal = s[i + k] >= '0' && s[i + k] <= '7';
    if (octal) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

const char* CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kNone: return "none";
    case CgroupMode::kV1: return "v1";
    case CgroupMode::kV2: return "v2";
    case CgroupMode::kHybrid: return "hybrid";
  }
  return "?";
}

std::string CgroupLayout::Describe() const {
  auto or_none = [](const std::string& s) { return s.empty() ? std::string("(none)") : s; };
  switch (mode) {
    case CgroupMode::kNone:
      return "cgroups: none mounted; tasks run without cpu, memory or pids limits";
    case CgroupMode::kV2:
      return "cgroups: v2 at " + v2 + " (cpu.max, memory.max, pids.max, memory.events, cgroup.kill)";
    case CgroupMode::kV1:
      return "cgroups: v1 (cpu " + or_none(cpu) + ", memory " + or_none(memory) + ", pids " +
             or_none(pids) + ", freezer " + or_none(freezer) + "; kill by freeze and SIGKILL)";
    case CgroupMode::kHybrid:
      return "cgroups: hybrid, limits through v1 (cpu " + or_none(cpu) + ", memory " + or_none(memory) +
             ", pids " + or_none(pids) + "), tree kill through v2 " + v2 + "/cgroup.kill";
  }
  return "cgroups: ?";
}

CgroupLayout ParseCgroupLayout(std::string_view mounts, std::string_view self_cgroup) {
  std::string v2_mount;
  std::vector<Mount> v1_mounts;
  std::istringstream in{std::string(mounts)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string source, dir, type, options;
    if (!(fields >> source >> dir >> type >> options)) continue;
    if (type == "cgroup2") {
      if (v2_mount.empty()) v2_mount = Unescape(dir);
    } else if (type == "cgroup") {
      v1_mounts.push_back({Unescape(dir), Split(options, ',')});
    }
  }

  std::string v2_path;
  std::map<std::string, std::string> v1_paths;  // controller → path inside its hierarchy
  std::istringstream cg{std::string(self_cgroup)};
  while (std::getline(cg, line)) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) v2_path = path;
    else
      for (const std::string& c : Split(controllers, ',')) v1_paths[c] = path;
  }

  CgroupLayout out;
  auto v1_dir = [&](const std::string& controller) -> std::string {
    for (const Mount& m : v1_mounts)
      for (const std::string& o : m.options)
        if (o == controller) {
          auto it = v1_paths.find(controller);
          return JoinPath(m.dir, it == v1_paths.end() ? "/" : it->second);
        }
    return "";
  };
  out.cpu = v1_dir("cpu");
  out.memory = v1_dir("memory");
  out.pids = v1_dir("pids");
  out.freezer = v1_dir("freezer");
  out.devices = v1_dir("devices");
  bool any_v1 = !(out.cpu.empty() && out.memory.empty() && out.pids.empty() && out.freezer.empty());
  if (!v2_mount.empty()) out.v2 = JoinPath(v2_mount, v2_path);
  if (!v2_mount.empty() && any_v1) out.mode = CgroupMode::kHybrid;
  else if (!v2_mount.empty()) out.mode = CgroupMode::kV2;
  else if (any_v1) out.mode = CgroupMode::kV1;
  return out;
}

CgroupLayout DetectCgroups() {
  auto mounts = ReadText("/proc/self/mounts");
  auto self = ReadText("/proc/self/cgroup");
  if (!mounts || !self) return {};
  CgroupLayout layout = ParseCgroupLayout(*mounts, *self);
  // Inside a cgroup namespace /proc/self/cgroup may name a path the mount does not show.
  auto fallback = [](std::string& dir, const std::string& mount_hint) {
    if (!dir.empty() && !Exists(dir)) dir = mount_hint;
  };
  CgroupLayout roots = ParseCgroupLayout(*mounts, "");
  fallback(layout.v2, roots.v2);
  fallback(layout.cpu, roots.cpu);
  fallback(layout.memory, roots.memory);
  fallback(layout.pids, roots.pids);
  fallback(layout.freezer, roots.freezer);
  fallback(layout.devices, roots.devices);
  return layout;
}

}  // namespace allot
