#include "agent/run/driver_files.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "agent/run/command.h"
#include "core/strings.h"

namespace allot {
namespace {

// The driver's library family, as NVIDIA's container toolkit lists it (utility, compute, video).
constexpr std::string_view kLibraries[] = {
    "libcuda.so",          "libcudadebugger.so",    "libnvidia-ml.so",         "libnvidia-cfg.so",
    "libnvidia-ptxjitcompiler.so", "libnvidia-nvvm.so", "libnvidia-gpucomp.so", "libnvidia-opencl.so",
    "libnvidia-allocator.so", "libnvidia-compiler.so", "libnvidia-fatbinaryloader.so", "libnvidia-pkcs11.so",
    "libnvidia-encode.so", "libnvcuvid.so",         "libnvidia-opticalflow.so",
};
constexpr std::string_view kBinaries[] = {"nvidia-smi", "nvidia-debugdump", "nvidia-cuda-mps-control",
                                          "nvidia-cuda-mps-server"};

std::string Trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

bool InFamily(std::string_view name) {
  return std::any_of(std::begin(kLibraries), std::end(kLibraries), [&](std::string_view lib) {
    return name.size() >= lib.size() && name.compare(0, lib.size(), lib) == 0 &&
           (name.size() == lib.size() || name[lib.size()] == '.');
  });
}

}  // namespace

std::vector<std::string> DriverLibrariesIn(std::string_view text) {
  // "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1"
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    const size_t paren = line.find(" (");
    const size_t close = line.find(')', paren);
    const size_t arrow = line.find(" => ", close);
    if (paren == std::string::npos || close == std::string::npos || arrow == std::string::npos) continue;
    const std::string name = Trim(line.substr(0, paren));
    const std::string abi = line.substr(paren + 2, close - paren - 2);
    const std::string path = Trim(line.substr(arrow + 4));
    if (abi == "libc6" || path.empty() || path[0] != '/') continue;  // "libc6" alone: a 32-bit library
    if (InFamily(name)) out.push_back(path);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<DriverFiles> FindDriverFiles(const std::string& ldconfig, const std::string& path) {
  CommandSpec spec;
  spec.argv = {ldconfig, "-p"};
  spec.keep_output = 4 << 20;
  auto r = RunCommand(spec);
  if (!r) return Err(Status(r.error().code(), "--ldconfig: " + r.error().message()));
  if (r->exit_code != 0)
    return Err(Unavailable("--ldconfig: '" + ldconfig + " -p' " + DescribeEnd(*r, spec.timeout_ms)));
  DriverFiles files;
  files.libraries = DriverLibrariesIn(r->output_tail);
  for (std::string_view bin : kBinaries) {
    for (const std::string& dir : Split(path, ':')) {
      if (dir.empty() || dir[0] != '/') continue;
      const std::string candidate = dir + "/" + std::string(bin);
      if (::access(candidate.c_str(), X_OK) == 0) {
        files.binaries.push_back(candidate);
        break;
      }
    }
  }
  std::sort(files.binaries.begin(), files.binaries.end());
  return files;
}

}  // namespace allot
