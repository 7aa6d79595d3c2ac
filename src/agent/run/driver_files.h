// The NVIDIA driver's user-space files on this host, which a task with its own root filesystem
// (an image) needs to talk to the host's kernel driver: the libraries the driver installed
// (libcuda, libnvidia-ml, the JIT compilers, NVENC/NVDEC, …), found by name in the host's linker
// cache (`ldconfig -p`), and its tools (nvidia-smi, the MPS binaries), found in PATH. They are
// bound read-only into the task's root at the same paths (image_root.h); a task on the host's
// own root already sees them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace allot {

struct DriverFiles {
  std::vector<std::string> libraries;  // absolute paths as the linker cache lists them; sorted
  std::vector<std::string> binaries;   // absolute paths; sorted
  bool operator==(const DriverFiles&) const = default;
};

// The driver's 64-bit libraries in `ldconfig -p` output (32-bit entries are left out).
std::vector<std::string> DriverLibrariesIn(std::string_view ldconfig_p);

// Runs `<ldconfig> -p` and looks the driver's tools up in `path` (a PATH value). A host without
// the driver gives empty lists, not an error; an ldconfig that cannot run is one.
Result<DriverFiles> FindDriverFiles(const std::string& ldconfig, const std::string& path);

}  // namespace allot
