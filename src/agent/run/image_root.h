// A job's own root filesystem on the node.
//
// Images. A job's `image:` names, on the node, a root filesystem directory ("/srv/images/py"),
// an OCI image layout ("oci:/srv/layouts/py[:tag]") or an OCI archive
// ("oci-archive:/srv/py.tar[:tag]"). An OCI image is unpacked once per node with umoci into a
// content-addressed cache (<cache>/oci/sha256-<manifest digest>/rootfs, made under a temporary
// name and renamed, so a crash never leaves half an image); later tasks reuse it. An archive is
// first extracted into <cache>/archives/. The image's own environment (its config's Env: PATH,
// the CUDA paths of a CUDA base image, …) comes back with the root so the task gets it.
//
// Task roots. The unpacked image is never written: each task gets an overlay of it (the image
// read-only below, a scratch upper layer of its own above) at <scratch>/<task key>/root, in
// which the agent — root, before the sandbox starts — makes every mount point the sandbox will
// bind onto (the driver's files, volumes, the work and checkpoint directories, /dev, /proc,
// /tmp): bubblewrap runs as the tenant's uid and could not make them in an image owned by root.
// Paths are resolved inside the image (openat2 RESOLVE_IN_ROOT), so an image's absolute symlink
// (/lib → /usr/lib, or a hostile /etc → /) can never make the agent write outside it. The root
// is then bound read-only; /tmp is a private tmpfs. Removing the overlay after the task leaves
// the cache as it was.
#pragma once

#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/task_launch.h"
#include "core/status.h"

namespace allot {

struct ImageRef {
  enum class Kind { kDirectory, kOciLayout, kOciArchive };
  Kind kind = Kind::kDirectory;
  std::string path;            // absolute
  std::string tag = "latest";  // OCI only
};

// Parses an image name as a job gives it; InvalidArgument naming the value and the forms.
Result<ImageRef> ParseImageRef(const std::string& image);

struct UnpackedImage {
  std::string rootfs;   // the image's root filesystem (never written)
  EnvList env;          // the image config's Env, in order; empty for a directory
  std::string id;       // "sha256:…" of the manifest, or the directory
};

// REQUIRES: one caller at a time (the agent's main thread).
class ImageCache {
 public:
  ImageCache(std::string dir, std::string umoci = "umoci") : dir_(std::move(dir)), umoci_(std::move(umoci)) {}
  ~ImageCache();
  // The image unpacked (once per node), waiting for it. Fails naming the image and the step:
  // not found, not a layout, no such tag, umoci's refusal (with its output).
  Result<UnpackedImage> Get(const std::string& image);
  // The same without waiting: nullopt while the image is being unpacked beside the caller (an
  // image of gigabytes takes minutes, and the agent's loop must keep heartbeating meanwhile);
  // the result once it is known. The first call starts the unpacking.
  std::optional<Result<UnpackedImage>> Poll(const std::string& image);

 private:
  Result<UnpackedImage> Unpack(const std::string& image) const;
  Result<UnpackedImage> FromLayout(const std::string& image, const std::string& layout, const std::string& tag) const;
  std::string dir_, umoci_;
  std::map<std::string, UnpackedImage> known_;  // by the image name as given
  std::map<std::string, std::future<Result<UnpackedImage>>> unpacking_;
};

// The OCI manifest digest a layout's index gives `tag` ("sha256:…"). Pure: reads index.json's text.
Result<std::string> ManifestDigestFor(const std::string& index_json, const std::string& tag);
// Env of a runtime config (umoci's config.json) or an image config: "process.env" or "config.Env".
EnvList ImageEnv(const std::string& config_json);

// What a task's root must hold before the sandbox binds onto it (absolute in-root paths).
struct MountPoints {
  std::vector<std::string> dirs;
  std::vector<std::string> files;
  // Made only where the image has nothing at that path: in-root path → link target.
  std::vector<std::pair<std::string, std::string>> symlinks;
  // Written (replacing what the image has): in-root path → content.
  std::vector<std::pair<std::string, std::string>> contents;
};

// Mounts an overlay of `rootfs` at <scratch>/root (upper and work dirs beside it), then makes
// `points` in it. Fails naming the path; what was mounted is undone.
Result<std::string> MountTaskRoot(const std::string& rootfs, const std::string& scratch, const MountPoints& points);
// Unmounts <scratch>/root and removes `scratch`. Idempotent.
Status RemoveTaskRoot(const std::string& scratch);

}  // namespace allot
