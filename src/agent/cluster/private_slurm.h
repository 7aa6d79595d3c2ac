// A tenant's own Slurm on booked nodes for a reservation window (issue 16, "dedicated clusters à
// la carte"): this host's part of it. A private munged (with the cluster's shared key, or a fresh
// one for a cluster all on this host), slurmctld when the controller is here, and a slurmd for
// each of this host's nodes, each node on its own port (RECIPES.md, "Slurm"); the other hosts'
// agents start theirs from the same spec with `remote` turned around. Nothing of the host's own
// Slurm or munge is used: every path is under the spec's directory and every client finds the
// cluster through SLURM_CONF.
//
// Who runs what: munged and slurmctld as the tenant's uid (SlurmUser, so the tenant administers
// its cluster), slurmd as root (it starts each job step as the user who submitted it). The
// tenant's uid must have a passwd entry: Slurm refuses a SlurmUser it cannot look up.
//
// The directory is laid out as slurm_conf.h says; Start makes it, Stop removes it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "agent/cluster/slurm_conf.h"
#include "agent/run/spawn.h"
#include "core/status.h"

namespace allot {

struct PrivateSlurmOptions {
  // Where munged, slurmctld, slurmd, sinfo, squeue and scancel are looked up; the daemons' PATH.
  std::string path = kTaskPath;
  int64_t munge_ready_ms = 5000;       // munged's socket must appear within this
  int64_t daemon_stop_ms = 5000;       // after SIGTERM, a daemon still running is SIGKILLed
  int64_t command_timeout_ms = 10000;  // each sinfo, squeue, scancel
};

// Not thread-safe: one owner calls it (the agent's reconcile loop, a test).
class PrivateSlurm {
 public:
  PrivateSlurm(PrivateSlurmSpec spec, PrivateSlurmOptions options = {});
  ~PrivateSlurm();  // Stop(0) when still running
  PrivateSlurm(const PrivateSlurm&) = delete;
  PrivateSlurm& operator=(const PrivateSlurm&) = delete;

  // Writes the configuration and the munge key, then starts munged (waiting for its socket),
  // slurmctld (unless controller_remote) and the slurmd of every node not remote. REQUIRES: root
  // (slurmd runs as root; munged and slurmctld are started as the tenant). On any failure what
  // was started is stopped and the directory removed.
  Status Start();
  // Polls sinfo until the nodes are idle: every node when the controller is here, this host's
  // nodes otherwise (as the controller sees them). Unavailable when `timeout_ms` passes first or
  // a daemon exits, naming the nodes not up and the tail of each local one's log (and
  // slurmctld's).
  Status WaitReady(int64_t timeout_ms);
  // With the controller here: sends running jobs SIGTERM, gives them `grace_ms` to end and kills
  // what is left. With it elsewhere: waits (at most the grace and the controller's kill time) for
  // the jobs on this host's nodes to leave, the controller's agent signalling them. Then stops the
  // daemons (SIGTERM, SIGKILL after options.daemon_stop_ms), kills any process still carrying
  // this cluster's SLURM_CONF (a slurmstepd, a job step) and removes the directory. Safe to call
  // twice, before Start and after a failed Start. The error names what could not be done.
  Status Stop(int64_t grace_ms);

  // What the tenant is handed: SLURM_CONF, the controller's address, how to run sinfo and srun.
  std::string LoginDetails() const;

  const PrivateSlurmSpec& spec() const { return spec_; }
  std::string ConfPath() const { return spec_.dir + "/etc/slurm.conf"; }
  std::string LogPath(const std::string& daemon) const { return spec_.dir + "/log/" + daemon + ".log"; }
  // The daemons' pids while they run: munged, slurmctld, then the slurmds in node order.
  std::vector<pid_t> DaemonPids() const;

 private:
  struct Daemon {
    std::string name;  // "munged", "slurmctld", "slurmd-<node>": its log's name
    pid_t pid = -1;
  };

  Status Prepare();
  enum class RunAs { kRoot, kTenant };
  Status StartDaemon(const std::string& name, std::vector<std::string> argv, RunAs as);
  Status WaitForMungeSocket();
  // The daemon that has exited, if any (reaped), with how it ended.
  Status CheckDaemonsAlive();
  Status CancelJobs(int64_t grace_ms);
  void WaitForJobsToLeave(int64_t grace_ms);
  Status StopDaemons();
  Result<std::string> Client(const std::vector<std::string>& argv) const;
  std::string LogTail(const std::string& daemon) const;

  PrivateSlurmSpec spec_;
  PrivateSlurmOptions options_;
  std::vector<Daemon> daemons_;
  bool made_dir_ = false;  // Start created spec_.dir: Stop removes it
};

}  // namespace allot
