// What a tenant's private Slurm is (private_slurm.h starts it): a plain spec, its check, and the
// slurm.conf and gres.conf it becomes. Pure: no file is read or written here.
//
// The configuration, as RECIPES.md ("Slurm") found it to work on one host without systemd:
// controller and nodes on 127.0.0.1, each slurmd on its own Port= and started with -N <name>;
// SlurmdParameters=config_overrides so a node may claim more CPUs and memory than the host
// has; GPUs as gres whose File= is a device node per GPU (fake ones in tests: mknod c 1 3);
// proctrack/linuxproc and task/none, which need no cgroup or systemd; no accounting.
//
// Layout under the spec's `dir` (who owns each part and why: private_slurm.cc):
//   etc/slurm.conf, etc/gres.conf   root 0644
//   munge/                          tenant 0700: munge.key (0400), munged.seed, munged.pid
//   munge-socket/                   tenant 0755: sock (clients of any uid connect)
//   ctld/                           tenant 0700: slurmctld's state and pid file
//   spool/<node>/                   root 0755: slurmd's spool and pid file
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
  int port = 0;                        // slurmd's port on 127.0.0.1, distinct per node
  std::vector<std::string> gpu_files;  // absolute device paths, one per GPU (gres.conf File=)
};

struct PrivateSlurmSpec {
  std::string cluster;                 // ClusterName and the one partition's name
  std::string dir;                     // absolute; must not exist yet, or be empty
  uid_t uid = 0;                       // the tenant's: SlurmUser, munged's, never 0
  gid_t gid = 0;
  std::string user;                    // the passwd name of `uid`
  int controller_port = 0;             // slurmctld's port on 127.0.0.1
  std::vector<PrivateSlurmNode> nodes; // at least one
};

// InvalidArgument naming the field ("nodes[1].port"), its value and what was expected; Ok
// when the spec can be written as a configuration.
Status CheckPrivateSlurmSpec(const PrivateSlurmSpec& spec);

// The files' text, pure: slurm.conf and gres.conf (which Slurm reads beside slurm.conf).
Result<std::string> SlurmConf(const PrivateSlurmSpec& spec);
Result<std::string> GresConf(const PrivateSlurmSpec& spec);

// InvalidArgument naming the field ("nodes[1].port"), its value and what was expected; Ok
// when the spec can be written as a configuration.
Status CheckPrivateSlurmSpec(const PrivateSlurmSpec& spec);

// The files' text, after CheckPrivateSlurmSpec.
Result<std::string> SlurmConf(const PrivateSlurmSpec& spec);
Result<std::string> GresConf(const PrivateSlurmSpec& spec);

// Paths inside the spec's directory, shared by the configuration and the supervisor. Unix
// sockets live there too (munged's; slurmstepd's in the spool), so the check refuses a `dir`
// too long for them (sun_path holds 107 bytes).
std::string MungeSocketPath(const PrivateSlurmSpec& spec);

}  // namespace allot
