#include "agent/node/job_environment.h"

#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace allot {
namespace {

bool ValidVolume(const std::string& v) {
  if (v.empty() || v.size() > 64 || v == "." || v == "..") return false;
  for (char c : v)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

// Directories the dynamic loader searches without being told (glibc's defaults on x86-64 and
// arm64, Debian's multiarch ones included).
bool LoaderDefault(const std::string& dir) {
  static const std::set<std::string> kDefaults = {"/lib", "/usr/lib", "/lib64", "/usr/lib64",
                                                   "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                   "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"};
  return kDefaults.count(dir) > 0;
}

// The links and files that make the driver's libraries findable in a foreign root: libcuda.so
// beside libcuda.so.1 (what NVIDIA's toolkit adds), and the libraries' directories for ldconfig.
// Returns the directories ld.so would not search: it reads the image's own /etc/ld.so.cache and
// its default directories at run time, never ld.so.conf.d, so a driver kept elsewhere
// (/usr/local/nvidia/lib64 on the H100 VM where this was seen) is found only through
// LD_LIBRARY_PATH, as GKE's nodes and NVIDIA's CUDA images have it.
std::string DriverExtras(const DriverFiles& driver, TaskLaunch& l) {
  std::set<std::string> dirs, names;
  for (const std::string& lib : driver.libraries) {
    dirs.insert(fs::path(lib).parent_path().string());
    names.insert(lib);
  }
  for (const std::string& lib : driver.libraries) {
    const fs::path p(lib);
    if (p.filename() == "libcuda.so.1" && !names.count((p.parent_path() / "libcuda.so").string()))
      l.image_links.emplace_back((p.parent_path() / "libcuda.so").string(), "libcuda.so.1");
  }
  std::string conf, search;
  for (const std::string& d : dirs) {
    conf += d + "\n";
    if (!LoaderDefault(d)) search += (search.empty() ? "" : ":") + d;
  }
  if (!conf.empty()) l.image_files.emplace_back("/etc/ld.so.conf.d/000-allot-nvidia.conf", conf);
  return search;
}

}  // namespace

bool TenantWithin(const std::string& tenant, const std::string& owner) {
  return tenant == owner || (tenant.size() > owner.size() && tenant.compare(0, owner.size(), owner) == 0 &&
                             tenant[owner.size()] == '/');
}

Status ApplyJobEnvironment(const Assignment& a, const JobEnvironmentContext& ctx, TaskLaunch& l) {
  EnvList head;
  std::string driver_search;  // directories of the driver's libraries for LD_LIBRARY_PATH
  if (!a.image.empty()) {
    if (ctx.images == nullptr) return FailedPrecondition("image '" + a.image + "': this node runs no images");
    auto image = ctx.images->Get(a.image);
    if (!image) return image.error();
    l.image_rootfs = image->rootfs;
    head = image->env;
    if (ctx.driver != nullptr) {
      for (const std::string& f : ctx.driver->libraries) l.read_only_binds.emplace_back(f, f);
      for (const std::string& f : ctx.driver->binaries) l.read_only_binds.emplace_back(f, f);
      driver_search = DriverExtras(*ctx.driver, l);
    }
  }
  for (size_t i = 0; i < a.mounts.size(); ++i) {
    const Assignment::Mount& m = a.mounts[i];
    const std::string field = "mounts[" + std::to_string(i) + "]";
    if (ctx.storage_root.empty())
      return FailedPrecondition(field + ".volume '" + m.volume + "': this node has no --storage-root");
    if (!ValidVolume(m.volume)) return InvalidArgument(field + ".volume '" + m.volume + "': expected 1-64 of [A-Za-z0-9._-]");
    if (m.path.empty() || m.path[0] != '/' || fs::path(m.path).lexically_normal().string() != m.path || m.path == "/")
      return InvalidArgument(field + ".path '" + m.path + "': expected an absolute, normal path other than /");
    if (!TenantWithin(a.tenant, m.tenant))
      return Status(Code::kPermissionDenied, field + ".volume '" + m.tenant + ":" + m.volume + "': a job of '" + a.tenant +
                              "' may mount only its own tenant's volumes and its ancestors'");
    // On the host's root, bubblewrap can make a mount point only at the top level (its own
    // tmpfs root); deeper ones must exist. An image's root gets every mount point made.
    const fs::path at(m.path);
    std::error_code exists_ec;
    if (a.image.empty() && at.parent_path() != "/" && !fs::is_directory(at, exists_ec))
      return FailedPrecondition(field + ".path '" + m.path + "': without an image a volume goes at a new top-level "
                                "directory (e.g. /data) or at a directory this node has");
    const bool own = m.tenant == a.tenant;
    const std::string host = ctx.storage_root + "/" + SafeFileName(m.tenant) + "/" + m.volume;
    std::error_code ec;
    if (own && !m.read_only) fs::create_directories(host, ec);
    if (!fs::is_directory(host, ec))
      return NotFound(field + ".volume '" + m.tenant + ":" + m.volume + "': no such volume on this node (" + host + ")");
    // Another tenant's (an ancestor's) volume is always read-only here, whatever was asked.
    if (own && !m.read_only) l.writable_binds.emplace_back(host, m.path);
    else l.read_only_binds.emplace_back(host, m.path);
  }
  for (const auto& [name, value] : a.env) head.emplace_back(name, value);
  if (!driver_search.empty()) {  // after the image's and the job's own search path, the last of the name
    std::string own;
    for (const auto& [name, value] : head)
      if (name == "LD_LIBRARY_PATH") own = value;
    head.emplace_back("LD_LIBRARY_PATH", own.empty() ? driver_search : own + ":" + driver_search);
  }
  l.env.insert(l.env.begin(), head.begin(), head.end());
  l.shm_size_mib = a.shm_size_mib;
  return Status::Ok();
}

}  // namespace allot
