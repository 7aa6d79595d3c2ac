#include "spec/job_environment_reader.h"

#include <algorithm>
#include <set>

#include "core/names.h"
#include "core/quantity.h"

namespace allot {
namespace {

constexpr size_t kMaxImageBytes = 4096;
constexpr size_t kMaxTagBytes = 128;
constexpr size_t kMaxMounts = 32;
constexpr size_t kMaxMountPathBytes = 1024;
constexpr size_t kMaxEnvVars = 128;
constexpr size_t kMaxEnvBytes = 64 * 1024;  // every NAME=value with its terminator, as execve takes them
constexpr size_t kMaxEnvNameBytes = 128;
constexpr int64_t kMaxShmMiB = 1024 * 1024;  // 1Ti

bool HasControlChar(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// [A-Za-z0-9._-]{1,max}
bool IsPlainName(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

// What is wrong with `p` as an absolute path without "." or ".." components; "" when nothing.
// `normal` also refuses empty components ("//") and a trailing "/".
std::string PathProblem(std::string_view p, bool normal) {
  if (HasControlChar(p)) return "has a control character";
  if (p.empty() || p[0] != '/') return "is not absolute";
  size_t start = 1;
  while (start <= p.size()) {
    size_t end = std::min(p.find('/', start), p.size());
    std::string_view part = p.substr(start, end - start);
    if (part == "." || part == "..") return "has a '" + std::string(part) + "' component";
    if (normal && part.empty() && p.size() > 1) return end == p.size() ? "ends in '/'" : "has an empty component ('//')";
    start = end + 1;
  }
  return "";
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

Status ReadImage(const YamlReader& rd, const YAML::Node& n, const std::string& field, std::string& image) {
  auto v = rd.Scalar(n, field);
  if (!v) return v.error();
  const std::string& s = *v;
  const char* expected = "; expected an absolute path on the node: a root filesystem directory, oci:/LAYOUT[:TAG] or "
                         "oci-archive:/FILE.tar[:TAG]";
  if (s.size() > kMaxImageBytes) {
    return rd.Error(n, field, std::to_string(s.size()) + " bytes is too long; expected at most " + std::to_string(kMaxImageBytes));
  }
  std::string_view path = s;
  bool oci = false;
  for (std::string_view prefix : {"oci:", "oci-archive:"}) {
    if (path.substr(0, prefix.size()) == prefix) {
      path.remove_prefix(prefix.size());
      oci = true;
      break;
    }
  }
  // An OCI reference may end in ":TAG": the part after the last ':' when it holds no '/'.
  size_t colon = path.rfind(':');
  if (oci && colon != std::string_view::npos && path.find('/', colon) == std::string_view::npos) {
    std::string_view tag = path.substr(colon + 1);
    if (!IsPlainName(tag, kMaxTagBytes)) {
      return rd.Error(n, field, Quoted(s) + ": the tag '" + std::string(tag) + "' is not valid; expected 1 to " +
                                    std::to_string(kMaxTagBytes) + " of A-Z a-z 0-9 . _ -");
    }
    path = path.substr(0, colon);
  }
  if (std::string why = PathProblem(path, /*normal=*/false); !why.empty()) {
    return rd.Error(n, field, Quoted(s) + ": the path " + why + expected);
  }
  image = s;
  return Status::Ok();
}

// "NAME" (the job's tenant) or "TENANT:NAME" (the job's tenant or an ancestor).
Status ReadVolume(const YamlReader& rd, const YAML::Node& n, const std::string& field, const std::string& tenant,
                  VolumeMount& m) {
  auto v = rd.Scalar(n, field);
  if (!v) return v.error();
  size_t colon = v->rfind(':');
  m.tenant = colon == std::string::npos ? tenant : v->substr(0, colon);
  m.volume = colon == std::string::npos ? *v : v->substr(colon + 1);
  if (!IsValidName(m.volume)) {
    return rd.Error(n, field, "'" + EscapeText(*v) + "': the volume name is not valid; expected NAME or TENANT:NAME, NAME " +
                                  kNameExpected);
  }
  // One answer for a tenant that is not there and one that is not the job's or its ancestor.
  bool own = m.tenant == tenant;
  bool ancestor = !m.tenant.empty() && tenant.size() > m.tenant.size() && tenant.compare(0, m.tenant.size(), m.tenant) == 0 &&
                  tenant[m.tenant.size()] == '/';
  if (!own && !ancestor) {
    return rd.Error(n, field, Quoted(*v) + " is not a volume this job may mount; expected a volume of the job's own tenant (" +
                                  tenant + ") or of one of its ancestors");
  }
  return Status::Ok();
}

Status ReadMounts(const YamlReader& rd, const YAML::Node& n, const std::string& field, const std::string& tenant,
                  std::vector<VolumeMount>& out) {
  if (!n.IsSequence()) return rd.Error(n, field, "expected a list of {volume, path, read_only}");
  if (n.size() > kMaxMounts) {
    return rd.Error(n, field, std::to_string(n.size()) + " mounts are too many; expected at most " + std::to_string(kMaxMounts));
  }
  std::set<std::string> paths;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string item = field + "[" + std::to_string(i) + "]";
    const YAML::Node m = n[i];
    if (Status s = rd.Fields(m, item, {"volume", "path", "read_only"}); !s.ok()) return s;
    if (!m["volume"]) return rd.Error(m, item + ".volume", "required");
    if (!m["path"]) return rd.Error(m, item + ".path", "required");
    VolumeMount mount;
    if (Status s = ReadVolume(rd, m["volume"], item + ".volume", tenant, mount); !s.ok()) return s;
    auto p = rd.Scalar(m["path"], item + ".path");
    if (!p) return p.error();
    std::string why = PathProblem(*p, /*normal=*/true);
    if (why.empty() && *p == "/") why = "is the root";
    if (why.empty() && p->size() > kMaxMountPathBytes) why = "is longer than " + std::to_string(kMaxMountPathBytes) + " bytes";
    for (std::string_view sys : {"/proc", "/dev", "/sys", "/tmp"}) {
      if (why.empty() && p->compare(0, sys.size(), sys) == 0 && (p->size() == sys.size() || (*p)[sys.size()] == '/')) {
        why = "is under " + std::string(sys) + ", which the sandbox provides";
      }
    }
    if (!why.empty()) {
      return rd.Error(m["path"], item + ".path", Quoted(*p) + " " + why +
                                                     "; expected an absolute, normal path such as /data (not /, /proc, /dev, /sys or /tmp)");
    }
    if (!paths.insert(*p).second) {
      return rd.Error(m["path"], item + ".path", Quoted(*p) + " is mounted twice; expected one volume per path");
    }
    mount.path = *p;
    bool ancestors = mount.tenant != tenant;
    mount.read_only = ancestors;
    if (const YAML::Node ro = m["read_only"]) {
      auto b = rd.Scalar(ro, item + ".read_only");
      if (!b) return b.error();
      if (*b != "true" && *b != "false") return rd.Error(ro, item + ".read_only", Quoted(*b) + " is not valid; expected true or false");
      if (ancestors && *b == "false") {
        return rd.Error(ro, item + ".read_only", "false: a volume of an ancestor tenant (" + mount.tenant +
                                                     ") is mounted read-only; expected true or no read_only");
      }
      mount.read_only = *b == "true";
    }
    out.push_back(std::move(mount));
  }
  return Status::Ok();
}

// Variables through which the allocation and the platform reach the task.
bool Reserved(const std::string& name) {
  return name.rfind("ALLOT_", 0) == 0 || name.rfind("CUDA_MPS_", 0) == 0 || name == "CUDA_VISIBLE_DEVICES" ||
         name == "NVIDIA_VISIBLE_DEVICES" || name == "LD_PRELOAD";
}

bool IsEnvName(const std::string& s) {
  if (s.empty() || s.size() > kMaxEnvNameBytes || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Status ReadEnv(const YamlReader& rd, const YAML::Node& n, const std::string& field,
               std::vector<std::pair<std::string, std::string>>& out) {
  if (!n.IsMap()) return rd.Error(n, field, "expected a mapping of NAME: value, such as {HF_HOME: /data/hf}");
  if (n.size() > kMaxEnvVars) {
    return rd.Error(n, field, std::to_string(n.size()) + " variables are too many; expected at most " + std::to_string(kMaxEnvVars));
  }
  size_t bytes = 0;
  for (const auto& kv : n) {
    std::string name = kv.first.as<std::string>();
    std::string item = field + "." + name;
    if (!IsEnvName(name)) {
      return rd.Error(kv.first, item, Quoted(name) + " is not a variable name; expected [A-Za-z_][A-Za-z0-9_]{0,127}");
    }
    if (Reserved(name)) {
      return rd.Error(kv.first, item, Quoted(name) + " is set by allot for the allocation; expected another name (not "
                                                     "ALLOT_*, CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, CUDA_MPS_* or LD_PRELOAD)");
    }
    auto value = rd.Scalar(kv.second, item);
    if (!value) return value.error();
    if (value->find('\0') != std::string::npos) return rd.Error(kv.second, item, "has a NUL byte; expected text without one");
    bytes += name.size() + value->size() + 2;
    out.emplace_back(std::move(name), std::move(*value));
  }
  if (bytes > kMaxEnvBytes) {
    return rd.Error(n, field, std::to_string(bytes) + " bytes in all is too much; expected at most " + std::to_string(kMaxEnvBytes));
  }
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].first == out[i - 1].first) {
      return rd.Error(n, field + "." + out[i].first, "is given twice; expected each name once");
    }
  }
  return Status::Ok();
}

Status ReadShmSize(const YamlReader& rd, const YAML::Node& n, const std::string& field, const JobSpec& spec, int64_t& mib) {
  auto v = rd.Quantity(n, field, ParseMemoryMiB);
  if (!v) return v.error();
  if (*v <= 0 || *v > kMaxShmMiB) return rd.Error(n, field, Quoted(n.Scalar()) + " is out of range; expected more than 0, at most 1Ti");
  for (size_t i = 0; i < spec.groups.size(); ++i) {
    int64_t memory = spec.groups[i].memory;
    if (memory > 0 && *v > memory) {
      return rd.Error(n, field, Quoted(n.Scalar()) + " is more than the memory of a task (" + FormatMemoryMiB(memory) +
                                    "); expected at most that, since /dev/shm is counted in it");
    }
  }
  mib = *v;
  return Status::Ok();
}

}  // namespace

Status ReadJobEnvironment(const YamlReader& rd, const YAML::Node& n, const std::string& path, const std::string& tenant,
                          JobSpec& spec) {
  JobEnvironment& e = spec.environment;
  for (const char* key : {"image", "mounts", "env", "shm_size"}) {
    if (n[key] && spec.command.empty()) {
      return rd.Error(n[key], path + "." + key, "only a job with a command runs on a node; expected a command, or no " + std::string(key));
    }
  }
  if (n["image"]) {
    if (Status s = ReadImage(rd, n["image"], path + ".image", e.image); !s.ok()) return s;
  }
  if (n["mounts"]) {
    if (Status s = ReadMounts(rd, n["mounts"], path + ".mounts", tenant, e.mounts); !s.ok()) return s;
  }
  if (n["env"]) {
    if (Status s = ReadEnv(rd, n["env"], path + ".env", e.env); !s.ok()) return s;
  }
  if (n["shm_size"]) {
    if (Status s = ReadShmSize(rd, n["shm_size"], path + ".shm_size", spec, e.shm_size_mib); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace allot
