// What a tenant's private Slurm is (private_slurm.h starts it): a plain spec, its check, and the
// slurm.conf and gres.conf it becomes. Pure: no file is read or written here.
//
// The configuration, as RECIPES.md ("Slurm") found it to work without systemd: each slurmd on
// its own Port= and started with -N <name>; SlurmdParameters=config_overrides so a node may claim
// more CPUs and memory than the host has; GPUs as gres whose File= is a device node per GPU (fake
// ones in tests: mknod c 1 3); proctrack/linuxproc and task/none, which need no cgroup or
// systemd; no accounting.
//
// One cluster may span hosts: every host writes the same node list (each node's NodeAddr and
// Port) and controller (SlurmctldHost=localhost(<address>): slurmctld takes the name "localhost"
// as its own on any host, and everyone else reaches it by the address), and starts only its own
// daemons (a node not `remote`, the controller unless `controller_remote`). gres.conf holds only
// this host's nodes' device files: each slurmd reads its own. Paths differ between hosts (each
// agent's cluster directory), so DebugFlags=NO_CONF_HASH quiets slurmctld's warning about it.
//
// Layout under the spec's `dir` (who owns each part and why: private_slurm.cc):
//   etc/slurm.conf, etc/gres.conf   root 0644
//   munge/                          tenant 0700: munge.key (0400), munged.seed, munged.pid
//   munge-socket/                   tenant 0755: sock (clients of any uid connect)
//   ctld/                           tenant 0700: slurmctld's state and pid file
//   spool/<node>/                   root 0755: slurmd's spool and pid file (this host's nodes)
//   log/                            root 0755: munged.log, slurmctld.log, slurmd-<node>.log
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

struct PrivateSlurmNode {
  std::string name;                    // Slurm's NodeName: a name (core/names.h)
  int gpus = 0;
  int cpus = 1;                        // may exceed the host's (SlurmdParameters=config_overrides)
  int64_t memory_mib = 1024;           // RealMemory
  int port = 0;                        // slurmd's port on `address`, distinct per node
  std::vector<std::string> gpu_files;  // absolute device paths, one per GPU (gres.conf File=); none when remote
  std::string address = "127.0.0.1";   // NodeAddr: where slurmctld and srun reach its slurmd
  bool remote = false;                 // another host's node: its slurmd is started there, not here
};

struct PrivateSlurmSpec {
  std::string cluster;                 // ClusterName and the one partition's name
  std::string dir;                     // absolute; must not exist yet, or be empty
  uid_t uid = 0;                       // the tenant's: SlurmUser, munged's, never 0
  gid_t gid = 0;
  std::string user;                    // the passwd name of `uid`
  int controller_port = 0;             // slurmctld's port on `controller_address`
  std::vector<PrivateSlurmNode> nodes; // at least one
  std::string controller_address = "127.0.0.1";
  bool controller_remote = false;      // slurmctld runs on another host (the cluster's first node)
  // The cluster's munge key, the same on every host (32 to 1024 bytes); "": a fresh random one,
  // for a cluster all on this host.
  std::string munge_key;
};

// InvalidArgument naming the field ("nodes[1].port"), its value and what was expected; Ok
// when the spec can be written as a configuration.
Status CheckPrivateSlurmSpec(const PrivateSlurmSpec& spec);

// The files' text, after CheckPrivateSlurmSpec: slurm.conf and gres.conf (which Slurm reads
// beside slurm.conf; this host's nodes' lines only).
Result<std::string> SlurmConf(const PrivateSlurmSpec& spec);
Result<std::string> GresConf(const PrivateSlurmSpec& spec);


// Paths inside the spec's directory, shared by the configuration and the supervisor. Unix
// sockets live there too (munged's; slurmstepd's in the spool), so the check refuses a `dir`
// too long for them (sun_path holds 107 bytes).
std::string MungeSocketPath(const PrivateSlurmSpec& spec);

}  // namespace allot
