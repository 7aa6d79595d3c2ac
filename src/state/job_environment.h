// What a command job's tasks run in on a node: a root filesystem, tenants' volumes mounted into
// it, variables added to the environment and the size of /dev/shm. Submission validates it
// (sim/job_environment_reader.cc); the journal keeps it with the job's spec and allotd hands it
// to the node agents as it is (server/agent_wire.h). Empty for a job without a command.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace allot {

struct VolumeMount {
  std::string tenant;  // the volume's tenant, its full path ("research"): the job's or an ancestor's
  std::string volume;  // the volume's name within that tenant
  std::string path;    // where the task sees it: absolute, lexically normal
  bool read_only = false;
  bool operator==(const VolumeMount&) const = default;
};

struct JobEnvironment {
  // "" none; else as the job gave it: a root filesystem directory on the node,
  // "oci:/layout[:tag]" or "oci-archive:/file.tar[:tag]".
  std::string image;
  std::vector<VolumeMount> mounts;
  std::vector<std::pair<std::string, std::string>> env;  // name → value, sorted by name
  int64_t shm_size_mib = 0;                              // 0: the sandbox's default

  bool empty() const { return image.empty() && mounts.empty() && env.empty() && shm_size_mib == 0; }
  bool operator==(const JobEnvironment&) const = default;
};

}  // namespace allot
