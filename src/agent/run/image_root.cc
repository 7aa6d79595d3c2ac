#include "agent/run/image_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/run/command.h"
#include "agent/run/sys_files.h"
#include "core/strings.h"

namespace fs = std::filesystem;

namespace allot {
namespace {

using Json = nlohmann::json;

bool ValidTag(const std::string& t) {
  if (t.empty() || t.size() > 128) return false;
  for (char c : t)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// `rel` (no leading '/') resolved with `root` as "/": symlinks, absolute or not, stay inside.
int OpenIn(int root, const std::string& rel, uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root, rel.empty() ? "." : rel.c_str(), &how, sizeof how));
}

// Makes the directory `path` (absolute, in-root) and its parents; returns an O_PATH fd of it.
Result<int> MakeDirIn(int root, const std::string& path) {
  std::string rel;
  for (const std::string& part : Split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return Err(InvalidArgument("mount point '" + path + "': '..' is not allowed"));
    Fd parent(OpenIn(root, rel, O_PATH | O_DIRECTORY));
    if (parent.fd < 0) return Err(Unavailable("opening " + rel + " in the image: " + ErrnoText(errno)));
    if (::mkdirat(parent.fd, part.c_str(), 0755) != 0 && errno != EEXIST)
      return Err(Unavailable("making " + path + " in the image: " + ErrnoText(errno)));
    rel += (rel.empty() ? "" : "/") + part;
  }
  int fd = OpenIn(root, rel, O_PATH | O_DIRECTORY);
  if (fd < 0) return Err(Unavailable("mount point " + path + " in the image is not a directory: " + ErrnoText(errno)));
  return fd;
}

// The parent directory of `path` (made) and the last component.
Result<std::pair<int, std::string>> ParentIn(int root, const std::string& path) {
  fs::path p(path);
  auto dir = MakeDirIn(root, p.parent_path().string());
  if (!dir) return Err(dir.error());
  return std::pair{*dir, p.filename().string()};
}

Status WriteIn(int root, const std::string& path, const std::string* content) {
  auto parent = ParentIn(root, path);
  if (!parent) return parent.error();
  Fd dir(parent->first);
  const std::string& name = parent->second;
  struct stat st {};
  if (::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (content == nullptr && S_ISREG(st.st_mode)) return Status::Ok();  // a mount point already
    if (S_ISDIR(st.st_mode)) return FailedPrecondition("mount point " + path + ": the image has a directory there");
    // A symlink (an image's stub driver library, say) or a file being replaced: the host's wins.
    if (::unlinkat(dir.fd, name.c_str(), 0) != 0) return Unavailable("replacing " + path + " in the image: " + ErrnoText(errno));
  }
  Fd f(::openat(dir.fd, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (f.fd < 0) return Unavailable("making " + path + " in the image: " + ErrnoText(errno));
  if (content != nullptr && ::write(f.fd, content->data(), content->size()) != static_cast<ssize_t>(content->size()))
    return Unavailable("writing " + path + " in the image: " + ErrnoText(errno));
  return Status::Ok();
}

Status SymlinkIn(int root, const std::string& path, const std::string& target) {
  auto parent = ParentIn(root, path);
  if (!parent) return parent.error();
  Fd dir(parent->first);
  struct stat st {};
  if (::fstatat(dir.fd, parent->second.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return Status::Ok();
  if (::symlinkat(target.c_str(), dir.fd, parent->second.c_str()) != 0)
    return Unavailable("linking " + path + " in the image: " + ErrnoText(errno));
  return Status::Ok();
}

}  // namespace

Result<ImageRef> ParseImageRef(const std::string& image) {
  ImageRef ref;
  std::string rest = image;
  auto prefixed = [&](const char* prefix, ImageRef::Kind kind) {
    const std::string p = prefix;
    if (rest.rfind(p, 0) != 0) return false;
    ref.kind = kind;
    rest = rest.substr(p.size());
    return true;
  };
  const bool oci = prefixed("oci:", ImageRef::Kind::kOciLayout) || prefixed("oci-archive:", ImageRef::Kind::kOciArchive);
  if (oci) {
    const size_t colon = rest.rfind(':');
    if (colon != std::string::npos && rest.find('/', colon) == std::string::npos) {
      ref.tag = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      if (!ValidTag(ref.tag))
        return Err(InvalidArgument("image '" + image + "': tag '" + ref.tag + "': expected 1-128 of [A-Za-z0-9._-]"));
    }
  }
  if (rest.empty() || rest[0] != '/' || fs::path(rest).lexically_normal().string() != rest ||
      rest.find_first_of(",:\\") != std::string::npos)
    return Err(InvalidArgument("image '" + image + "': expected an absolute, normal path without ',', ':' or '\\' (a root "
                               "filesystem directory), oci:/layout[:tag] or oci-archive:/file.tar[:tag]"));
  ref.path = rest;
  return ref;
}

Result<std::string> ManifestDigestFor(const std::string& index_json, const std::string& tag) {
  Json index = Json::parse(index_json, nullptr, false);
  if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array())
    return Err(InvalidArgument("index.json: expected an OCI image index with a manifests list"));
  std::vector<std::string> tags;
  for (const Json& m : index["manifests"]) {
    std::string name = m.contains("annotations") ? m["annotations"].value("org.opencontainers.image.ref.name", "") : "";
    if (name == tag && m.contains("digest") && m["digest"].is_string()) return m["digest"].get<std::string>();
    if (!name.empty()) tags.push_back(name);
  }
  std::string known;
  for (const std::string& t : tags) known += (known.empty() ? "" : ", ") + t;
  return Err(NotFound("tag '" + tag + "' is not in the layout" + (known.empty() ? "" : " (it has " + known + ")")));
}

EnvList ImageEnv(const std::string& config_json) {
  EnvList env;
  Json c = Json::parse(config_json, nullptr, false);
  const Json* list = nullptr;
  if (c.is_object() && c.contains("process") && c["process"].is_object() && c["process"].contains("env"))
    list = &c["process"]["env"];
  else if (c.is_object() && c.contains("config") && c["config"].is_object() && c["config"].contains("Env"))
    list = &c["config"]["Env"];
  if (list == nullptr || !list->is_array()) return env;
  for (const Json& e : *list) {
    if (!e.is_string()) continue;
    const std::string s = e.get<std::string>();
    const size_t eq = s.find('=');
    if (eq != std::string::npos && eq > 0) env.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return env;
}

ImageCache::~ImageCache() {
  for (auto& [image, f] : unpacking_) f.wait();
}

Result<UnpackedImage> ImageCache::Get(const std::string& image) {
  for (;;) {
    auto r = Poll(image);
    if (r) return *r;
    unpacking_.at(image).wait();
  }
}

std::optional<Result<UnpackedImage>> ImageCache::Poll(const std::string& image) {
  if (auto it = known_.find(image); it != known_.end()) return Result<UnpackedImage>(it->second);
  auto it = unpacking_.find(image);
  if (it == unpacking_.end()) {
    auto ref = ParseImageRef(image);
    if (!ref) return Result<UnpackedImage>(Err(ref.error()));
    if (ref->kind == ImageRef::Kind::kDirectory) {  // nothing to unpack
      auto got = Unpack(image);
      if (got) known_[image] = *got;
      return got;
    }
    it = unpacking_.emplace(image, std::async(std::launch::async, [this, image] { return Unpack(image); })).first;
  }
  if (it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
  Result<UnpackedImage> got = it->second.get();
  unpacking_.erase(it);
  if (got) known_[image] = *got;  // a failure is not kept: the next task tries again
  return got;
}

Result<UnpackedImage> ImageCache::Unpack(const std::string& image) const {
  auto ref = ParseImageRef(image);
  if (!ref) return Err(ref.error());
  Result<UnpackedImage> got = Err(Internal("unreachable"));
  if (ref->kind == ImageRef::Kind::kDirectory) {
    if (!fs::is_directory(ref->path))
      return Err(NotFound("image '" + image + "': no such directory on this node"));
    got = UnpackedImage{ref->path, {}, ref->path};
  } else if (ref->kind == ImageRef::Kind::kOciLayout) {
    got = FromLayout(image, ref->path, ref->tag);
  } else {
    // An archive: extracted once, named by its path, size and time (the rootfs below is keyed
    // by the manifest digest, so two archives of one image share it).
    std::error_code ec;
    if (!fs::is_regular_file(ref->path, ec)) return Err(NotFound("image '" + image + "': no such file on this node"));
    const auto stamp = fs::last_write_time(ref->path, ec).time_since_epoch().count();
    const std::string key = std::to_string(std::hash<std::string>{}(ref->path + "|" + std::to_string(fs::file_size(ref->path, ec)) +
                                                                    "|" + std::to_string(stamp)));
    const std::string layout = dir_ + "/archives/" + key;
    if (!fs::exists(layout + "/index.json")) {
      const std::string tmp = layout + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(std::hash<std::string>{}(image));
      fs::remove_all(tmp, ec);
      fs::create_directories(tmp, ec);
      CommandSpec tar;
      tar.argv = {"tar", "-xf", ref->path, "-C", tmp};
      tar.timeout_ms = 600000;
      auto r = RunCommand(tar);
      if (!r || r->exit_code != 0) {
        fs::remove_all(tmp, ec);
        return Err(Unavailable("image '" + image + "': extracting the archive: " +
                               (r ? DescribeEnd(*r, tar.timeout_ms) + ": " + r->output_tail : r.error().message())));
      }
      fs::rename(tmp, layout, ec);
      if (ec) return Err(Unavailable("image '" + image + "': " + ec.message()));
    }
    got = FromLayout(image, layout, ref->tag);
  }
  return got;
}

Result<UnpackedImage> ImageCache::FromLayout(const std::string& image, const std::string& layout,
                                             const std::string& tag) const {
  auto index = ReadText(layout + "/index.json");
  if (!index) return Err(NotFound("image '" + image + "': " + layout + " is not an OCI image layout (no index.json)"));
  auto digest = ManifestDigestFor(*index, tag);
  if (!digest) return Err(Status(digest.error().code(), "image '" + image + "': " + digest.error().message()));
  std::string hex = *digest;
  for (char& c : hex)
    if (c == ':') c = '-';
  const std::string bundle = dir_ + "/oci/" + hex;
  if (!fs::exists(bundle + "/rootfs")) {
    std::error_code ec;
    const std::string tmp = bundle + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(std::hash<std::string>{}(image));
    fs::remove_all(tmp, ec);
    fs::create_directories(fs::path(tmp).parent_path(), ec);
    CommandSpec umoci;
    umoci.argv = {umoci_, "unpack", "--image", layout + ":" + tag, tmp};
    if (::geteuid() != 0) umoci.argv.insert(umoci.argv.begin() + 2, "--rootless");
    umoci.timeout_ms = 600000;
    auto r = RunCommand(umoci);
    if (!r || r->exit_code != 0) {
      fs::remove_all(tmp, ec);
      return Err(Unavailable("image '" + image + "': umoci unpack: " +
                             (r ? DescribeEnd(*r, umoci.timeout_ms) + ": " + r->output_tail : r.error().message())));
    }
    ::chmod(tmp.c_str(), 0755);  // the tenants' uids must reach the rootfs
    fs::rename(tmp, bundle, ec);
    if (ec) return Err(Unavailable("image '" + image + "': " + ec.message()));
  }
  auto config = ReadText(bundle + "/config.json");
  return UnpackedImage{bundle + "/rootfs", config ? ImageEnv(*config) : EnvList{}, *digest};
}

Result<std::string> MountTaskRoot(const std::string& rootfs, const std::string& scratch, const MountPoints& points) {
  if (rootfs.find_first_of(",:\\") != std::string::npos || scratch.find_first_of(",:\\") != std::string::npos)
    return Err(InvalidArgument("image root " + rootfs + " or " + scratch + ": ',', ':' and '\\' cannot be mounted"));
  const std::string upper = scratch + "/upper", work = scratch + "/work", root = scratch + "/root";
  std::error_code ec;
  for (const std::string& d : {upper, work, root}) fs::create_directories(d, ec);
  if (ec) return Err(Unavailable("making " + scratch + ": " + ec.message()));
  ::chmod(scratch.c_str(), 0755);
  const std::string options = "lowerdir=" + rootfs + ",upperdir=" + upper + ",workdir=" + work;
  if (::mount("overlay", root.c_str(), "overlay", MS_NODEV | MS_NOSUID, options.c_str()) != 0)
    return Err(Unavailable("mounting the image's overlay at " + root + ": " + ErrnoText(errno) +
                           (errno == EPERM ? " (a job with an image needs the agent to run as root)" : "")));
  auto fail = [&](Status s) -> Result<std::string> {
    RemoveTaskRoot(scratch);
    return Err(std::move(s));
  };
  Fd top(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (top.fd < 0) return fail(Unavailable("opening " + root + ": " + ErrnoText(errno)));
  for (const std::string& d : points.dirs) {
    auto fd = MakeDirIn(top.fd, d);
    if (!fd) return fail(fd.error());
    ::close(*fd);
  }
  for (const std::string& f : points.files)
    if (Status s = WriteIn(top.fd, f, nullptr); !s.ok()) return fail(s);
  for (const auto& [path, target] : points.symlinks)
    if (Status s = SymlinkIn(top.fd, path, target); !s.ok()) return fail(s);
  for (const auto& [path, content] : points.contents)
    if (Status s = WriteIn(top.fd, path, &content); !s.ok()) return fail(s);
  return root;
}

Status RemoveTaskRoot(const std::string& scratch) {
  const std::string root = scratch + "/root";
  if (::umount2(root.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return Unavailable("unmounting " + root + ": " + ErrnoText(errno));
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (ec) return Unavailable("removing " + scratch + ": " + ec.message());
  return Status::Ok();
}

}  // namespace allot
