// The private Slurm an assignment asks this node's agent to run (wire/cluster_messages.h): this
// host's part of the window's cluster, as a PrivateSlurmSpec. Pure.
//
// From an allotd that sends the window's members, every booked node's agent builds the same
// node list, controller and munge key, so all write the same slurm.conf but for their own paths;
// each marks the other nodes `remote`, and all but the first node's agent the controller. A
// one-node window stays on loopback (its address need not resolve: nothing leaves the host).
// From an older allotd (no members), a Slurm of this node alone, as before: its own slurmctld on
// the assignment's slurmctld port and a fresh munge key.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "agent/cluster/slurm_conf.h"
#include "core/status.h"
#include "wire/cluster_messages.h"

namespace allot {

// What the agent knows of its own node and the tenant here.
struct SlurmHost {
  std::string node;                    // this agent's node (--node)
  std::string dir;                     // the cluster's Slurm directory here
  uid_t uid = 0;                       // the tenant's uid on this node (its gid is the same)
  std::string user;                    // its passwd name
  std::vector<std::string> gpu_files;  // this node's GPU device files, by index
  int cpus = 1;                        // --cpu and --memory: only for an assignment without members
  int64_t memory_mib = 1024;
};

// InvalidArgument naming the field when the assignment does not hold this node, or holds it with
// another GPU count than this node's device files.
Result<PrivateSlurmSpec> AssignedSlurmSpec(const ClusterAssignment& a, const SlurmHost& host);

}  // namespace allot
