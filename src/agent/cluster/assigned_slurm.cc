#include "agent/cluster/assigned_slurm.h"

#include <algorithm>

namespace allot {
namespace {

constexpr int64_t kUnknownMemoryMib = 1024;  // a member whose memory allotd does not know

PrivateSlurmSpec Common(const ClusterAssignment& a, const SlurmHost& host) {
  PrivateSlurmSpec spec;
  spec.cluster = "allot-" + a.key();
  spec.dir = host.dir;
  spec.uid = static_cast<uid_t>(host.uid);
  spec.gid = static_cast<gid_t>(host.uid);
  spec.user = host.user;
  spec.munge_key = a.munge_key;
  return spec;
}

}  // namespace

Result<PrivateSlurmSpec> AssignedSlurmSpec(const ClusterAssignment& a, const SlurmHost& host) {
  PrivateSlurmSpec spec = Common(a, host);
  const int local_gpus = static_cast<int>(host.gpu_files.size());
  if (a.members.size() <= 1) {
    // This node alone, on loopback.
    PrivateSlurmNode n;
    n.name = host.node;
    n.gpus = local_gpus;
    n.gpu_files = host.gpu_files;
    n.cpus = host.cpus;
    n.memory_mib = host.memory_mib;
    n.port = a.slurmd_port;
    spec.controller_port = a.slurmctld_port;
    if (a.members.size() == 1) {
      const ClusterMember& m = a.members.front();
      if (m.node != host.node)
        return Err(InvalidArgument("members[0].node: '" + m.node + "' is not this node '" + host.node + "'"));
      n.port = m.slurmd_port;
      spec.controller_port = a.controller_port;
    }
    spec.nodes.push_back(std::move(n));
    return spec;
  }
  auto here = std::find_if(a.members.begin(), a.members.end(), [&](const ClusterMember& m) { return m.node == host.node; });
  if (here == a.members.end()) {
    return Err(InvalidArgument("members: this node '" + host.node + "' is not one of the window's " +
                               std::to_string(a.members.size()) + " nodes"));
  }
  if (here->gpus != local_gpus) {
    return Err(InvalidArgument("members[" + std::to_string(here - a.members.begin()) + "].gpus: " +
                               std::to_string(here->gpus) + " GPUs, but this node has " + std::to_string(local_gpus) +
                               " GPU device files; expected the node's own count"));
  }
  for (const ClusterMember& m : a.members) {
    PrivateSlurmNode n;
    n.name = m.node;
    n.gpus = m.gpus;
    n.cpus = std::max(1, m.cpus);
    n.memory_mib = m.memory_mib > 0 ? m.memory_mib : kUnknownMemoryMib;
    n.port = m.slurmd_port;
    n.address = m.address;
    n.remote = m.node != host.node;
    if (!n.remote) n.gpu_files = host.gpu_files;
    spec.nodes.push_back(std::move(n));
  }
  spec.controller_address = a.controller_host;
  spec.controller_port = a.controller_port;
  spec.controller_remote = a.members.front().node != host.node;
  return spec;
}

}  // namespace allot
